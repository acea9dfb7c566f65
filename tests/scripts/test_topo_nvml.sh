#!/usr/bin/env bash
# Topology from NVML without a GPU: jobs on this machine (no libnvidia-ml)
# fall back to the simulated host with an INFO line that says why; with the
# build's stand-in libnvidia-ml.so.1 (4 GPUs, 18 NVSwitch links each, as an
# HGX H100) on LD_LIBRARY_PATH, symcomm-topo shows NV18 between the NVML bus
# ids, honours CUDA_VISIBLE_DEVICES, writes the host as a topology file that
# reads back to the same matrix, and a 2-host rehearsal runs on that file.
set -u
B=${B:-${1:-build}}
topo="$B/bin/symcomm-topo"
run="$B/bin/symcomm-run"
fake=$(cd "$B/tests/fake_nvml" 2>/dev/null && pwd) || { echo "FAIL: no $B/tests/fake_nvml"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
info() { SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=TOPO "$@"; }
# The GPU rows of a printed matrix, without the rank column (files have none).
matrix() { awk '$1 ~ /^GPU[0-9]+$/ && $NF != "rank" { NF--; $1 = $1; print }'; }

if [ -z "${LD_LIBRARY_PATH:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 '; then
  out=$(info "$run" -n 2 --timeout 30 -- "$topo" 2>&1) || fail "job without NVML: $out"
  echo "$out" | grep -q "no topology from NVML (no libnvidia-ml.so.1 .*): simulated host of 2 GPUs" ||
    fail "no fallback line: $out"
  echo "$out" | grep -q "0000:01:00.0" || fail "not the simulated host: $out"
  echo "ok: no libnvidia-ml.so.1: the simulated host, and the INFO line says why"
else
  echo "ok: skipped the no-NVML check: this machine has libnvidia-ml.so.1"
fi

export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=$(info "$run" -n 4 --timeout 30 -- "$topo" --write-xml "$tmp/host.xml" 2>&1) || fail "job with NVML: $out"
echo "$out" | grep -q "host topology from NVML: 4 GPUs" || fail "NVML not used: $out"
[ "$(echo "$out" | matrix | grep -o NV18 | wc -l)" -eq 12 ] || fail "expected NV18 between all 4: $out"
echo "$out" | grep -q "GPU3 .* 0000:5d:00.0 *3$" || fail "rank 3 is not on NVML's GPU 3: $out"
echo "$out" | grep -q "class: FULLY_CONNECTED" || fail "class: $out"
echo "ok: NVML's 4 GPUs on NVSwitches show as NV18, FULLY_CONNECTED"

[ -s "$tmp/host.xml" ] || fail "--write-xml wrote nothing"
grep -q 'tclass="0x068000"' "$tmp/host.xml" || fail "the file has no NVSwitch links: $(cat "$tmp/host.xml")"
back=$("$topo" --xml "$tmp/host.xml") || fail "the written file does not load: $back"
[ "$(echo "$back" | matrix)" = "$(echo "$out" | matrix)" ] ||
  fail "the file reads back differently:$(diff <(echo "$out" | matrix) <(echo "$back" | matrix))"
echo "ok: --write-xml reads back to the same matrix"

out=$(SYMCOMM_TOPO_FILE="$tmp/host.xml" "$run" -n 8 --hosts 2 --timeout 30 -- "$topo" 2>&1) ||
  fail "rehearsal: $out"
[ "$(echo "$out" | grep -c 'class: FULLY_CONNECTED')" -eq 2 ] || fail "rehearsal classes: $out"
echo "$out" | grep -q "GPU3 .*NV18 .* 0100:5d:00.0 *7$" || fail "host 1 lacks the real bus ids: $out"
echo "ok: 2 simulated hosts rehearse with the written topology"

out=$(FAKE_NVML_GPUS=8 CUDA_VISIBLE_DEVICES=6,2 "$run" -n 2 --timeout 30 -- "$topo" 2>&1) ||
  fail "CUDA_VISIBLE_DEVICES: $out"
echo "$out" | grep -q "GPU0 .* 0000:ba:00.0 *0$" && echo "$out" | grep -q "GPU1 .* 0000:3a:00.0 *1$" ||
  fail "CUDA_VISIBLE_DEVICES=6,2 not honoured: $out"
echo "ok: CUDA_VISIBLE_DEVICES picks NVML's GPUs in its order"

out=$(info "$run" -n 6 --timeout 30 -- "$topo" 2>&1) || fail "6 ranks on 4 GPUs: $out"
echo "$out" | grep -q "NVML shows 4 GPUs, fewer than the 6" || fail "no reason for the fallback: $out"
out=$(SYMCOMM_BACKEND=host info "$run" -n 2 --timeout 30 -- "$topo" 2>&1) || fail "backend host: $out"
echo "$out" | grep -q "no topology from NVML (SYMCOMM_BACKEND=host)" || fail "backend host: $out"
echo "ok: more ranks than GPUs, or simulated GPUs, keep the simulated host and say why"
