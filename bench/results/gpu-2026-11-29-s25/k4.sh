#!/usr/bin/env bash
# session 25 call k4 (1 H200): variant M (build-ab/varM: main + k2's one share) against variant R (build/: M plus
# a rendezvous receive that posts its cts in the launch's first turn, sc_p2p_start; k4-varR.diff is the whole
# diff from main) on the sendrecv proxy (2 ranks as threads), alternating, 3 rounds, 8 B-4 MiB, -R 1, -R 0 and
# -R 1 without eager messages; variant R traced (build-ab/vtrR) at 8 B without eager and 64 KiB; variant R's
# make test-gpu send/recv steps (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2"
for r in 1 2 3; do for v in varM varR; do for cfg in "1 x" "0 x" "1 0"; do
  set -- $cfg; X=; [ $2 = 0 ] && X="SYMCOMM_P2P_EAGER_BYTES=0"
  [ $v = varM ] && X="$X SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varM/libsymcomm_cuda.so"
  env $X $P -R $1 -o sendrecv -b 8 -e 4M -f 4 -n 500 -w 50 -G 1 > $O/sr-$v-R$1-e$2-r$r.txt 2>&1
  echo "== sr-$v-R$1-e$2-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-R$1-e$2-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done; done
T="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/vtrR/libsymcomm_cuda.so"
for cfg in "1 8 0" "1 64K x" "0 64K x"; do
  set -- $cfg; X=; [ $3 = 0 ] && X="SYMCOMM_P2P_EAGER_BYTES=0"
  env $T $X $P -R $1 -o sendrecv -b $2 -e $2 -n 2100 -w 20 -G 1 > $O/tr-R$1-$2-e$3.txt 2>&1
  echo "== tr-R$1-$2-e$3 rc=$?"; grep -E "^ +[0-9]+ " $O/tr-R$1-$2-e$3.txt | awk '{print $1, $6, $10, $9}'; grep P2PTR $O/tr-R$1-$2-e$3.txt | tail -1
done
ONLY='^(p2p_|gpu_graph_1000_2|perf_threads_2|gpu_destroy_own_work_2|drain_deadline_2)' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
