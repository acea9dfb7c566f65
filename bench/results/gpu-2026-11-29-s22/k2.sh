#!/usr/bin/env bash
# session 22 call k2 (1 H200): k1 again with symcomm-perf --threads setting CUDA_DEVICE_MAX_CONNECTIONS=32 (k1's
# timeouts: a rank's kernel never started while another rank's waited for it), once with 8 (CUDA's default) to
# see whether that was it; the stamps with the print's condition fixed (tr[11], the second barrier's last stamp).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |^# [a-z]+,|Out of bounds|BARTR|rror|fail" | head -${HEADN:-70}; }
t th2-all 90 $P --threads 2 -o all -b 8 -e 1M -f 8 -R 1
CUDA_DEVICE_MAX_CONNECTIONS=8 HEADN=8 t th2-all-c8 60 $P --threads 2 -o all -b 8 -e 1M -f 8 -R 1
t th2-sr 60 $P --threads 2 -o sendrecv,allreduce,allgather -b 8 -e 1M -f 8 -R 1 -G 1 -n 200 -w 20
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-ar 90 $P --threads 4 -o allreduce -b 8 -e 64M -f 4 -R 1 -G 1 -n 50 -w 10
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-rest 120 $P --threads 4 -o allgather,reducescatter,alltoall,broadcast,reduce -b 8 -e 16M -f 8 -R 1 -G 1 -n 50 -w 10
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22st/libsymcomm_cuda.so
SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_MAX_BLOCKS=32 t st4-ar64k 60 $P --threads 4 -o allreduce -b 64K -e 64K -n 2100 -w 50 -G 1 -c 0 -R 1
SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 t st2-ar64k 60 $P --threads 2 -o allreduce -b 64K -e 64K -n 2100 -w 50 -G 1 -c 0 -R 1
SYMCOMM_COLL_MAX_BLOCKS=32 t st4-ar4m 60 $P --threads 4 -o allreduce -b 4M -e 4M -n 2100 -w 50 -G 1 -c 0 -R 1
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
