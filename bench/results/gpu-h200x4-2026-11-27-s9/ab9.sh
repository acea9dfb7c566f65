#!/usr/bin/env bash
# Session 9 A/B (ab8.sh with NP per call) on the lent host, -G 1: engines given as name:libdir (libdir with libsymcomm.so and
# libsymcomm_cuda.so) or nccl, ops and range from the environment; then make test-gpu with build/.
#   XVARS="l16:build/lib: nccl" OPS=sendrecv NP=2 E=1G bash build/bin/ab9.sh X
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs${TAG:+/$TAG}; mkdir -p $L
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
nvidia-smi -L > $L/smi.txt; head -4 $L/smi.txt
np=${NP:-$(nvidia-smi -L | grep -c ^GPU)}
md5sum build/lib/*.so build-ab/*/lib/*.so 2>/dev/null
ENGINES=${ENGINES:-"main:build-ab/main/lib ll:build/lib nccl"}
OPS=${OPS:-"allreduce broadcast allgather reducescatter alltoall"}
REPS=${REPS:-2}; E=${E:-1M}; EXTRA=${EXTRA:-}
perf() { # name libdir|nccl op
  local n=$1 lib=$2 o=$3 pre="" eng=""
  [ "$lib" = nccl ] && { eng="--engine nccl"; pre="env LD_LIBRARY_PATH=$PWD/${NCCL_SCLIB:-build/lib}"; } || pre="env LD_LIBRARY_PATH=$PWD/$lib"
  timeout -k 5 100 $pre build/bin/symcomm-run -n $np --timeout 90 -- build/bin/symcomm-perf $eng -o $o -b 8 -e $E -f 4 -G 1 -n 100 -w 20 -c 1 $EXTRA > $L/$n.log 2>&1
  echo "$n rc=$? ($(el))"
}
summary() { # the best time of each operation, size and engine (names from $1)
  python3 - $L "$1" <<'PY'
import sys, glob, re, collections
L = sys.argv[1]; vs = [e.split(':')[0] for e in sys.argv[2].split()]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(L + '/*_*_[0-9].log')):
    name = f.split('/')[-1][:-4]; op, var, rep = name.rsplit('_', 2)
    for line in open(f):
        m = re.match(r'\s+(\d+)\s+\d+\s+\S+\s+\S+\s+-?\d+\s+([\d.]+)', line)
        if m:
            k = (op, int(m.group(1))); t[k].setdefault(var, []).append(float(m.group(2)))
print('op bytes ' + ' '.join(vs) + '  (us, best of runs, out-of-place)')
for k in sorted(t):
    print(k[0], k[1], ' '.join('%.1f' % min(t[k][v]) if v in t[k] else '-' for v in vs))
PY
}
for mode in "$@"; do
case $mode in
A)
  for rep in $(seq 1 $REPS); do
    for o in $OPS; do
      for v in $ENGINES; do
        n=${v%%:*}; lib=${v#*:}
        perf ${o}_${n}_$rep $lib $o
      done
    done
  done
  grep -l "wrong\|FAIL\|rror" $L/*_*_[0-9].log | head
  grep -h "Out of bounds" $L/*_*_[0-9].log | sort | uniq -c
  summary "$ENGINES"
  ;;
X) # variants name:libdir:ENV=VAL,ENV=VAL (env applied to the run)
  for rep in $(seq 1 $REPS); do
    for o in $OPS; do
      for v in $XVARS; do
        n=${v%%:*}; r=${v#*:}; lib=${r%%:*}; ev=${r#*:}
        if [ "$lib" = nccl ]; then perf ${o}_${n}_$rep nccl $o; continue; fi
        timeout -k 5 100 env ${ev//,/ } LD_LIBRARY_PATH=$PWD/$lib build/bin/symcomm-run -n $np --timeout 90 -- build/bin/symcomm-perf -o $o -b 8 -e $E -f 4 -G 1 -n 100 -w 20 -c 1 $EXTRA > $L/${o}_${n}_$rep.log 2>&1
        echo "${o}_${n}_$rep rc=$?"
      done
    done
  done
  grep -h "Out of bounds" $L/*_*_[0-9].log | sort | uniq -c
  summary "$XVARS"
  ;;
B)
  for nb in 1 8 32 132; do
    timeout -k 5 60 env SYMCOMM_COLL_BLOCKS=$nb build/bin/symcomm-run -n $np --timeout 50 -- build/bin/symcomm-perf -o allreduce -b 8 -e 2K -f 4 -G 1 -n 100 -w 20 -c 1 > $L/blocks_$nb.log 2>&1
    echo "blocks $nb rc=$? $(grep -E '^ +[0-9]' $L/blocks_$nb.log | awk '{printf "%s:%s ", $1, $6}')"
  done ;;
T)
  timeout -k 5 ${TT:-420} env OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? ($(el))"
  grep -E "^FAIL" $L/test_gpu.log | cut -c1-100; grep -E "passed|failed" $L/test_gpu.log | tail -1 ;;
esac
done
[ -n "$KEEP" ] || { tar czf $OUT/run${TAG:+_$TAG}.tgz -C $OUT logs${TAG:+/$TAG}; rm -rf $L; }
