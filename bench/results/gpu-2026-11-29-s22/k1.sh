#!/usr/bin/env bash
# session 22 call k1 (1 H200): symcomm-perf --threads (ranks as threads of one process, their kernels side by
# side on the one GPU instead of taking turns as processes do): does it run, what a call costs on this proxy
# (L2 instead of NVLink between the "ranks"), and the barrier stamps (bartrace21.py + one owner rank, s22st).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O; nvidia-smi -L | tee $O/gpus.txt
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=15 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ |^# [a-z]+,|Out of bounds|BARTR|rror|fail|WARN" $O/$name.txt | head -${HEADN:-60}; }
t th2-all 90 $P --threads 2 -o all -b 8 -e 1M -f 8 -R 1
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-ar 90 $P --threads 4 -o allreduce -b 8 -e 64M -f 4 -R 1 -G 1 -n 50 -w 10
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-rest 120 $P --threads 4 -o allgather,reducescatter,alltoall,broadcast,reduce -b 8 -e 16M -f 8 -R 1 -G 1 -n 50 -w 10
t th2-sr 60 $P --threads 2 -o sendrecv,allreduce -b 8 -e 64K -f 8 -R 1 -G 1 -n 200 -w 20
for v in 1 2; do
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22st/libsymcomm_cuda.so SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_MAX_BLOCKS=32 \
    t st4-ar64k-$v 60 $P --threads 4 -o allreduce -b 64K -e 64K -n 2100 -w 50 -G 1 -c 0 -R 1
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22st/libsymcomm_cuda.so SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 \
    t st2-ar64k-$v 60 $P --threads 2 -o allreduce -b 64K -e 64K -n 2100 -w 50 -G 1 -c 0 -R 1
done
SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22st/libsymcomm_cuda.so SYMCOMM_COLL_MAX_BLOCKS=32 \
  t st4-ar4m 60 $P --threads 4 -o allreduce -b 4M -e 4M -n 2100 -w 50 -G 1 -c 0 -R 1
HEADN=20 t th4-nocap 60 $P --threads 4 -o allreduce,alltoall -b 1M -e 64M -f 8 -R 1 -G 1 -n 20 -w 5
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
