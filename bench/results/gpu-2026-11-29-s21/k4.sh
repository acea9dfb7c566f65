#!/usr/bin/env bash
# session 21 call k4 (1 H200): k3's stamps again with the traced kernels' gap limit raised to 100 ms (ranks sharing
# the GPU take turns: k3's calls took 4.5 ms and no call was counted); the driver's GPU list without nvidia-smi
# (run_gpu.sh's host record); SHARE_GPU's skips and the tests' SYMCOMM_SHARE_DEVICE parsing (this tree's build).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
for f in /proc/driver/nvidia/gpus/*/information; do echo "== $f"; cat "$f"; done 2>&1 | tee $O/proc-information.txt | head -12
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 v=$2; shift 2; SYMCOMM_SHARE_DEVICE=1 SYMCOMM_DEVICE=0 SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so \
  timeout -k 5 60 $R -n 2 --timeout 55 -- $P -d float32 -G 1 -c 0 -R 1 "$@" > $O/$name-$v.txt 2>&1; echo "$name $v rc=$? $(( $(date +%s)-t0 ))s"; grep -h BARTR $O/$name-$v.txt | head -2; }
for round in 1 2; do for v in bbase bnew; do
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 g ar64k-r$round $v -o allreduce -b 64K -e 64K -n 2100 -w 50
done; done
ONLY='^(comm_basic_2|comm_basic_4|tp_dp_2x2|topo_check|fault_kill9_allreduce|fault_abort_thread)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 200 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -10
SHARE_GPU=abc bash tests/gpu/run.sh build 2>&1 | tail -1
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
