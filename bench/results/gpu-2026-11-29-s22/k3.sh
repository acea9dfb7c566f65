#!/usr/bin/env bash
# session 22 call k3 (1 H200): k2 again with symcomm-perf's copies waiting for the legacy stream instead of the
# device (k1, k2's timeouts: a rank's upload waited, in cudaDeviceSynchronize, for another rank's kernel that
# waited for this rank's next one); once with CUDA_DEVICE_MAX_CONNECTIONS=8, once without the blocks' cap.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |^# [a-z]+,|Out of bounds|BARTR|rror|fail" | head -${HEADN:-70}; }
t th2-all 90 $P --threads 2 -o all -b 8 -e 1M -f 8 -R 1
CUDA_DEVICE_MAX_CONNECTIONS=8 HEADN=8 t th2-all-c8 60 $P --threads 2 -o all -b 8 -e 1M -f 8 -R 1
t th2-sr 60 $P --threads 2 -o sendrecv,allreduce,allgather -b 8 -e 1M -f 8 -R 1 -G 1 -n 200 -w 20
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-ar 90 $P --threads 4 -o allreduce -b 8 -e 64M -f 4 -R 1 -G 1 -n 50 -w 10
SYMCOMM_COLL_MAX_BLOCKS=32 t th4-rest 120 $P --threads 4 -o allgather,reducescatter,alltoall,broadcast,reduce -b 8 -e 16M -f 8 -R 1 -G 1 -n 50 -w 10
HEADN=30 t th4-nocap 90 $P --threads 4 -o allreduce,alltoall,allgather -b 1M -e 64M -f 8 -R 1 -G 1 -n 20 -w 5
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
