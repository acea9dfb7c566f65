#!/usr/bin/env bash
# session 24 call k3 (1 H200): make test-gpu's send/recv steps with the final build (the leave sentence of a
# send behind an eager message its peer left untaken: err->untaken), ranks sharing the GPU (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O/test-gpu
ONLY='^(unit_|p2p_|gpu_graph_1000_2|gpu_graph_async_error_2|perf_threads_2|perf_threads_4|gpu_destroy_own_work_2|drain_deadline_2|async_error_timeout_3|coll_abort_queued_oneshot_2)' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 500 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1 > $O/sr2.txt 2>&1
echo "== sr2 rc=$?"; grep -E "^ +[0-9]+ |rror|fail" $O/sr2.txt | head -8
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
