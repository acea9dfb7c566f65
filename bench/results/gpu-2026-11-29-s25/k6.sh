#!/usr/bin/env bash
# session 25 call k6 (1 H200): k5's batches without the spills (sc_kernel_p2p is at its 128 registers: k5's
# batches of 8 spilled 100 bytes and cost 2.7 us at 8 B). Variant M (build-ab/varM) against B4 (build-ab/varB4:
# the receive's look and copy in batches of 4 lines a thread, the put as in main; k6-varB4.diff) and B2
# (build-ab/varB2: put, look and copy in batches of 2; k6-varB2.diff), each over M's p2p.h; neither spills.
# sendrecv proxy (2 ranks as threads), alternating, 3 rounds, 8 B-64 KiB, eager to 32 KiB and to 64 KiB; then
# a few make test-gpu send/recv steps with each of B4 and B2 (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k6; mkdir -p $O
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2"
for r in 1 2 3; do for v in varM varB4 varB2; do for e in x 64K; do
  X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; [ $e = 64K ] && X="$X SYMCOMM_P2P_EAGER_BYTES=65536"
  env $X $P -R 1 -o sendrecv -b 8 -e 64K -f 2 -n 500 -w 50 -G 1 > $O/sr-$v-e$e-r$r.txt 2>&1
  echo "== sr-$v-e$e-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-e$e-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done; done
for v in varB4 varB2; do
  mkdir -p $O/test-$v; cp build-ab/$v/libsymcomm_cuda.so build/lib/libsymcomm_cuda.so
  ONLY='^(p2p_sizes_2|p2p_into_windows_2|p2p_size_mismatch|p2p_eager_64k_sizes_2|p2p_eager_mismatch_odd_2|p2p_mismatch_no_eager_2|perf_threads_2)$' \
  SHARE_GPU=4 OUT=$O/test-$v timeout -k 5 120 bash tests/gpu/run.sh build > $O/test-$v.out 2>&1
  echo "test-$v rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-$v.out | tail -4
done
cd $OUT && tar czf k6.tgz k6 && rm -rf k6; echo "total $(( $(date +%s)-t0 ))s"
