#!/usr/bin/env bash
# session 22 call k8 (1 H200): threads per block for small calls, on the proxy (ranks as threads, one GPU):
# build-ab/s22thr = main's kernels with a launcher that takes SCX_P2P_THREADS / SCX_COLL_THREADS (an experiment,
# not in main); 512 is main's. Sendrecv 8 B-32 KiB (2 ranks), all-reduce 8 B-32 KiB (LL, 2 and 4 ranks), checked.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k8; mkdir -p $O
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |Out of|rror|fail" | head -${HEADN:-12}; }
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22thr/libsymcomm_cuda.so
for r in 1 2; do for th in 512 256 128 64; do
  SCX_P2P_THREADS=$th SYMCOMM_COLL_MAX_BLOCKS=32 t sr2-t$th-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 8 -n 1000 -w 50 -G 1 -R 1
  SCX_COLL_THREADS=$th SYMCOMM_COLL_MAX_BLOCKS=32 t ar2-t$th-r$r 60 $P --threads 2 -o allreduce -b 8 -e 32K -f 8 -n 1000 -w 50 -G 1 -R 1
  SCX_COLL_THREADS=$th SYMCOMM_COLL_MAX_BLOCKS=16 t ar4-t$th-r$r 60 $P --threads 4 -o allreduce -b 8 -e 32K -f 8 -n 1000 -w 50 -G 1 -R 1
done; done
cd $OUT && tar czf k8.tgz k8 && rm -rf k8; echo "total $(( $(date +%s)-t0 ))s"
