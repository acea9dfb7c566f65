#!/usr/bin/env bash
# session 22 call k4 (1 H200): make test-gpu's new steps (perf_threads_*: ranks as threads on GPU 0, checked);
# then the proxy (ranks as threads, kernels side by side on the one GPU, L2 between "ranks" instead of NVLink):
# send/recv of small sizes (eager and not), all-reduce with and without the early start, blocks capped so that
# every rank's kernel and its early-started next one fit (16 a rank for 4, 32 for 2).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu
ONLY='^perf_threads' OUT=$O/test-gpu timeout -k 5 400 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |^# [a-z]+,|Out of bounds|rror|fail" | head -${HEADN:-40}; }
for r in 1 2; do
  SYMCOMM_COLL_MAX_BLOCKS=32 t sr2-r$r 60 $P --threads 2 -o sendrecv,allreduce -b 8 -e 64K -f 8 -R 1 -G 1 -n 500 -w 50
  SYMCOMM_P2P_EAGER_BYTES=0 SYMCOMM_COLL_MAX_BLOCKS=32 t sr2-rdv-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 64K -f 8 -R 1 -G 1 -n 500 -w 50
  SYMCOMM_COLL_EARLY_START=0 SYMCOMM_COLL_MAX_BLOCKS=32 t ar2-noearly-r$r 60 $P --threads 2 -o allreduce -b 8 -e 64K -f 8 -R 1 -G 1 -n 500 -w 50
  SYMCOMM_COLL_MAX_BLOCKS=16 t ar4-r$r 90 $P --threads 4 -o allreduce,allgather,reducescatter -b 8 -e 16M -f 4 -R 1 -G 1 -n 100 -w 20
  SYMCOMM_COLL_EARLY_START=0 SYMCOMM_COLL_MAX_BLOCKS=16 t ar4-noearly-r$r 90 $P --threads 4 -o allreduce -b 8 -e 16M -f 4 -R 1 -G 1 -n 100 -w 20
done
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
