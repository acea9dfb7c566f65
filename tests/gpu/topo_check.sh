#!/usr/bin/env bash
# On a GPU host (for `make test-gpu`): symcomm-topo under symcomm-run agrees
# with `nvidia-smi topo -m` on every pair of GPUs (matched by bus id, so the
# numbering of either side does not matter; nvidia-smi's NODE is symcomm's
# PHB, as in NCCL); its --write-xml file reads back to the same matrix; and 2
# simulated hosts rehearse a job on that file.
#   bash tests/gpu/topo_check.sh [BUILD]     (ranks: TOPO_CHECK_RANKS, default every GPU)
# Exits non-zero with the differing pairs. Its files (both matrices, the
# written topology) stay in $OUT when set.
set -u
B=${B:-${1:-build}}
topo="$B/bin/symcomm-topo"
run="$B/bin/symcomm-run"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }
# The GPU rows of a printed matrix without the rank column.
matrix() { awk '$1 ~ /^GPU[0-9]+$/ && $NF != "rank" { NF--; $1 = $1; print }'; }
# "00000000:1B:00.0" or "0000:1b:00.0" -> "0000:1b:00.0"
busid() { tr 'A-F' 'a-f' | awk '{ print substr($0, length($0) - 11) }'; }

command -v nvidia-smi >/dev/null || fail "no nvidia-smi: run this on a GPU host"
[ -x "$topo" ] && [ -x "$run" ] || fail "build first: make -j tests"
ngpus=$(nvidia-smi -L | grep -c '^GPU ')
n=${TOPO_CHECK_RANKS:-$ngpus}
[ "$n" -ge 2 ] || fail "a pair needs 2 GPUs, this host has $ngpus"

nvidia-smi topo -m | sed 's/\x1b\[[0-9;]*m//g' >"$out/nvidia-smi-topo.txt" || fail "nvidia-smi topo -m failed"
nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader >"$out/nvidia-smi-busids.txt" ||
  fail "nvidia-smi --query-gpu failed"
SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=TOPO "$run" -n "$n" --timeout 120 -- \
  "$topo" --write-xml "$out/host.xml" >"$out/symcomm-topo.txt" 2>&1 ||
  fail "symcomm-topo under symcomm-run -n $n: $(cat "$out/symcomm-topo.txt")"
grep -q "host topology from NVML: $ngpus GPUs" "$out/symcomm-topo.txt" ||
  fail "the topology is not NVML's: $(grep -m1 'TOPO' "$out/symcomm-topo.txt")"

# nvidia-smi index of each bus id, and its cells by index.
declare -A smi_index smi_cell
while IFS=, read -r index bus; do
  smi_index[$(echo "$bus" | tr -d ' ' | busid)]=$((index))
done <"$out/nvidia-smi-busids.txt"
while read -r row cells; do
  i=${row#GPU}
  j=0
  for cell in $cells; do
    [ "$j" -lt "$ngpus" ] || break
    [ "$cell" = NODE ] && cell=PHB
    smi_cell[$i,$j]=$cell
    j=$((j + 1))
  done
done < <(grep -E '^GPU[0-9]+[[:space:]]' "$out/nvidia-smi-topo.txt")

mine=$(matrix <"$out/symcomm-topo.txt")
rows=$(echo "$mine" | wc -l)
[ "$rows" -eq "$n" ] || fail "symcomm-topo printed $rows GPU rows, expected $n: $mine"
declare -a bus cells
while read -r row rest; do
  a=${row#GPU}
  set -- $rest
  bus[$a]=$(echo "${!#}" | busid)
  cells[$a]="${*:1:$#-1}"
done <<<"$mine"
diffs=0
for ((a = 0; a < n; a++)); do
  ia=${smi_index[${bus[$a]}]:-}
  [ -n "$ia" ] || fail "nvidia-smi does not list symcomm's GPU $a (${bus[$a]})"
  set -- ${cells[$a]}
  for ((b = 0; b < n; b++)); do
    cell=${@:b+1:1}
    ib=${smi_index[${bus[$b]}]}
    want=${smi_cell[$ia,$ib]:-?}
    if [ "$cell" != "$want" ]; then
      echo "DIFF GPU $a (${bus[$a]}) - GPU $b (${bus[$b]}): symcomm $cell, nvidia-smi $want"
      diffs=$((diffs + 1))
    fi
  done
done
if [ "$diffs" -ne 0 ]; then
  echo "--- nvidia-smi topo -m"; cat "$out/nvidia-smi-topo.txt"
  echo "--- symcomm-topo"; cat "$out/symcomm-topo.txt"
  fail "$diffs pairs differ from nvidia-smi topo -m"
fi
echo "ok: symcomm-topo agrees with nvidia-smi topo -m on all $((n * (n - 1))) ordered pairs of $n GPUs"

back=$("$topo" --xml "$out/host.xml") || fail "the written file does not load: $back"
[ "$(echo "$back" | matrix)" = "$mine" ] ||
  fail "host.xml reads back differently:$(diff <(echo "$mine") <(echo "$back" | matrix))"
class=$(grep -m1 'class:' "$out/symcomm-topo.txt" | awk '{ print $2 }')
echo "ok: --write-xml wrote $out/host.xml, which reads back to the same matrix ($class)"

# Simulated GPUs: each rank of the rehearsal would otherwise open a real one.
rehearsal=$(SYMCOMM_BACKEND=host SYMCOMM_TOPO_FILE="$out/host.xml" "$run" -n $((2 * n)) --hosts 2 \
  --timeout 120 -- "$topo" 2>&1) || fail "rehearsal on 2 simulated hosts: $rehearsal"
echo "$rehearsal" >"$out/rehearsal.txt"
[ "$(echo "$rehearsal" | grep -c "class: $class")" -eq 2 ] || fail "rehearsal classes: $rehearsal"
if [ -x "$B/tests/mp/test_tp_dp" ]; then
  SYMCOMM_BACKEND=host SYMCOMM_TOPO_FILE="$out/host.xml" EXPECT_CLASS="$class" \
    "$run" -n $((2 * n)) --hosts 2 --timeout 120 -- "$B/tests/mp/test_tp_dp" >>"$out/rehearsal.txt" 2>&1 ||
    fail "TP/DP rehearsal on 2 simulated hosts: $(tail -20 "$out/rehearsal.txt")"
fi
echo "ok: 2 simulated hosts of this host's topology ran symcomm-topo and the TP/DP test"
