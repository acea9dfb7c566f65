#!/usr/bin/env bash
# session 26 call k4 (2x H200): N (main + 128/256-thread blocks to 4/16 KiB, 32 lanes, eager to 64 KiB; now
# build/) with SYMCOMM_P2P_LANES=16 against 32 and against 32 with SYMCOMM_P2P_LANE_BYTES=131072, sendrecv
# 64 KiB-512 MiB into a window, alternating, 2 rounds, NCCL -R 1 beside (k3 found 128 KiB-2 MiB slower than
# k1's 16 lanes, on another host); make test-gpu's p2p_ steps with N.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^ +[0-9]+ " $1 | awk '{print $1, $6, $10}' | tr '\n' ';'; echo; }
for r in 1 2; do
  for v in l16 l32 l32b128k nccl1; do
    X=; E="--engine symcomm"; case $v in l16) X=SYMCOMM_P2P_LANES=16;; l32b128k) X=SYMCOMM_P2P_LANE_BYTES=131072;;
      nccl1) E="--engine nccl";; esac
    env $X timeout -k 5 100 $R $P $E -R 1 -o sendrecv -b 64K -e 512M -f 2 -n 50 -w 5 -G 1 > $O/big-$v-r$r.txt 2>&1
    echo "== big-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/big-$v-r$r.txt
  done
done
ONLY='^p2p_' OUT=$O/test-gpu timeout -k 5 200 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -6
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
