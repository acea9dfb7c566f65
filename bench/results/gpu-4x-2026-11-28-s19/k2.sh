#!/usr/bin/env bash
# session 19 call k2 (4x H200): where LL and the barrier paths should take over, and on how many
# blocks, on 4 and 2 GPUs: symcomm -R 1 with SYMCOMM_LL_MAX_BYTES / SYMCOMM_COLL_BLOCKS forced, against
# NCCL (plain and -R 1) in the same call. Files: k2/NAME.txt (NAME = np, variant).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 np=$2; shift 2; timeout -k 5 60 $R -n $np --timeout 55 -- $P -d float32 -G 1 -n 50 -w 10 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; }
OPS4=allreduce,allgather,reducescatter,alltoall
OPS2=allreduce,allgather,reducescatter,alltoall,broadcast,reduce
for np in 4 2; do
  ops=$OPS4; [ $np = 2 ] && ops=$OPS2
  g np$np-nccl-R0 $np --engine nccl -o $ops -b 16K -e 16M -f 2 -R 0
  g np$np-nccl-R1 $np --engine nccl -o $ops -b 16K -e 16M -f 2 -R 1
  g np$np-sym-default $np -o $ops -b 16K -e 16M -f 2 -R 1
  for b in 8 16 32 64 128; do SYMCOMM_LL_MAX_BYTES=1048576 SYMCOMM_COLL_BLOCKS=$b g np$np-sym-ll-b$b $np -o $ops -b 16K -e 4M -f 2 -R 1; done
  for b in 16 32 64; do SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_BLOCKS=$b g np$np-sym-noll-b$b $np -o $ops -b 64K -e 16M -f 2 -R 1; done
  SYMCOMM_LL_MAX_BYTES=0 g np$np-sym-noll-bdef $np -o $ops -b 64K -e 16M -f 2 -R 1
done
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
