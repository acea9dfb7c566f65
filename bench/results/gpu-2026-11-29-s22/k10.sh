#!/usr/bin/env bash
# session 22 call k10 (1 H200): make test-gpu with 0ca6e74's build, ranks sharing the GPU (SHARE_GPU=4), the
# steps k9 did not run (k9: the send/recv steps and graphs 1000 replays passed with the 128-thread launches).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k10; mkdir -p $O/test-gpu
ONLY='^(unit_|backend_select|comm_basic|same_gpu|topo_tool|coll_|async_|gpu_graph_async|gpu_stream|gpu_pointers|gpu_drain|p2p_lanes|p2p_bad_args|p2p_into_windows_4|p2p_mismatch_no_eager|onesided|signal|window|tp_dp|net_coll_matrix_2x2|memory)' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 560 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -80
cd $OUT && tar czf k10.tgz k10 && rm -rf k10; echo "total $(( $(date +%s)-t0 ))s"
