#!/usr/bin/env bash
# session 14 call 1: the LL floor probe (4 and 2 GPUs); small calls, main against a build whose LL kernel
# reduces float32 sum alone (f32: its code 1 MB -> 143 KB) and NCCL, -R 1; the GPU steps of main's new code.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
mkdir -p $OUT/logs
( timeout 60 build/bin/ll_floor 4; timeout 60 build/bin/ll_floor 2 ) 2>&1 | tee $OUT/logs/ll_floor.txt
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="main:build/lib:SYMCOMM_BACKEND=cuda f32:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/f32/libsymcomm_cuda.so nccl:nccl"
XVARS="$V" OPS="allreduce reduce allgather broadcast" NP=4 E=64K REPS=1 EXTRA="-R 1" TAG=s4 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="$V" OPS="allreduce reduce" NP=2 E=64K REPS=1 EXTRA="-R 1" TAG=s2 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="main:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="sendrecv" NP=2 E=64K REPS=1 TAG=p2 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(unit_cuda|coll_matrix|coll_mismatch|coll_bad|p2p_sizes|p2p_eager|p2p_size_mismatch|fault_kill9_sendrecv|gpu_graph_1000_4)' TT=200 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
