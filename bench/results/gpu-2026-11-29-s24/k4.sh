#!/usr/bin/env bash
# session 24 call k4 (2x H200, the first 2-GPU host since session 19): (1) bulk_copy: the bulk copy engine
# against the SM loop per SM, local, pushed to and pulled from the peer over NVLink; (2) sendrecv 8 B-32 KiB,
# symcomm (-R 1) against NCCL plain and -R 1, alternating, 3 rounds (sessions 20-24's send/recv changes, first
# time on NVLink); (3) issue 9's 2-GPU gate part, one run, 8 B-256 MiB; (4) sendrecv 512 MiB, both engines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; nvidia-smi topo -m >> $O/gpus.txt 2>&1; cat $O/gpus.txt | head -4
timeout -k 5 90 build/bin/bulk_copy 256 > $O/bulk_copy.txt 2>&1; echo "bulk_copy rc=$? $(( $(date +%s)-t0 ))s"; cat $O/bulk_copy.txt
R="build/bin/symcomm-run -n 2 --timeout 55 --"
for r in 1 2 3; do
  for v in sym nccl0 nccl1; do
    case $v in sym) E="--engine symcomm -R 1";; nccl0) E="--engine nccl -R 0";; nccl1) E="--engine nccl -R 1";; esac
    timeout -k 5 60 $R build/bin/symcomm-perf $E -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
    echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-r$r.txt | awk '{print $1, $6, $10}' | tr '\n' ';'; echo
  done
done
timeout -k 5 230 bash bench/run_gpu.sh --gate --np 2 --part "2" --runs 1 --min-runs 1 -b 8 -e 256M --timeout 110 \
  --build build --no-make --out $O/gate2 > $O/gate2.out 2>&1
echo "gate2 rc=$? $(( $(date +%s)-t0 ))s"; tail -40 $O/gate2.out
for v in sym nccl0 nccl1; do
  case $v in sym) E="--engine symcomm -R 1";; nccl0) E="--engine nccl -R 0";; nccl1) E="--engine nccl -R 1";; esac
  timeout -k 5 60 $R build/bin/symcomm-perf $E -o sendrecv -b 512M -e 512M -n 20 -w 5 -G 1 > $O/sr512-$v.txt 2>&1
  echo "== sr512-$v rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr512-$v.txt
done
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
