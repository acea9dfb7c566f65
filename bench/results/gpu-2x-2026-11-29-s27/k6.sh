#!/usr/bin/env bash
# session 27 call k6 (2x H200): what a graph's first launch costs (the gate's -G 1 -n 20), main 654c4cd (L):
# sendrecv and all-reduce 8 B-4 KiB, 3 rounds: L; L with the early start off; L with CUDA_MODULE_LOADING=EAGER;
# L + EN for send/recv only (build-ab/ven2, k4-varEN.diff's p2p.h part); NCCL -R 1 and NCCL -R 1 EAGER.
# The same in graphs of 20 x 50 once each.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k6; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
run() { # name env perf-args...
  local name=$1 e=$2; shift 2
  env $e timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; show $O/$name.txt
}
EN=SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/ven2/libsymcomm_cuda.so
for G in "1" "50"; do
  R=3; [ $G = 50 ] && R=1
  for r in $(seq 1 $R); do
    run g$G-L-r$r "X=1" -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
    run g$G-noearly-r$r "SYMCOMM_P2P_EARLY_START=0 SYMCOMM_COLL_EARLY_START=0" -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
    run g$G-eager-r$r "CUDA_MODULE_LOADING=EAGER" -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
    run g$G-en-r$r "$EN" -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
    run g$G-nccl1-r$r "X=1" --engine nccl -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
    run g$G-nccl1eager-r$r "CUDA_MODULE_LOADING=EAGER" --engine nccl -R 1 -o sendrecv,allreduce -b 8 -e 4K -f 8 -n 20 -G $G -w 20
  done
done
cd $OUT && tar czf k6.tgz k6 && rm -rf k6; echo "total $(( $(date +%s)-t0 ))s"
