#!/usr/bin/env bash
# session 24 call k2 (1 H200): the whole of make test-gpu with k1's build (main + the eager receive that looks
# again), ranks sharing the one GPU (SHARE_GPU=4); the steps that need more GPUs are skipped by the script.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O/test-gpu
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 570 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -40
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
