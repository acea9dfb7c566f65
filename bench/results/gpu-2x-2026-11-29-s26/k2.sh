#!/usr/bin/env bash
# session 26 call k2 (2x H200), knobs only: (a) sendrecv 8 B-64 KiB with blocks of 128 (or 256) threads up to
# 8 or 32 KiB (variant T, k2-varT.diff: the small-launch threshold and threads from SC_VAR_SMALL_BYTES /
# SC_VAR_SMALL_THREADS) against main (128 threads to 1 KiB, else 512), 3 rounds; (b) sendrecv 1-512 MiB,
# SYMCOMM_P2P_LANES=32 against the default 16, NCCL -R 1 beside, 2 rounds; (c) the collectives 512 KiB-32 MiB
# with SYMCOMM_COLL_MAX_BLOCKS=32 / 64 against the default (128), all-reduce two-shot, NCCL plain and -R 1.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
VT="LD_LIBRARY_PATH=$PWD/build-ab/varT SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varT/libsymcomm_cuda.so"
show() { grep -E "^ +[0-9]+ " $1 | awk '{print $1, $6, $10}' | tr '\n' ';'; echo; }
for r in 1 2 3; do
  for v in main t8k t32k t32k256; do
    case $v in main) X=;; t8k) X="$VT SC_VAR_SMALL_BYTES=8192 SC_VAR_SMALL_THREADS=128";;
      t32k) X="$VT SC_VAR_SMALL_BYTES=32768 SC_VAR_SMALL_THREADS=128";;
      t32k256) X="$VT SC_VAR_SMALL_BYTES=32768 SC_VAR_SMALL_THREADS=256";; esac
    env $X timeout -k 5 60 $R $P -R 1 -o sendrecv -b 8 -e 64K -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
    echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/sr-$v-r$r.txt
  done
done
for r in 1 2; do
  for v in l16 l32 nccl1; do
    X=; E="--engine symcomm"; case $v in l32) X=SYMCOMM_P2P_LANES=32;; nccl1) E="--engine nccl";; esac
    env $X timeout -k 5 100 $R $P $E -R 1 -o sendrecv -b 1M -e 512M -f 4 -n 50 -w 5 -G 1 > $O/big-$v-r$r.txt 2>&1
    echo "== big-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/big-$v-r$r.txt
  done
done
OPS=allgather,reducescatter,alltoall,allreduce,reduce,broadcast
for r in 1 2; do
  for v in b128 b64 b32 two nccl0 nccl1; do
    X=; E="--engine symcomm -R 1"; case $v in b64) X=SYMCOMM_COLL_MAX_BLOCKS=64;; b32) X=SYMCOMM_COLL_MAX_BLOCKS=32;;
      two) X=SYMCOMM_ALGO=allreduce=twoshot;; nccl0) E="--engine nccl -R 0";; nccl1) E="--engine nccl -R 1";; esac
    env $X timeout -k 5 100 $R $P $E -o $OPS -b 512K -e 32M -f 2 -n 200 -w 20 -G 1 > $O/coll-$v-r$r.txt 2>&1
    echo "== coll-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^# [a-z]+, |^ +[0-9]+ " $O/coll-$v-r$r.txt | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo
  done
done
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
