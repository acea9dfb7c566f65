#!/usr/bin/env bash
# session 27 call k8 (2x H200): main 36d5b78 (k5's L + the launch's check of an argument block's item count
# against its bytes): make test-gpu whole; sendrecv and all-reduce 8 B-32 KiB in graphs of 20 x 50.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k8; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -8
timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf -R 1 -o sendrecv,allreduce -b 8 -e 32K -f 8 -n 20 -G 50 -w 20 > $O/g50.txt 2>&1
echo "== g50 rc=$?"; grep -E "^# [a-z]+, |^ +[0-9]+ " $O/g50.txt | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo
cd $OUT && tar czf k8.tgz k8 && rm -rf k8; echo "total $(( $(date +%s)-t0 ))s"
