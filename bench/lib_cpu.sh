# shellcheck shell=bash
# Shared by the CPU benchmark scripts (run_cpu_baseline.sh, run_net_cpu.sh):
# sourced, not run. The caller sets SCRIPT (its name, for messages) and
# defines say(); run_one also uses OUT, TIMEOUT and FAILED.

# ensure_openmpi INSTALL MPICC: installs openmpi-bin and libopenmpi-dev with
# apt-get when MPICC or mpirun is missing (as root, or through sudo); with
# INSTALL=0 it refuses instead. Exits the script on failure.
ensure_openmpi() {
    local install=$1 mpicc=$2
    command -v "$mpicc" >/dev/null && command -v mpirun >/dev/null && return 0
    if [ "$install" != 1 ]; then
        echo "$SCRIPT: mpicc or mpirun is missing and --no-install was given (apt-get install openmpi-bin libopenmpi-dev)" >&2
        exit 1
    fi
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || { echo "$SCRIPT: mpicc or mpirun is missing; installing Open MPI needs root or sudo" >&2; exit 1; }
        sudo=(sudo)
    fi
    say "mpicc or mpirun is missing: installing openmpi-bin and libopenmpi-dev with apt-get ${sudo[*]:+(through sudo)}"
    export DEBIAN_FRONTEND=noninteractive
    if ! "${sudo[@]}" apt-get install -y openmpi-bin libopenmpi-dev; then
        say "apt-get install failed; updating the package lists and trying again"
        "${sudo[@]}" apt-get update
        "${sudo[@]}" apt-get install -y openmpi-bin libopenmpi-dev
    fi
    if ! command -v "$mpicc" >/dev/null || ! command -v mpirun >/dev/null; then
        echo "$SCRIPT: Open MPI installed, but mpicc or mpirun is still not on PATH" >&2
        exit 1
    fi
}

# describe_machine ROOT COMPILER: what machine.txt holds.
describe_machine() {
    local root=$1 compiler=$2 commit
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x$(nproc) (online cores)"
    echo "memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel: $(uname -sr)"
    # shellcheck disable=SC1091
    echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "compiler: $($compiler --version | head -1)"
    echo "open mpi: $(ompi_info --version 2>/dev/null | head -1)"
    if commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
        git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit (with local changes)"
    else
        commit=unknown
    fi
    echo "symcomm commit: $commit"
    echo "SYMCOMM_* environment: $(env | grep '^SYMCOMM_' | tr '\n' ' ')"
}

# Percent of all CPU time that was not idle during one second (from /proc/stat).
# Not the load average: that decays over minutes, and would mostly show our own
# previous run.
cpu_busy() {
    local a b
    a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
    echo "$a $b" | awk '{ busy = $3 - $1; idle = $4 - $2; printf "%d", (busy + idle) ? 100 * busy / (busy + idle) : 0 }'
}

# run_one NAME SHOWN COMMAND...: runs COMMAND under a timeout (TIMEOUT s), its
# output to the screen and to OUT/NAME.txt; SHOWN is the command as
# OUT/commands.txt records it. A failure sets FAILED=1.
run_one() {
    local name=$1 shown=$2
    shift 2
    echo "$shown" >>"$OUT/commands.txt"
    # Other work on the machine shows in the figures (np 2 spins on both cores):
    # keep how busy the CPUs were just before each run, and the load averages,
    # beside them.
    echo "$name: CPUs $(cpu_busy)% busy in the second before; load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/load.txt"
    say "$name: $shown"
    local rc=0
    timeout -k 10 "$TIMEOUT" "$@" 2>&1 | tee "$OUT/$name.txt" || rc=${PIPESTATUS[0]}
    if [ "$rc" != 0 ]; then
        echo "$SCRIPT: $name exited with status $rc$([ "$rc" = 124 ] && echo " (timed out after $TIMEOUT s)")" >&2
        # shellcheck disable=SC2034  # read by the caller
        FAILED=1
    fi
}
