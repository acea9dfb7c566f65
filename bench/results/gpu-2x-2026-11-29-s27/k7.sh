#!/usr/bin/env bash
# session 27 call k7 (2x H200): issue 9's 2-GPU gate part and the GEMM, 3 runs, 8 B-1 GiB, with main 654c4cd (the parameters cut after the arguments, the lane-ticket skips by a warp, one fence for both done counters; build/).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k7; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
cub=$(ls /usr/local/cuda/lib64/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[23] 2>/dev/null | head -1)
echo "cublas: $cub"; [ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout -k 5 560 bash bench/run_gpu.sh --gate --np 2 --part "2 gemm" --runs 3 --min-runs 3 -b 8 -e 1G --timeout 200 \
  --build build --no-make --out $O/gate2 > $O/gate2.out 2>&1
echo "gate2 rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^\| |Verdict" $O/gate2.out | head -24
cd $OUT && tar czf k7.tgz k7 && rm -rf k7; echo "total $(( $(date +%s)-t0 ))s"
