#!/usr/bin/env bash
# session 15 call 8 (2 GPUs): the LL call reading the descriptor once into registers (sc_ll_where_t) and checking its
# arguments without branches between loads or a division (new) against the call of e7 (mirror: the stop word's
# device copy) and NCCL, -R 1, every collective 8 B-64 KiB; SASS of the new LL kernel; make test-gpu.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
M="mirror:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/mirror/libsymcomm_cuda.so"
N="new:build/lib:SYMCOMM_BACKEND=cuda"
XVARS="$M $N nccl:nccl" OPS="allreduce allgather broadcast reduce reducescatter alltoall" NP=2 E=64K REPS=2 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cuobjdump -sass build-ab/sass/coll_ll.fatbin | gzip > $OUT/sass_coll_ll.txt.gz
TT=${TT:-240} TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
