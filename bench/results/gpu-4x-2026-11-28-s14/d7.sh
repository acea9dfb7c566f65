#!/usr/bin/env bash
# session 14 call 7: the LL line's reduction in registers (sc_dev_reduce_word) and 32-bit cuts (build/lib: main + this
# change; build-ab/exp2: the same with the trace patch) against the code before (build-ab/exp, SC_EXP=0 / 256);
# then the GPU steps of the collectives.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L | head -1
mkdir -p $OUT/logs
for v in exp exp2; do
  timeout -k 5 100 env SYMCOMM_BACKEND=cuda SC_EXP=256 LD_LIBRARY_PATH=$PWD/build-ab/$v build/bin/symcomm-run -n 4 --timeout 90 -- \
    build/bin/symcomm-perf -o allreduce -b 8 -e 8 -G 1 -n 1000 -w 50 -c 1 -R 1 > $OUT/logs/tr_$v.log 2>&1
  echo "$v traced rc=$? $(grep -E '^ +8 ' $OUT/logs/tr_$v.log | awk '{print $6 " us"}')"
  grep TRACE $OUT/logs/tr_$v.log | sort | head -2
done
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="old:build-ab/exp:SYMCOMM_BACKEND=cuda,SC_EXP=0 new:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather reduce" NP=4 E=64K REPS=2 EXTRA="-R 1" TAG=a4 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_matrix|coll_mismatch|coll_forced|coll_1000|coll_bad|gpu_graph_1000_4|async_error_abort_4|fault_kill9_allreduce$)' TT=240 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
