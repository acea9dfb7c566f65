#!/usr/bin/env bash
# session 27 call k3 (2x H200): where a small send/recv's time goes. build-ab/vtr: the cut build with
# %globaltimer stamps in the P2P kernel (block 0's leader; k3-p2p-trace.diff), averaged over 2048 calls and
# printed by the kernel (P2PTR lines): sendrecv 8 B and 4 KiB in graphs of 20 x 200, and without graphs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/vtr/libsymcomm_cuda.so
for b in 8 4096; do
  for g in "-n 20 -G 200" "-n 4000 -G 0"; do
    for e in 1 0; do
      n=sr$b-$(echo $g | tr -d ' -')-e$e
      env SYMCOMM_P2P_EARLY_START=$e timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf -R 1 -o sendrecv -b $b -e $b $g -w 50 > $O/$n.txt 2>&1
      echo "== $n rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/$n.txt | awk '{print $1, $6}'; grep P2PTR $O/$n.txt | tail -2
    done
  done
done
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
