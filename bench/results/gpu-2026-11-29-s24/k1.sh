#!/usr/bin/env bash
# session 24 call k1 (1 H200): (1) bench/gpu_probe/bulk_copy.cu: what an SM copies with the bulk copy engine
# against the SM loop, local on the one GPU; (2) make test-gpu's send/recv steps with the eager receive that
# looks again before failing (SHARE_GPU=4); (3) the sendrecv proxy figure of main with it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
timeout -k 5 120 build/bin/bulk_copy 256 > $O/bulk_copy.txt 2>&1; echo "bulk_copy rc=$? $(( $(date +%s)-t0 ))s"; cat $O/bulk_copy.txt
ONLY='^(p2p_size_mismatch|p2p_eager_mismatch_odd_2|p2p_lanes_mismatch_2|p2p_into_windows_2|p2p_mismatch_no_eager_2|p2p_eager_order_10000|p2p_order_10000|p2p_sizes_2|gpu_graph_1000_2|perf_threads_2|perf_threads_4)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 330 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
for r in 1 2 3; do
  SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1 > $O/sr2-r$r.txt 2>&1
  echo "== sr2-r$r rc=$?"; grep -E "^ +[0-9]+ |rror|fail" $O/sr2-r$r.txt | head -8
done
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
