#!/usr/bin/env bash
# SYMCOMM_BACKEND on this machine: auto uses the CUDA backend where a GPU is
# usable and says so at INFO, else falls back to the simulated GPUs with its
# INFO line and the reason; cuda without a usable GPU fails init with
# UNSUPPORTED and the reason; a missing or foreign libsymcomm_cuda.so is
# named. Also the reverse on a GPU host (make test-gpu): cuda then works.
set -u
B=${B:?run through tests/run.sh}
prog="$B/tests/mp/test_backend_select"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# What this machine offers: the reason auto falls back, or none (a GPU).
run() { # NAME ENV... -- ARGS: runs the program with INFO logging, log in $tmp/NAME
  local name=$1; shift
  env SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=INIT "$@" >"$tmp/$name" 2>&1
}
reasons='no libcuda.so.1|no CUDA device|driver older than|the driver lacks|libsymcomm_cuda.so missing'

run auto SYMCOMM_BACKEND=auto "$prog" ok || { cat "$tmp/auto"; fail "auto: init failed"; }
if grep -q "SYMCOMM_BACKEND=auto: using the CUDA backend" "$tmp/auto"; then
  gpu=1
  echo "auto: $(grep -o 'SYMCOMM_BACKEND=auto: using the CUDA backend.*' "$tmp/auto" | head -1)"
else
  gpu=0
  line=$(grep -o 'SYMCOMM_BACKEND=auto: using the simulated-GPU backend (host): no usable GPU here: .*' "$tmp/auto" | head -1)
  [ -n "$line" ] || { cat "$tmp/auto"; fail "auto: no INFO line naming the fallback"; }
  echo "$line" | grep -Eq "here: ($reasons)" || fail "auto: the reason is none of the known ones: $line"
  echo "auto: $line"
fi

if [ $gpu = 0 ]; then
  reason=$(echo "$line" | sed 's/.*no usable GPU here: //')
  run cuda SYMCOMM_BACKEND=cuda "$prog" fail "SYMCOMM_BACKEND=cuda: the CUDA backend cannot run here: ${reason:0:40}" ||
    { cat "$tmp/cuda"; fail "cuda without a GPU"; }
  echo "cuda: $(grep -o 'init refused: .*' "$tmp/cuda")"
else
  run cuda SYMCOMM_BACKEND=cuda "$prog" ok || { cat "$tmp/cuda"; fail "cuda on a GPU host"; }
  echo "cuda: init succeeded on the GPU"
fi

# A backend object that is not there, or not one.
run missing SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH="$tmp/none/libsymcomm_cuda.so" "$prog" fail \
  "libsymcomm_cuda.so missing or unloadable (SYMCOMM_CUDA_BACKEND_PATH=$tmp/none/libsymcomm_cuda.so" ||
  { cat "$tmp/missing"; fail "a missing backend object"; }
run foreign SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH="$B/lib/libsymcomm.so" "$prog" fail \
  "is from another build of symcomm (it has no symcomm_cuda_backend" ||
  { cat "$tmp/foreign"; fail "an object without the entry"; }
run foreign_auto SYMCOMM_BACKEND=auto SYMCOMM_CUDA_BACKEND_PATH="$B/lib/libsymcomm.so" "$prog" ok ||
  { cat "$tmp/foreign_auto"; fail "auto with a foreign object"; }
grep -q "using the simulated-GPU backend (host): no usable GPU here: .*from another build" "$tmp/foreign_auto" ||
  { cat "$tmp/foreign_auto"; fail "auto did not say why it fell back"; }
echo "missing and foreign backend objects named; auto falls back past them"
# A driver too old for the backend (tests/fake_cuda/ stands in for libcuda.so.1,
# here and on a GPU host alike): init with cuda is refused, naming the version.
fake="$B/tests/fake_cuda"
if [ -f "$B/lib/libsymcomm_cuda.so" ] && [ -f "$fake/libcuda.so.1" ]; then
  run old_driver SYMCOMM_BACKEND=cuda LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    FAKE_CUDA_DRIVER_VERSION=12000 "$prog" fail "(it is CUDA 12.0): symcomm's send/recv kernel takes a 4 KiB parameter block" ||
    { cat "$tmp/old_driver"; fail "a 12.0 driver was not refused by name"; }
  grep -q "driver older than 1[2-9]\.[0-9]" "$tmp/old_driver" || { cat "$tmp/old_driver"; fail "no 'driver older than'"; }
  run old_driver_121 SYMCOMM_BACKEND=cuda LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    FAKE_CUDA_DRIVER_VERSION=12010 "$prog" fail "(it is CUDA 12.1): symcomm's send/recv kernel" ||
    { cat "$tmp/old_driver_121"; fail "a 12.1 driver (no cuFuncGetParamInfo) was not refused by name"; }
  echo "old drivers refused: $(grep -o 'init refused: .*' "$tmp/old_driver" | cut -c1-160)"
else
  echo "old drivers: not tried (no libsymcomm_cuda.so or fake libcuda.so.1 in $B)"
fi
echo "test_backend_select: all passed"
