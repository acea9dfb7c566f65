#!/usr/bin/env bash
# session 25 call k7 (1 H200): k6's B4 cost 0.5 us at 8 B-1 KiB and saved 0.8-2.2 us at 16-64 KiB. Variant H
# (build-ab/varH, k7-varH.diff over M's p2p.h): B4 where a thread has more than one line, main's one-line look
# and copy otherwise. M against H and B2 (build-ab/varB2, not run in k6: not carried), alternating, 3 rounds,
# 8 B-64 KiB, eager to 32 KiB and to 64 KiB; a few make test-gpu send/recv steps with H (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k7; mkdir -p $O/test-varH
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2"
for r in 1 2 3; do for v in varM varH varB2; do for e in x 64K; do
  X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; [ $e = 64K ] && X="$X SYMCOMM_P2P_EAGER_BYTES=65536"
  env $X $P -R 1 -o sendrecv -b 8 -e 64K -f 2 -n 500 -w 50 -G 1 > $O/sr-$v-e$e-r$r.txt 2>&1
  echo "== sr-$v-e$e-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-e$e-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done; done
cp build-ab/varH/libsymcomm_cuda.so build/lib/libsymcomm_cuda.so
ONLY='^(p2p_sizes_2|p2p_into_windows_2|p2p_size_mismatch|p2p_eager_64k_sizes_2|p2p_eager_mismatch_odd_2|p2p_mismatch_no_eager_2|perf_threads_2)$' \
SHARE_GPU=4 OUT=$O/test-varH timeout -k 5 120 bash tests/gpu/run.sh build > $O/test-varH.out 2>&1
echo "test-varH rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-varH.out | tail -4
cd $OUT && tar czf k7.tgz k7 && rm -rf k7; echo "total $(( $(date +%s)-t0 ))s"
