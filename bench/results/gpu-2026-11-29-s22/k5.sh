#!/usr/bin/env bash
# session 22 call k5 (1 H200): where a small send/recv's time goes on the proxy (ranks as threads, one GPU):
# s19's P2P stamps for today's p2p.h (p2ptrace-s22.patch, build-ab/s22p2p: block 0's leader of one rank, ns from
# the kernel's entry, averages of 2048 calls), sendrecv of 8 B between 2 ranks, eager (default) and rendezvous.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |Out of bounds|P2PTR|rror|fail" | head -${HEADN:-40}; }
for r in 1 2; do
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22p2p/libsymcomm_cuda.so t p2p-eager-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 8 -R 1 -G 1 -n 4200 -w 50 -c 0
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22p2p/libsymcomm_cuda.so SYMCOMM_P2P_EAGER_BYTES=0 t p2p-rdv-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 8 -R 1 -G 1 -n 4200 -w 50 -c 0
  t plain-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 8 -R 1 -G 1 -n 4200 -w 50 -c 0
done
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
