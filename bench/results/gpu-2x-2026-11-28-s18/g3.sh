#!/usr/bin/env bash
# session 18 call g3 (2x H200, right after h1 on the same host): the gate's 2-GPU and GEMM parts to 1 GiB, one
# run. Stopped by its 215 s limit during the third process (NCCL -R 1): what it left is NCCL plain and symcomm -R 1,
# 8 B .. 1 GiB, every collective and sendrecv (g3/).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/g3; t0=$(date +%s)
timeout -k 5 215 bash bench/run_gpu.sh --gate --np 2 --part "2 gemm" --runs 1 --min-runs 1 -b 8 -e 1G --timeout 200 \
  --build build --no-make --out /tmp/g3 > /tmp/g3.out 2>&1
echo "rc=$? $(( $(date +%s)-t0 ))s"; cp /tmp/g3.out /tmp/g3/; cd /tmp && tar czf $OUT/g3.tgz g3
