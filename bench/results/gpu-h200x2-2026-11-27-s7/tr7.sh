#!/usr/bin/env bash
# Barrier/LL phase traces with build-trace/lib (trace7.patch on the per-path kernels), -G 1.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L; np=$(nvidia-smi -L | grep -c ^GPU); nvidia-smi -L | head -2
for a in "allreduce=ll:allreduce:8" "allreduce=oneshot:allreduce:8K" "allreduce=twoshot:allreduce:64K" "broadcast=direct:broadcast:8"; do
  f=${a%%:*}; r=${a#*:}; o=${r%%:*}; sz=${r#*:}
  for lib in build-trace/lib build/lib; do t=$(basename $(dirname $lib))
    timeout -k 5 40 env SYMCOMM_BACKEND=cuda SYMCOMM_ALGO=$f LD_LIBRARY_PATH=$PWD/$lib build/bin/symcomm-run -n $np --timeout 35 -- \
      build/bin/symcomm-perf -o $o -b $sz -e $sz -n 200 -w 20 -G 1 -c 0 > $L/tr_${f}_${sz}_$t.log 2>&1
    echo "== $f $sz $t rc=$? $(grep -E '^ +[0-9]' $L/tr_${f}_${sz}_$t.log | head -1 | awk '{print $6}')"
  done
  python3 - $L/tr_${f}_${sz}_build-trace.log <<'PY'
import sys,re,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'TRACE seq (\d+) (\d+) (\S+)\s+(\d+) ns polls (\d+)',l)
    if m: d[(int(m.group(2)),m.group(3))].append(int(m.group(4)))
print('  '.join(f"{k[1]}:{sorted(v)[len(v)//2]/1000:.2f}" for k,v in sorted(d.items())))
PY
done
tar czf $OUT/run.tgz -C $OUT logs; rm -rf $L
