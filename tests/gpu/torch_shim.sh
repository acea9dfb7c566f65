#!/usr/bin/env bash
# PyTorch on symcomm's libnccl.so.2 (issue 11): tests/gpu/torch_shim.py under
# torchrun, once on NCCL's own library and once with symcomm's preloaded;
# every collective checked exactly in each run, and the two runs' DDP loss
# curves compared (equal to 1e-4 relative: 2 ranks sum in one order, more
# may round differently).
#   bash tests/gpu/torch_shim.sh [NPROC] [BUILD]     (logs under $OUT, else BUILD/torch-logs)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
N=${1:-2}
B=${2:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
OUT=${OUT:-$B/torch-logs}
mkdir -p "$OUT"
shim=$top/$B/lib/nccl/libnccl.so.2
[ -f "$shim" ] || { echo "FAIL: $shim was not built (no nccl.h found at build time?)"; exit 2; }
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpus" -ge "$N" ] || { echo "SKIP: needs $N GPUs, this host has $ngpus"; exit 0; }
rc=0
for tag in nccl symcomm; do
  pre=""
  [ $tag = symcomm ] && pre=$shim
  # symcomm's INFO line when a communicator picks its backend: only symcomm
  # writes it, so it shows that symcomm made the communicators (and every call
  # on them must then be symcomm's: NCCL's would not know its handles).
  timeout -k 5 300 env OUT="$OUT" SHIM_TAG=$tag LD_PRELOAD=$pre SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=INIT \
    python3 -m torch.distributed.run --standalone --nproc-per-node "$N" tests/gpu/torch_shim.py >"$OUT/torch_$tag.log" 2>&1
  r=$?
  echo "$tag: exit $r; $(grep -oE 'rank [0-9]+: [a-z_]+ ok' "$OUT/torch_$tag.log" | wc -l) steps ok, $(grep -c 'FAILED' "$OUT/torch_$tag.log") failed (log $OUT/torch_$tag.log)"
  grep -E "FAILED|: .* wrong|Error" "$OUT/torch_$tag.log" | head -5
  [ $r -eq 0 ] || rc=1
  # The library PyTorch really used. PyTorch may also map its own
  # libnccl.so.2 by path (2.11 on the H200 hosts does): the preload still
  # comes first in symbol lookup, and symcomm's INFO line says whose
  # communicators the run had.
  loaded=$(grep -o 'libnccl loaded: .*' "$OUT/torch_$tag.log" | head -1)
  made=$(grep -c 'SYMCOMM INFO INIT.*using the CUDA backend' "$OUT/torch_$tag.log")
  echo "  $loaded; symcomm communicators' INFO lines: $made"
  if [ $tag = symcomm ]; then
    case "$loaded" in *"$shim"*) ;; *) echo "  FAIL: the preloaded run did not load symcomm's library"; rc=1 ;; esac
    [ "$made" -gt 0 ] || { echo "  FAIL: the preloaded run made no symcomm communicator"; rc=1; }
  else
    case "$loaded" in *"$shim"*|"") echo "  FAIL: the NCCL run did not load NCCL's library"; rc=1 ;; esac
    [ "$made" -eq 0 ] || { echo "  FAIL: the NCCL run made symcomm communicators"; rc=1; }
  fi
done
python3 - "$OUT/loss_nccl.txt" "$OUT/loss_symcomm.txt" <<'PY' || rc=1
import sys
try:
    a = [float(x) for x in open(sys.argv[1])]
    b = [float(x) for x in open(sys.argv[2])]
except OSError as e:
    print(f"loss curves: {e}"); sys.exit(1)
if len(a) != len(b) or not a:
    print(f"loss curves: {len(a)} and {len(b)} steps"); sys.exit(1)
worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
print(f"loss curves: {len(a)} steps, first {a[0]:.6f} / {b[0]:.6f}, last {a[-1]:.6f} / {b[-1]:.6f}, worst relative difference {worst:.3g}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
exit $rc
