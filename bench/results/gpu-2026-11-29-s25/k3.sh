#!/usr/bin/env bash
# session 25 call k3 (1 H200): where a rendezvous send/recv's time goes, on the proxy (2 ranks as threads on the
# one GPU). Untraced: sendrecv 8 B-4 MiB -R 1 and -R 0, twice each, and -R 1 without eager messages. Traced
# (build-ab/vtr: session 22's P2P stamps, p2ptrace-s22.patch re-applied by hand to main + variant M, block 0's
# leader, averages of 2048 calls): one size a run.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2"
for r in 1 2; do for R in 1 0; do
  $P -R $R -o sendrecv -b 8 -e 4M -f 2 -n 500 -w 50 -G 1 > $O/sr-R$R-r$r.txt 2>&1
  echo "== sr-R$R-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-R$R-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done
env SYMCOMM_P2P_EAGER_BYTES=0 $P -R 1 -o sendrecv -b 8 -e 4M -f 2 -n 500 -w 50 -G 1 > $O/sr-R1-e0.txt 2>&1
echo "== sr-R1-e0 rc=$?"; grep -E "^ +[0-9]+ " $O/sr-R1-e0.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
T="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/vtr/libsymcomm_cuda.so"
for cfg in "1 8 x" "1 8 0" "1 8K 0" "1 64K x" "1 256K x" "1 1M x" "0 64K x" "0 256K x" "0 1M x"; do
  set -- $cfg; X=; [ $3 = 0 ] && X="SYMCOMM_P2P_EAGER_BYTES=0"
  env $T $X $P -R $1 -o sendrecv -b $2 -e $2 -n 2100 -w 20 -G 1 > $O/tr-R$1-$2-e$3.txt 2>&1
  echo "== tr-R$1-$2-e$3 rc=$?"; grep -E "^ +[0-9]+ " $O/tr-R$1-$2-e$3.txt | awk '{print $1, $6, $10, $9}'; grep P2PTR $O/tr-R$1-$2-e$3.txt | tail -1
done
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
