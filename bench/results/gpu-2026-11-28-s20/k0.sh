#!/usr/bin/env bash
# session 20 call k0 (1 H200: no 2-GPU kind was lent): make test-gpu's steps that one GPU runs (the
# backend, every kernel file loaded, the bulk data paths, backend choice, one-rank topology), with
# this session's build (the P2P program's eager start and end), logs packed into k0.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k0; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
OUT=$O/test-gpu timeout -k 5 500 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL)|passed" $O/test-gpu.out | tail -14
cd $OUT && tar czf k0.tgz k0 && rm -rf k0; echo "total $(( $(date +%s)-t0 ))s"
