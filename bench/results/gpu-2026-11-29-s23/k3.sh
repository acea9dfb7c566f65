#!/usr/bin/env bash
# session 23 call k3 (1 H200): A/B of an eager receive that takes a whole message after one block-wide vote
# (v1-take-one-share.diff: the header's size folded into the lines' vote; the verdict shared only when the
# message is not there whole) against main (afa57f6), on the proxy: sendrecv 8 B-32 KiB, 2 ranks as threads,
# alternating, 3 rounds; then make test-gpu's mismatch steps with the variant (SYMCOMM_CUDA_BACKEND_PATH).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O/test-gpu
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do for v in main v1; do
  L=$PWD/build/lib/libsymcomm_cuda.so; [ $v = v1 ] && L=$PWD/build-ab/s23v1/libsymcomm_cuda.so
  SYMCOMM_CUDA_BACKEND_PATH=$L t sr2-$v-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
done; done
ONLY='^(p2p_size_mismatch|p2p_eager_mismatch_odd_2|p2p_lanes_mismatch_2|p2p_sizes_2|perf_threads_2)$' \
SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s23v1/libsymcomm_cuda.so SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 200 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
