#!/usr/bin/env bash
# symcomm-run --hosts H --netns: each simulated host is a network namespace of its
# own, joined to the others by a bridge (issue 10, item 6).
#   bash tests/scripts/test_netns.sh CASE [BUILD]     (or with $B set, as tests/run.sh does)
# CASE:
#   addresses  every rank is in its host's namespace: one address per host, all
#              distinct, in one /24 with the root on the bridge's address; the
#              interface the library is told to use (and lo without --netns)
#   tcp        a TCP connection from a rank of host 0 to a listener of a rank of
#              host 1, checked byte by byte, arriving from host 0's address
#   comm       communicators initialize and split across the namespaces, the root
#              (bootstrap) on the bridge's address
#   link_down  a link taken down inside host 1's namespace: a connection to it fails
#   cleanup    nothing of a job left after a normal exit, a failing rank, --timeout,
#              SIGTERM and SIGINT; after a SIGKILL of symcomm-run, the next job
#              removes what the dead one left
#   refusals   without root, --netns fails at once with exit 2 and a sentence that
#              says so, making nothing (as nobody through setpriv when root);
#              --netns without --hosts, and with too many hosts, are usage errors
# Needs root and network namespaces, except for refusals; elsewhere the case says
# SKIP and why. Traffic goes only to addresses of the job's own namespaces.
set -u
case_name=${1:?usage: test_netns.sh CASE [BUILD]}
B=${B:-${2:-build}}
RUN=$B/bin/symcomm-run
[ -x "$RUN" ] || { echo "FAIL: $RUN is missing (build with make tests)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/symcomm-netns-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done
  exit 1
}
ok() { echo "ok:   $*"; }

need_netns() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: --netns needs root, and this runs as uid $(id -u)"
    exit 0
  fi
  command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] ||
    fail "ip (iproute2) is missing (make check installs it: tests/need_tools.sh)"
  if ! why=$(unshare --net true 2>&1); then
    echo "SKIP: network namespaces are not permitted here: $why"
    exit 0
  fi
  command -v python3 >/dev/null || fail "python3 is missing (make check installs it: tests/need_tools.sh)"
}
IP=$(command -v ip || echo /usr/sbin/ip)
RANKS=$(cd "$(dirname "$0")" && pwd)/netns_ranks.py

# The rank's view, one line: rank host namespace ifname address root-address pid.
cat >"$tmp/whoami.sh" <<'EOF'
ns=$(ip netns identify $$)
addr=$(ip -4 -o addr show dev "$SYMCOMM_SOCKET_IFNAME" 2>/dev/null | awk '{print $4}')
echo "rank $SYMCOMM_RANK host ${SYMCOMM_HOSTID:--} ns ${ns:--} if $SYMCOMM_SOCKET_IFNAME addr ${addr:--} root $SYMCOMM_ADDR pid $$"
EOF

# The job's tag, from the namespace names its ranks printed.
job_tag() { grep -o 'ns symcomm-[0-9a-f]*-h' "$1" | head -n 1 | sed 's/ns symcomm-//; s/-h$//'; }

# Nothing of job `tag` left: namespaces, bridge, veth ports, lock file.
expect_gone() {
  local tag=$1 what=$2 left
  [ -n "$tag" ] || fail "$what: no rank printed its namespace"
  left=$( { ls /run/netns 2>/dev/null | grep "^symcomm-$tag-"; "$IP" -o link show |
            awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^(sc$tag-|scbr-$tag$)";
            ls /run/symcomm-run 2>/dev/null | grep "^$tag"; } )
  [ -z "$left" ] || fail "$what: left behind: $(echo $left)"
}

# No rank process of a finished job still alive (its pids from whoami lines).
expect_no_process() {
  local p
  for p in $(awk '/^rank / {print $NF}' "$1"); do
    [ -e "/proc/$p" ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] &&
      fail "$2: rank process $p is still alive"
  done
  return 0
}

case_addresses() {
  need_netns
  "$RUN" -n 6 --hosts 3 --netns --timeout 60 -- bash "$tmp/whoami.sh" >"$tmp/a.out" 2>"$tmp/a.err" ||
    fail "addresses: symcomm-run exited $?"
  [ "$(grep -c '^rank ' "$tmp/a.out")" -eq 6 ] || fail "addresses: not 6 ranks reported"
  python3 - "$tmp/a.out" <<'EOF' || fail "addresses: see above"
import ipaddress, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("rank ")]
hosts = {}
for r in rows:
    f = dict(zip(r[0::2], r[1::2]))
    host = int(f["host"])
    want = {"rank": int(f["rank"]), "ns": f["ns"], "if": f["if"], "addr": f["addr"]}
    if f["if"] != "sc-h%d" % host:
        sys.exit("rank %s of host %d was told interface %s" % (f["rank"], host, f["if"]))
    if not f["ns"].startswith("symcomm-") or not f["ns"].endswith("-h%d" % host):
        sys.exit("rank %s of host %d runs in namespace %s" % (f["rank"], host, f["ns"]))
    prev = hosts.setdefault(host, want)
    if (prev["ns"], prev["addr"]) != (want["ns"], want["addr"]):
        sys.exit("ranks %d and %d of host %d differ: %s / %s" % (prev["rank"], want["rank"], host, prev, want))
    root = f["root"]
if sorted(hosts) != [0, 1, 2]:
    sys.exit("hosts seen: %s" % sorted(hosts))
addrs = [ipaddress.ip_interface(hosts[h]["addr"]) for h in range(3)]
if len({a.ip for a in addrs}) != 3 or len({hosts[h]["ns"] for h in range(3)}) != 3:
    sys.exit("hosts share an address or a namespace: %s" % hosts)
net = addrs[0].network
root_ip = ipaddress.ip_address(root.rsplit(":", 1)[0])
if net.prefixlen != 24 or any(a.network != net for a in addrs) or root_ip not in net or \
   root_ip in {a.ip for a in addrs} or root_ip.is_loopback or not net.is_private:
    sys.exit("addresses %s, root %s: not one private /24 with the root apart" % (addrs, root))
print("hosts %s in %s, root %s" % ([str(a.ip) for a in addrs], net, root))
EOF
  ok "addresses: one namespace and address per host, root on the bridge: $(python3 - "$tmp/a.out" <<'EOF'
import sys
print(" ".join(sorted({l.split()[5] + "=" + l.split()[9] for l in open(sys.argv[1]) if l.startswith("rank ")})))
EOF
)"
  expect_gone "$(job_tag "$tmp/a.out")" "addresses"

  # Without --netns: loopback, as before; a user's choice wins either way.
  "$RUN" -n 2 --hosts 2 -- sh -c 'echo "if=$SYMCOMM_SOCKET_IFNAME ns=$(readlink /proc/self/ns/net)"' >"$tmp/lo.out" 2>&1 ||
    fail "--hosts without --netns: exit $?"
  [ "$(grep -c -F -x "if=lo ns=$(readlink /proc/self/ns/net)" "$tmp/lo.out")" -eq 2 ] ||
    fail "--hosts without --netns: not lo in this namespace: $(cat "$tmp/lo.out")"
  SYMCOMM_SOCKET_IFNAME=mine "$RUN" -n 2 --hosts 2 --netns -- sh -c 'echo "if=$SYMCOMM_SOCKET_IFNAME"' >"$tmp/mine.out" 2>&1 ||
    fail "user's SYMCOMM_SOCKET_IFNAME with --netns: exit $?"
  [ "$(grep -c '^if=mine$' "$tmp/mine.out")" -eq 2 ] || fail "the user's SYMCOMM_SOCKET_IFNAME was replaced: $(cat "$tmp/mine.out")"
  "$RUN" -n 2 -- sh -c 'echo "if=${SYMCOMM_SOCKET_IFNAME-unset}"' >"$tmp/one.out" 2>&1 || fail "one host: exit $?"
  [ "$(grep -c '^if=unset$' "$tmp/one.out")" -eq 2 ] || fail "without --hosts SYMCOMM_SOCKET_IFNAME got set: $(cat "$tmp/one.out")"
  ok "without --netns: lo in this namespace; without --hosts: unset; the user's value kept"
}

case_tcp() {
  need_netns
  "$RUN" -n 4 --hosts 2 --netns --timeout 60 -- bash -c '
    case $SYMCOMM_RANK in
      0) exec python3 "$0" tcp-connect "$1" ;;
      2) exec python3 "$0" tcp-listen "$1" ;;
    esac' "$RANKS" "$tmp" >"$tmp/tcp.out" 2>"$tmp/tcp.err" || fail "tcp: symcomm-run exited $?"
  grep -q "bytes from rank 0 at .* checked" "$tmp/tcp.out" || fail "tcp: the listener did not check the data"
  ok "tcp: $(grep -- '->' "$tmp/tcp.out")"
}

case_comm() {
  need_netns
  SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=BOOT "$RUN" -n 4 --hosts 2 --netns --timeout 100 -- \
    "$B/tests/mp/test_comm_basic" 2 2 >"$tmp/comm.out" 2>"$tmp/comm.err" || fail "comm 2x2: symcomm-run exited $?"
  grep -q "passed on 4 ranks" "$tmp/comm.out" || fail "comm 2x2: no result"
  root=$(grep -o 'root listening on [0-9.]*:' "$tmp/comm.err" | head -n 1 | sed 's/.* on //; s/:$//')
  case "$root" in ''|127.*) fail "comm 2x2: the root listened on '$root', not the bridge" ;; esac
  grep -q "new root at [0-9.]*:[0-9]* on sc-h1 " "$tmp/comm.err" ||
    fail "comm 2x2: no split root on host 1's interface"
  ok "comm: test_comm_basic on 2 namespaces x 2 ranks, root at $root, split roots on the veths"
  "$RUN" -n 5 --hosts 3 --netns --timeout 100 -- "$B/tests/mp/test_comm_basic" 3 1 >"$tmp/comm3.out" 2>"$tmp/comm3.err" ||
    fail "comm 3 hosts: symcomm-run exited $?"
  ok "comm: test_comm_basic on 3 namespaces with 1 and 2 ranks"
  "$RUN" -n 16 --hosts 2 --netns --timeout 100 -- "$B/tests/mp/test_tp_dp" >"$tmp/tpdp.out" 2>"$tmp/tpdp.err" ||
    fail "tp_dp 2x8: symcomm-run exited $?"
  ok "comm: test_tp_dp on 2 namespaces x 8 ranks"
}

case_link_down() {
  need_netns
  "$RUN" -n 2 --hosts 2 --netns --timeout 60 -- bash -c '
    [ $SYMCOMM_RANK = 1 ] && exec python3 "$0" link-listen "$1"; exec python3 "$0" link-connect "$1"' \
    "$RANKS" "$tmp" >"$tmp/link.out" 2>"$tmp/link.err" || fail "link_down: symcomm-run exited $?"
  grep -q "^connector: before: b'pong ping 0'; after host 1's link went down: " "$tmp/link.out" ||
    fail "link_down: no failed connection reported"
  ok "link_down: $(grep '^connector' "$tmp/link.out")"
}

# Starts a job in the background whose ranks print whoami and sleep; waits until
# all N have printed. Sets job_pid.
start_sleeping_job() { # N OUT [env-wrapper...]
  local n=$1 out=$2
  shift 2
  "$@" "$RUN" -n "$n" --hosts 2 --netns -- bash -c 'bash "$0"; exec sleep 30' "$tmp/whoami.sh" >"$out" 2>"${out%.out}.err" &
  job_pid=$!
  for _ in $(seq 300); do
    [ "$(grep -c '^rank ' "$out")" -eq "$n" ] && return 0
    sleep 0.05
  done
  fail "$out: the job did not start"
}

case_cleanup() {
  need_netns
  local rc tag
  "$RUN" -n 3 --hosts 2 --netns -- bash "$tmp/whoami.sh" >"$tmp/normal.out" 2>&1 || fail "normal: exit $?"
  expect_gone "$(job_tag "$tmp/normal.out")" "normal exit"
  ok "cleanup: normal exit, nothing left"

  "$RUN" -n 4 --hosts 2 --netns -- bash -c 'bash "$0"; [ $SYMCOMM_RANK = 3 ] && { sleep 0.3; exit 3; }; exec sleep 30' \
    "$tmp/whoami.sh" >"$tmp/failing.out" 2>&1
  rc=$?
  [ $rc -eq 3 ] || fail "failing rank: symcomm-run exited $rc, not 3"
  expect_gone "$(job_tag "$tmp/failing.out")" "failing rank"
  expect_no_process "$tmp/failing.out" "failing rank"
  ok "cleanup: a rank exits 3, symcomm-run exits 3, nothing left"

  "$RUN" -n 4 --hosts 2 --netns --timeout 1 -- bash -c 'bash "$0"; exec sleep 30' "$tmp/whoami.sh" >"$tmp/timeout.out" 2>&1
  rc=$?
  [ $rc -eq 124 ] || fail "timeout: symcomm-run exited $rc, not 124"
  expect_gone "$(job_tag "$tmp/timeout.out")" "--timeout"
  expect_no_process "$tmp/timeout.out" "--timeout"
  ok "cleanup: --timeout 1, exit 124, nothing left"

  for sig in TERM INT; do
    # A background job of a script starts with SIGINT ignored, and symcomm-run keeps
    # ignoring what was ignored: give it the default back.
    start_sleeping_job 4 "$tmp/sig$sig.out" env --default-signal=INT
    kill -s $sig $job_pid
    wait $job_pid
    rc=$?
    want=$((128 + $(kill -l $sig)))
    [ $rc -eq $want ] || fail "SIG$sig: symcomm-run exited $rc, not $want"
    expect_gone "$(job_tag "$tmp/sig$sig.out")" "SIG$sig"
    expect_no_process "$tmp/sig$sig.out" "SIG$sig"
    ok "cleanup: SIG$sig to symcomm-run, exit $rc, nothing left"
  done

  # SIGKILL: symcomm-run cannot clean up; its ranks die with it (parent-death
  # signal), its namespaces stay until the next --netns job starts.
  start_sleeping_job 4 "$tmp/kill.out"
  kill -KILL $job_pid
  wait $job_pid 2>/dev/null
  tag=$(job_tag "$tmp/kill.out")
  [ -e "/run/netns/symcomm-$tag-h0" ] || fail "SIGKILL: the namespaces were already gone (the check below would show nothing)"
  "$RUN" -n 2 --hosts 2 --netns -- bash "$tmp/whoami.sh" >"$tmp/next.out" 2>&1 || fail "after SIGKILL: the next job exited $?"
  expect_gone "$tag" "the SIGKILLed job's leftovers after the next job"
  expect_gone "$(job_tag "$tmp/next.out")" "the job after SIGKILL"
  expect_no_process "$tmp/kill.out" "SIGKILL"
  ok "cleanup: after a SIGKILL of symcomm-run, the next job removed its namespaces, bridge and veths"
}

case_refusals() {
  local rc
  "$RUN" -n 2 --netns -- true >"$tmp/nohosts.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q -- "--netns needs --hosts" "$tmp/nohosts.out" || fail "--netns without --hosts: exit $rc"
  "$RUN" -n 300 --hosts 254 --netns -- true >"$tmp/many.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q "up to 253 hosts" "$tmp/many.out" || fail "--netns with 254 hosts: exit $rc"
  "$RUN" --help | grep -q -- "--netns" || fail "--help does not mention --netns"
  ok "refusals: --netns without --hosts, or with 254 hosts: usage errors; --help documents it"

  local as=() who
  if [ "$(id -u)" -eq 0 ]; then
    if ! command -v setpriv >/dev/null; then
      echo "SKIP: the unprivileged refusal: running as root and setpriv(1) is missing"
      return 0
    fi
    if ! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
      echo "SKIP: the unprivileged refusal: setpriv cannot drop to uid 65534 here"
      return 0
    fi
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    if ! "${as[@]}" "$RUN" --help >/dev/null 2>&1; then
      # The build folder is out of its reach: a copy, with the library beside it
      # where the rpath ($ORIGIN/../lib) finds it (sanitizer builds link it).
      mkdir -p "$tmp/bin" "$tmp/lib"
      cp "$RUN" "$tmp/bin/"
      cp -P "$B"/lib/libsymcomm.so* "$tmp/lib/" 2>/dev/null
      chmod -R a+rX "$tmp"
      RUN=$tmp/bin/symcomm-run
      "${as[@]}" "$RUN" --help >/dev/null 2>&1 || fail "uid 65534 cannot run a copy of symcomm-run"
    fi
    who="uid 65534 (setpriv)"
  else
    who="uid $(id -u)"
  fi
  local before after
  before=$(ls /run/netns 2>/dev/null | grep '^symcomm-')
  "${as[@]}" "$RUN" -n 2 --hosts 2 --netns -- sh -c 'echo a rank ran' >"$tmp/unpriv.out" 2>&1
  rc=$?
  after=$(ls /run/netns 2>/dev/null | grep '^symcomm-')
  [ $rc -eq 2 ] || fail "as $who: symcomm-run --netns exited $rc, not 2"
  grep -q -- "--netns needs root" "$tmp/unpriv.out" || fail "as $who: no sentence saying root is needed"
  grep -q "a rank ran" "$tmp/unpriv.out" && fail "as $who: a rank was started"
  [ "$before" = "$after" ] || fail "as $who: /run/netns changed"
  ok "refusals: as $who: exit 2, '$(head -n 1 "$tmp/unpriv.out" | cut -c1-70)...', no rank, no namespace"
}

case "$case_name" in
  addresses|tcp|comm|link_down|cleanup|refusals) "case_$case_name" ;;
  *) echo "unknown case '$case_name'"; exit 2 ;;
esac
