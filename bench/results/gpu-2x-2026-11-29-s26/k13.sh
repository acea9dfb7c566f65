#!/usr/bin/env bash
# session 26 call k13 (2x H200): S (build/: the P2P program's second kernel with a 512-byte parameter for
# batches that fit it, k13-varS.diff) against N (build-ab/varN: every batch in the 4096-byte parameter):
# make test-gpu's p2p_ steps and test_p2p biggroup on 2 ranks with S; sendrecv 8 B-64 KiB with -G 1 -n 20,
# -G 50 -n 20 and -G 1 -n 1000, alternating, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k13; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
ONLY='^p2p_' OUT=$O/test-gpu timeout -k 5 200 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -4
timeout -k 5 90 build/bin/symcomm-run -n 2 --timeout 80 -- build/tests/mp/test_p2p biggroup > $O/biggroup.txt 2>&1
echo "biggroup rc=$?"; tail -2 $O/biggroup.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^ +[0-9]+ " $1 | awk '{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for m in g1n20 g50n20 g1n1000; do
    case $m in g1n20) M="-G 1 -n 20 -w 5";; g50n20) M="-G 50 -n 20 -w 5";; g1n1000) M="-G 1 -n 1000 -w 50";; esac
    for v in N S; do
      X=; [ $v = N ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varN/libsymcomm_cuda.so"
      env $X timeout -k 5 60 $R $P -R 1 -o sendrecv -b 8 -e 64K -f 4 $M > $O/$v-$m-r$r.txt 2>&1
      echo "== $v-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$v-$m-r$r.txt
    done
  done
done
cd $OUT && tar czf k13.tgz k13 && rm -rf k13; echo "total $(( $(date +%s)-t0 ))s"
