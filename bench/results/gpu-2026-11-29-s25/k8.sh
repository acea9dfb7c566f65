#!/usr/bin/env bash
# session 25 call k8 (1 H200): make test-gpu's send/recv steps (p2p_*, as k2) with the final build (M + H,
# comments only changed since k7), SHARE_GPU=4.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k8; mkdir -p $O/test-gpu
ONLY='^p2p_' SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 150 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k8.tgz k8 && rm -rf k8; echo "total $(( $(date +%s)-t0 ))s"
