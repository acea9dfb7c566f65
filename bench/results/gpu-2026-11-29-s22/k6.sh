#!/usr/bin/env bash
# session 22 call k6 (1 H200): the barrier path's stamps as offsets from the kernel's entry (each alone, in
# call order), with three more before the first barrier (the slice computed, the bell read, the marks looked
# at): build-ab/s22at (stamps-s22.patch + at.patch, coll_windows only). All-reduce of 64 KiB and 2 MiB on
# windows, two-shot forced, 4 and 2 ranks as threads on the one GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k6; mkdir -p $O
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |Out of bounds|BARAT|rror|fail" | head -${HEADN:-12}; }
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s22at/libsymcomm_cuda.so SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0
for r in 1 2; do
  SYMCOMM_COLL_MAX_BLOCKS=16 t at4-64k-r$r 60 $P --threads 4 -o allreduce -b 64K -e 64K -n 4200 -w 50 -G 1 -c 0 -R 1
  SYMCOMM_COLL_MAX_BLOCKS=16 t at4-2m-r$r 60 $P --threads 4 -o allreduce -b 2M -e 2M -n 4200 -w 50 -G 1 -c 0 -R 1
  SYMCOMM_COLL_MAX_BLOCKS=32 t at2-64k-r$r 60 $P --threads 2 -o allreduce -b 64K -e 64K -n 4200 -w 50 -G 1 -c 0 -R 1
done
cd $OUT && tar czf k6.tgz k6 && rm -rf k6; echo "total $(( $(date +%s)-t0 ))s"
