#!/usr/bin/env bash
# session 20 call k1 (2 GPUs; prepared, not run: no 2-GPU kind was lent): small send/recv. Variants of the P2P kernel (libsymcomm_cuda.so, the rest
# identical): base = c1dec7c (main before this session), start = 74e57a4 (the eager start: tickets and
# order loads in flight together, one share, the message pushed at once), new = this build (the start,
# with the EAGER phase's steps as functions); NCCL -R 0 and -R 1 in the same rounds.
# Stamps (/work/trace's P2PTR, block 0 = the send, averages of 2048 calls): basetr (base), newtr (new;
# its send claim/order/hs columns are: start entered, after the share, after the put).
# Then make test-gpu's steps that 2 GPUs run, with this build.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O; nvidia-smi -L | tee $O/gpus.txt
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1; shift; timeout -k 5 60 $R -n 2 --timeout 55 -- $P -d float32 -G 1 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; }
for r in 1 2 3; do
  for v in base start; do
    SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so g r$r-$v -R 1 -o sendrecv -b 8 -e 32K -f 8 -n 3000 -w 200
  done
  g r$r-new -R 1 -o sendrecv -b 8 -e 32K -f 8 -n 3000 -w 200
  g r$r-nccl-R0 --engine nccl -R 0 -o sendrecv -b 8 -e 32K -f 8 -n 3000 -w 200
  g r$r-nccl-R1 --engine nccl -R 1 -o sendrecv -b 8 -e 32K -f 8 -n 3000 -w 200
done
for v in basetr newtr; do for s in 8 4K; do
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so g tr-$v-$s -R 1 -c 0 -o sendrecv -b $s -e $s -n 2500 -w 100
  grep -h P2PTR $O/tr-$v-$s.txt | head -2
done; done
mkdir -p $O/test-gpu
OUT=$O/test-gpu timeout -k 5 $(( t0 + 560 - $(date +%s) )) bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "passed|FAIL" $O/test-gpu.out | tail -8
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
