#!/usr/bin/env bash
# sweep.sh: variants x operations, one symcomm-perf run each, and a table of the best time per op/size/variant.
#   VARS="name:libdir:ENV=V,ENV=V ... nccl:nccl" OPS="allreduce ..." NP=2 B=8K E=1M F=2 REPS=1 G=1 EXTRA="-R 1" bash sweep.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs${TAG:+/$TAG}; mkdir -p $L
np=${NP:-2}; REPS=${REPS:-1}
for rep in $(seq 1 $REPS); do
  for o in $OPS; do
    for v in $VARS; do
      n=${v%%:*}; r=${v#*:}; lib=${r%%:*}; ev=${r#*:}; eng=""
      if [ "$lib" = nccl ]; then eng="--engine nccl"; lib=build/lib; ev=""; fi
      timeout -k 5 100 env ${ev//,/ } LD_LIBRARY_PATH=$PWD/$lib build/bin/symcomm-run -n $np --timeout 90 -- \
        build/bin/symcomm-perf $eng -o $o -b ${B:-8} -e ${E:-1M} -f ${F:-2} -G ${G:-1} -n 100 -w 20 -c 1 $EXTRA > $L/${o}_${n}_$rep.log 2>&1
      rc=$?; [ $rc = 0 ] || echo "${o}_${n}_$rep rc=$rc"
    done
  done
done
grep -h "Out of bounds" $L/*_*_[0-9].log | sort | uniq -c
python3 - $L "$VARS" <<'PY'
import sys, glob, re, collections
L = sys.argv[1]; vs = [e.split(':')[0] for e in sys.argv[2].split()]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(L + '/*_*_[0-9].log')):
    name = f.split('/')[-1][:-4]; op, var, rep = name.rsplit('_', 2)
    for line in open(f):
        m = re.match(r'\s+(\d+)\s+\d+\s+\S+\s+\S+\s+-?\d+\s+([\d.]+)', line)
        if m:
            t[(op, int(m.group(1)))].setdefault(var, []).append(float(m.group(2)))
print('op bytes ' + ' '.join(vs) + '  (us, best of runs, out-of-place)')
for k in sorted(t):
    print(k[0], k[1], ' '.join('%.1f' % min(t[k][v]) if v in t[k] else '-' for v in vs))
PY
