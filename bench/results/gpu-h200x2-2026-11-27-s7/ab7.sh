#!/usr/bin/env bash
# Session 7 A/B on the lent host (2 or 4 GPUs): base (main before the per-path kernels, build-base/lib)
# against paths (build-c: per-path kernels), new (build: + barrier tags), lb1 (build-d: + launch bounds 512,1) and NCCL, alternately, -G 1; then make test-gpu with the new build.
#   bash build/bin/ab7.sh [A] [T]   carry: build/lib build/bin build/tests/mp build/tests/gpu
#   build/tests/unit/test_cuda_backend build/obj/tests/gpu/gpu_bulk_kernels.fatbin build-base/lib [build-c/lib]
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
nvidia-smi -L > $L/smi.txt; head -4 $L/smi.txt
np=$(nvidia-smi -L | grep -c ^GPU)
md5sum build/lib/*.so build-ab/*/lib/*.so
perf() { # name libdir|nccl ops size-range
  local n=$1 lib=$2 o=$3 b=$4 e=$5 pre="" eng=""
  [ "$lib" = nccl ] && eng="--engine nccl" || pre="env LD_LIBRARY_PATH=$PWD/$lib"
  timeout -k 5 100 $pre build/bin/symcomm-run -n $np --timeout 90 -- build/bin/symcomm-perf $eng -o $o -b $b -e $e -f 4 -G 1 -n 100 -w 20 -c 1 > $L/$n.log 2>&1
  echo "$n rc=$? ($(el))"
}
for mode in "$@"; do
case $mode in
A)
  for rep in 1 2; do
    ops="allreduce broadcast allgather reducescatter"; [ $rep = 2 ] && ops=allreduce
    for o in $ops; do
      e=4M; [ $o = allreduce ] || e=1M
      for v in base:build-ab/base/lib paths:build-ab/paths/lib new:build/lib lb1:build-ab/lb1/lib nccl:nccl; do
        n=${v%%:*}; lib=${v#*:}
        [ "$lib" = nccl ] || [ -d "$lib" ] || continue
        perf ${o}_${n}_$rep $lib $o 8 $e
      done
    done
  done
  python3 - $L <<'PY'
import sys, glob, re, collections
L = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(L + '/*_*_[12].log')):
    name = f.split('/')[-1][:-4]; op, var, rep = name.rsplit('_', 2)
    for line in open(f):
        m = re.match(r'\s+(\d+)\s+\d+\s+\S+\s+\S+\s+-?\d+\s+([\d.]+)', line)
        if m:
            k = (op, int(m.group(1))); t[k].setdefault(var, []).append(float(m.group(2)))
vs = ['base', 'paths', 'new', 'lb1', 'nccl']
print('op bytes ' + ' '.join(vs) + '  (us, best of 2 runs)')
for k in sorted(t):
    print(k[0], k[1], ' '.join('%.1f' % min(t[k][v]) if v in t[k] else '-' for v in vs))
PY
  ;;
T)
  timeout -k 5 400 env OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? ($(el))"
  grep -E "^FAIL" $L/test_gpu.log | cut -c1-100; grep -E "passed|failed" $L/test_gpu.log | tail -1 ;;
esac
done
tar czf $OUT/run.tgz -C $OUT logs; rm -rf $L
