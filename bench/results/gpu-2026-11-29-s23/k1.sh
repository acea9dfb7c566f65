#!/usr/bin/env bash
# session 23 call k1 (1 H200): an eager send ends at its put (main's working tree, build/lib).
# (1) on the proxy (ranks as threads on one GPU), sendrecv 8 B-32 KiB against s22main (77ee2b4 built whole:
# a send waits for its ack; the pad's layout differs, so its own library and symcomm-perf), alternating,
# 3 rounds; all-to-all 4 ranks the same; (2) make test-gpu's
# mismatch and eager steps with 2-4 processes on the one GPU (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do for v in s22main new; do
  Q=build-ab/s22main/bin/symcomm-perf; [ $v = new ] && Q=$P
  t sr2-$v-r$r 60 $Q --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
done; done
for v in s22main new; do
  Q=build-ab/s22main/bin/symcomm-perf; [ $v = new ] && Q=$P
  SYMCOMM_COLL_MAX_BLOCKS=16 t a2a4-$v 60 $Q --threads 4 -o alltoall -b 8 -e 64K -f 8 -n 500 -w 50 -G 1 -R 1
done
ONLY='^(p2p_size_mismatch|p2p_eager_mismatch_odd_2|p2p_lanes_mismatch_2|p2p_into_windows_2|p2p_mismatch_no_eager_2|p2p_eager_order_10000|p2p_order_10000|p2p_sizes_2|gpu_graph_1000_2|perf_threads_2|perf_threads_4)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 330 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
