#!/usr/bin/env bash
# session 26 call k1 (2x H200): (1) make test-gpu's send/recv steps (p2p_*) on 2 GPUs with main 0ff3047
# (session 25's batched eager receive, never run over NVLink); (2) sendrecv 8 B-2 MiB, symcomm -R 1 (default,
# and SYMCOMM_P2P_EAGER_BYTES=65536) against NCCL plain and -R 1, alternating, 3 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; nvidia-smi topo -m >> $O/gpus.txt 2>&1; head -4 $O/gpus.txt
ONLY='^p2p_' OUT=$O/test-gpu timeout -k 5 240 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
R="build/bin/symcomm-run -n 2 --timeout 55 --"
for r in 1 2 3; do
  for v in sym sym64 nccl0 nccl1; do
    X=; case $v in sym) E="--engine symcomm -R 1";; sym64) E="--engine symcomm -R 1"; X=SYMCOMM_P2P_EAGER_BYTES=65536;;
      nccl0) E="--engine nccl -R 0";; nccl1) E="--engine nccl -R 1";; esac
    env $X timeout -k 5 60 $R build/bin/symcomm-perf $E -o sendrecv -b 8 -e 2M -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
    echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-r$r.txt | awk '{print $1, $6, $10}' | tr '\n' ';'; echo
  done
done
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
