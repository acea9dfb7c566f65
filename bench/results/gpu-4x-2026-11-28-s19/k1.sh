#!/usr/bin/env bash
# session 19 call k1 (4x H200): the GEMM beside 64 MiB all-reduces with symcomm's blocks capped
# (SYMCOMM_COLL_MAX_BLOCKS), what the cap costs alone from 1 MiB, sendrecv 8 B on 2 GPUs, then
# issue 9's gate, part np, run 1 (8 B .. 1 GiB) into build/gate4 (kept on the host for later calls).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O; nvidia-smi -L | tee $O/gpus.txt
cub=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] 2>/dev/null | head -1)
[ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 np=$2; shift 2; timeout -k 5 60 $R -n $np --timeout 55 -- $P -d float32 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; }
g gemm-nccl-R0 4 --engine nccl -o allreduce -b 64M -e 64M -G 1 -R 0 --gemm 8192
for mb in 0 16 32 64; do SYMCOMM_COLL_MAX_BLOCKS=$mb g gemm-sym-R1-mb$mb 4 -o allreduce -b 64M -e 64M -G 1 -R 1 --gemm 8192; done
g gemm-nccl-R0-b 4 --engine nccl -o allreduce -b 64M -e 64M -G 1 -R 0 --gemm 8192
for mb in 32 64; do SYMCOMM_COLL_MAX_BLOCKS=$mb g cap-sym-R1-mb$mb 4 -o allreduce,allgather,reducescatter,alltoall -b 1M -e 1G -f 4 -G 1 -R 1; done
for G in 1 10; do g sr-nccl-G$G 2 --engine nccl -o sendrecv -b 8 -e 64K -f 8 -G $G -R 0; g sr-sym-G$G 2 -o sendrecv -b 8 -e 64K -f 8 -G $G -R 1; done
left=$(( t0 + 555 - $(date +%s) )); echo "gate np run 1 gets ${left}s"
timeout -k 5 $left bash bench/run_gpu.sh --gate --part np --run 1 --build build --no-make --out build/gate4 --timeout 300 > $O/gate-np-run1.out 2>&1
echo "gate rc=$? $(( $(date +%s)-t0 ))s"; ls build/gate4
cd build && tar czf $OUT/k1-gate4.tgz gate4; cd $OUT && tar czf k1.tgz k1 && rm -rf k1; ls -la $OUT
