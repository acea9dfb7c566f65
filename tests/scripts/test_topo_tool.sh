#!/usr/bin/env bash
# symcomm-topo: --xml on the shipped topology files, a malformed file, --env,
# and a live job of 2 simulated hosts; and the README documents every variable.
set -u
B=${B:-${1:-build}}
topo="$B/bin/symcomm-topo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

expect_class() {
  local file=$1 class=$2 out
  out=$("$topo" --xml "$file" 2>&1) || fail "--xml $file exited non-zero: $out"
  echo "$out" | grep -q "class: $class" || fail "$file: expected $class, got: $(echo "$out" | grep class:)"
  echo "ok: $file is $class"
}
expect_class topo/nvswitch_8gpu.xml FULLY_CONNECTED
expect_class topo/hybrid_cube_mesh_8gpu.xml HYBRID_CUBE_MESH
expect_class topo/pcie_2gpu.xml NONE
expect_class topo/partial_4gpu.xml PARTIAL
"$topo" --xml topo/nvswitch_8gpu.xml | grep -q "NV18" || fail "NVSwitch file: no NV18 cells"
# A file NCCL wrote itself on a real 4x H200 host (tests/data/README.md).
expect_class tests/data/nccl_dump_4xh200.xml FULLY_CONNECTED
[ "$("$topo" --xml tests/data/nccl_dump_4xh200.xml | grep -c 'NV18')" -eq 4 ] || fail "NCCL dump: expected NV18 rows"

printf '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0"\n  </cpu>\n</system>\n' >"$tmp/bad.xml"
out=$("$topo" --xml "$tmp/bad.xml" 2>&1) && fail "a malformed file was accepted"
echo "$out" | grep -q "bad.xml:[34]" || fail "the error does not name the line: $out"
echo "ok: malformed file rejected with its line"

# --env lists every parameter; README.md documents each of them.
names=$("$topo" --env --names) || fail "--env --names failed"
[ "$(echo "$names" | wc -l)" -ge 20 ] || fail "--env lists too few parameters"
for n in $names; do
  grep -q "\`$n\`" README.md || fail "README.md does not document $n"
done
SYMCOMM_TIMEOUT=7 "$topo" --env | grep -q "SYMCOMM_TIMEOUT *= 7" || fail "--env does not show values"
echo "ok: --env and README agree"

# A live job: 2 simulated hosts x 2 ranks.
out=$("$B/bin/symcomm-run" -n 4 --hosts 2 --timeout 30 -- "$topo" 2>&1) || fail "live job: $out"
echo "$out" | grep -q "4 ranks on 2 hosts" || fail "live job header: $out"
echo "$out" | grep -q "0100:01:00.0" || fail "host 1's busIds lack domain 0100: $out"
[ "$(echo "$out" | grep -c 'class: FULLY_CONNECTED')" -eq 2 ] || fail "per-host classes: $out"
echo "ok: live job printed"

# The same with a topology file per simulated host (seed 003's naming).
out=$(SYMCOMM_TOPO_FILE=topo/sim2x8.xml "$B/bin/symcomm-run" -n 16 --hosts 2 --timeout 30 -- "$topo" 2>&1) ||
  fail "job with topology files: $out"
echo "$out" | grep -q "16 ranks on 2 hosts" || fail "16-rank header: $out"
echo "ok: live job with per-host topology files"

# Seed 002's check: two ranks of one host on one device is an error naming both.
out=$(SYMCOMM_SHARE_DEVICE=0 SYMCOMM_DEVICE=0 "$B/bin/symcomm-run" -n 2 --timeout 30 -- "$topo" 2>&1) &&
  fail "two ranks on one device were accepted"
echo "$out" | grep -q "ranks 0 and 1 on host .* both use device 0 (0000:01:00.0)" ||
  fail "device sharing not explained: $out"
echo "ok: two ranks on one device refused"
# ... unless SYMCOMM_SHARE_DEVICE=1 (tests on one-GPU machines), which says so once.
out=$(SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 "$B/bin/symcomm-run" -n 3 --timeout 30 -- "$topo" 2>&1) ||
  fail "SYMCOMM_SHARE_DEVICE=1 did not let three ranks share device 0: $out"
[ "$(echo "$out" | grep -c "share device 0 (0000:01:00.0), and maybe others: SYMCOMM_SHARE_DEVICE=1")" = 1 ] ||
  fail "the shared device not warned of exactly once: $out"
out=$(SYMCOMM_SHARE_DEVICE=2 "$B/bin/symcomm-run" -n 2 --timeout 30 -- "$topo" 2>&1) &&
  fail "SYMCOMM_SHARE_DEVICE=2 was accepted"
echo "$out" | grep -q "SYMCOMM_SHARE_DEVICE=2: use 0 or 1" || fail "SYMCOMM_SHARE_DEVICE=2 not explained: $out"
# Ranks that disagree on it refuse, saying so (not "both use device" on some).
out=$(SYMCOMM_DEVICE=0 "$B/bin/symcomm-run" -n 3 --timeout 30 -- sh -c \
  'SYMCOMM_SHARE_DEVICE=$([ "$SYMCOMM_RANK" = 2 ] && echo 0 || echo 1) exec "$0"' "$topo" 2>&1) &&
  fail "ranks disagreeing on SYMCOMM_SHARE_DEVICE were accepted"
echo "$out" | grep -q "ranks disagree on SYMCOMM_SHARE_DEVICE: rank 0 has 1, rank 2 has 0" ||
  fail "the disagreement not named: $out"
echo "$out" | grep -q "both use device" && fail "a disagreement reported as a shared device: $out"
echo "ok: SYMCOMM_SHARE_DEVICE=1 lets ranks share a device, saying so once; 2 refused; disagreement named"

# A rank whose device is not in its host's topology file.
out=$(SYMCOMM_TOPO_FILE=topo/pcie_2gpu.xml "$B/bin/symcomm-run" -n 3 --timeout 30 -- "$topo" 2>&1) &&
  fail "3 ranks on a 2-GPU host were accepted"
echo "$out" | grep -q "rank 2 wants device 2 .* has only 2 GPUs" || fail "missing device not explained: $out"
echo "ok: a device beyond the topology file refused"
