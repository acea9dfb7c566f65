#!/usr/bin/env bash
# session 15 call 9 (2 GPUs): the LL call with its argument check free of branches between loads and of division,
# the input's load after the counters' and the descriptor's (new; call 8's sc_ll_where_t dropped) against the call of e7 (mirror: the stop word's
# device copy) and NCCL, -R 1, all-reduce and all-gather 8 B-64 KiB, 3 runs; the GPU steps of the collectives.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
M="mirror:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/mirror/libsymcomm_cuda.so"
N="new:build/lib:SYMCOMM_BACKEND=cuda"
XVARS="$M $N nccl:nccl" OPS="allreduce allgather" NP=2 E=64K REPS=3 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cuobjdump -sass build-ab/sass/coll_ll.fatbin | gzip > $OUT/sass_coll_ll.txt.gz
ONLY='^(unit_cuda|coll_|async_error|gpu_graph)' TT=${TT:-240} TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
