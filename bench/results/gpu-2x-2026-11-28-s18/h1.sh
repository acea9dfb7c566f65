#!/usr/bin/env bash
# session 18 call h1 (2x H200): issue 9's gate script for real: its 2-GPU part and the GEMM beside 64 MiB
# all-reduces on 2 GPUs (one run, 8 B .. 64 MiB), the SMs from the logs; then how long one 1 GiB sweep takes.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
cub=$(ls /usr/local/cuda/lib64/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[23] 2>/dev/null | head -1)
echo "cublas: $cub"; [ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
timeout -k 5 230 bash bench/run_gpu.sh --gate --np 2 --part "2 gemm" --runs 1 --min-runs 1 -b 8 -e 64M --timeout 100 \
  --build build --no-make --out $OUT/gate2 > $OUT/gate2.out 2>&1
echo "gate rc=$? $(( $(date +%s)-t0 ))s"; tail -45 $OUT/gate2.out
t1=$(date +%s)
timeout -k 5 60 build/bin/symcomm-run -n 2 --timeout 55 -- build/bin/symcomm-perf -o allreduce -b 1G -e 1G -G 1 -R 1 > $OUT/one_1g.txt 2>&1
echo "1 GiB all-reduce alone rc=$? $(( $(date +%s)-t1 ))s"; tail -4 $OUT/one_1g.txt
