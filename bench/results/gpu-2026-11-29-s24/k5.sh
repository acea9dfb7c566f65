#!/usr/bin/env bash
# session 24 call k5 (2x H200, the host of k4, warm): (1) sendrecv 8 B-2 KiB doubling, symcomm -R 1 (2 runs)
# and NCCL plain: where small messages above 8 B lose their time; (2) issue 9's 2-GPU gate part and the GEMM,
# 3 runs, 8 B-1 GiB.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O
nvidia-smi -L > $O/gpus.txt
cub=$(ls /usr/local/cuda/lib64/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[23] 2>/dev/null | head -1)
echo "cublas: $cub"; [ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
R="build/bin/symcomm-run -n 2 --timeout 55 --"
for v in sym1 nccl0 sym2 sym-noearly; do
  case $v in sym*) E="--engine symcomm -R 1";; nccl0) E="--engine nccl -R 0";; esac
  X=; [ $v = sym-noearly ] && X="SYMCOMM_P2P_EARLY_START=0"
  env $X timeout -k 5 60 $R build/bin/symcomm-perf $E -o sendrecv -b 8 -e 2K -f 2 -n 1000 -w 50 -G 1 > $O/srf2-$v.txt 2>&1
  echo "== srf2-$v rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/srf2-$v.txt | awk '{print $1, $6, $10}' | tr '\n' ';'; echo
done
timeout -k 5 420 bash bench/run_gpu.sh --gate --np 2 --part "2 gemm" --runs 3 --min-runs 3 -b 8 -e 1G --timeout 200 \
  --build build --no-make --out $O/gate2 > $O/gate2.out 2>&1
echo "gate2 rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^\| |Verdict" $O/gate2.out | head -24
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
