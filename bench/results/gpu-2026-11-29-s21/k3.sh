#!/usr/bin/env bash
# session 21 call k3 (1 H200): (1) make test-gpu's collective steps with c065081 (barriers read this rank's sync
# block from the arguments), ranks sharing the GPU (SHARE_GPU=4); (2) the barrier stamps (bartrace21.py, block 0's
# leader, averages of 2048 calls) of d0c7076 (bbase) and c065081 (bnew), 2 ranks on the one GPU, alternating:
# only the stamps of one rank's own work (start, open, arrive) mean anything here; the waits hold the other
# process's turn on the GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
ONLY='^(comm_basic_2|comm_basic_4|coll_matrix_2|coll_matrix_4|coll_large_4|coll_forced_oneshot_4|coll_forced_twoshot_4|coll_forced_split_4|coll_split_rounds_4|coll_1000_small_4|coll_order_4|coll_two_comms_at_once_4|coll_windows_in_place_4|coll_windows_kinds_4|coll_window_any_offset_4|coll_mismatch_4|coll_mismatch_named_4|coll_algo_differs_2|coll_stopped_stream_4|coll_slow_order_2|async_error_abort_4|async_error_timeout_3|async_error_disagree_2|gpu_graph_async_error_2|coll_ll_abort_queued_2|coll_abort_queued_oneshot_2|gpu_graph_1000_2|p2p_sizes_2|net_coll_matrix_2x2|tp_dp_2x2|memory_released)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL)|passed" $O/test-gpu.out | tail -40
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 v=$2; shift 2; SYMCOMM_SHARE_DEVICE=1 SYMCOMM_DEVICE=0 SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so \
  timeout -k 5 60 $R -n 2 --timeout 55 -- $P -d float32 -G 1 -c 0 -R 1 "$@" > $O/$name-$v.txt 2>&1; echo "$name $v rc=$? $(( $(date +%s)-t0 ))s"; grep -h BARTR $O/$name-$v.txt | head -2; }
for round in 1 2; do for v in bbase bnew; do
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 g ar64k-r$round $v -o allreduce -b 64K -e 64K -n 2100 -w 50
  SYMCOMM_LL_MAX_BYTES=0 g ag64k-r$round $v -o allgather -b 64K -e 64K -n 2100 -w 50
done; done
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
