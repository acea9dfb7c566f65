#!/bin/sh
# Written by bench/run_net_cpu.sh: mpirun's rsh agent. "rsh_agent.sh HOST COMMAND..."
# runs COMMAND through sh in network namespace HOST, with HOST as hostname.
host=$1
shift
case "$host" in
rnc-4658-h0 | rnc-4658-h1) ;;
*) echo "rsh_agent.sh: $host is not a namespace of this run" >&2; exit 255 ;;
esac
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$1" && shift && eval "$*"' rsh_agent "$host" "$@"
