#!/usr/bin/env bash
# session 26 call k3 (2x H200): N (build-ab/varN: main + blocks of 128 threads to 4 KiB and 256 to 16 KiB,
# 32 lanes, eager to 64 KiB) against P (build/: N + an eager put of several lines a thread in batches of 8
# loads, in a called function, k3-varP.diff): sendrecv 8 B-64 KiB alternating, 3 rounds, NCCL plain and -R 1
# once each; 128 KiB-512 MiB N, P and NCCL -R 1 once; then make test-gpu whole on the 2 GPUs with P.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^ +[0-9]+ " $1 | awk '{print $1, $6, $10}' | tr '\n' ';'; echo; }
for r in 1 2 3; do
  for v in N P; do
    X=; [ $v = N ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varN/libsymcomm_cuda.so"
    env $X timeout -k 5 60 $R $P -R 1 -o sendrecv -b 8 -e 64K -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
    echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/sr-$v-r$r.txt
  done
done
for v in nccl0 nccl1; do
  timeout -k 5 60 $R $P --engine nccl -R ${v#nccl} -o sendrecv -b 8 -e 64K -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v.txt 2>&1
  echo "== sr-$v rc=$? $(( $(date +%s)-t0 ))s"; show $O/sr-$v.txt
done
for v in N P nccl1; do
  X=; E="--engine symcomm"; [ $v = N ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varN/libsymcomm_cuda.so"
  [ $v = nccl1 ] && E="--engine nccl"
  env $X timeout -k 5 100 $R $P $E -R 1 -o sendrecv -b 128K -e 512M -f 4 -n 50 -w 5 -G 1 > $O/big-$v.txt 2>&1
  echo "== big-$v rc=$? $(( $(date +%s)-t0 ))s"; show $O/big-$v.txt
done
OUT=$O/test-gpu timeout -k 5 420 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL)|passed" $O/test-gpu.out | tail -12
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
