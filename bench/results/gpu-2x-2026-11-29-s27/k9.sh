#!/usr/bin/env bash
# session 27 call k9 (2x H200): DE (build-ab/vde, k9-varDE.diff: main 89f2cf5 + a small send's done counter
# released before its put instead of after, in sc_p2p_eager_start; not landed) against main, sendrecv
# 8 B-32 KiB in graphs of 20 x 50, 3 rounds alternating; make test-gpu's p2p_ steps with DE.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k9; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
for r in 1 2 3; do
  for v in main de; do
    L=build/lib/libsymcomm_cuda.so; [ $v = de ] && L=build-ab/vde/libsymcomm_cuda.so
    env SYMCOMM_CUDA_BACKEND_PATH=$PWD/$L timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf -R 1 -o sendrecv -b 8 -e 32K -f 8 -n 20 -G 50 -w 20 > $O/$v-r$r.txt 2>&1
    echo "== $v-r$r rc=$?"; grep -E "^ +[0-9]+ " $O/$v-r$r.txt | awk '{printf "%s %s;", $1, $6}'; echo
  done
done
SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/vde/libsymcomm_cuda.so ONLY='^p2p_' OUT=$O/test-gpu timeout -k 5 150 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -4
cd $OUT && tar czf k9.tgz k9 && rm -rf k9; echo "total $(( $(date +%s)-t0 ))s"
