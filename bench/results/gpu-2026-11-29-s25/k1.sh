#!/usr/bin/env bash
# session 25 call k1 (1 H200): the whole of make test-gpu on main 917746d (with 1f3148c: an eager receive whose
# header is there with its size looks again at once for a data line on its way), ranks sharing the GPU
# (SHARE_GPU=4); the steps that need more GPUs are skipped by the script.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 570 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; cat $O/gpu.txt; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -40
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
