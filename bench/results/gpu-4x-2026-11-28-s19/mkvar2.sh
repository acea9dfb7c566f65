#!/usr/bin/env bash
# mkvar2.sh OUTDIR "DEFS" KERNEL... : run in a source tree; OUTDIR/libsymcomm_cuda.so with those kernel files rebuilt with DEFS (objects of /work/main/build otherwise)
set -e
o=$1; defs=$2; shift 2; mkdir -p $o
FLAGS="-std=c++17 -O3 -Isrc -Iinclude -Xfatbin=-compress-all -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
M=/work/main/build/obj
objs=$(ls $M/src/backend/cuda/*.o $M/src/device/describe.o $M/src/backend/dev_result.o)
for f in $M/src/backend/cuda/kernels/*.fatbin.o; do k=$(basename $f .fatbin.o); case " $* " in *" $k "*) ;; *) objs="$objs $f";; esac; done
for k in "$@"; do
  nvcc $FLAGS $defs -fatbin -o $o/$k.fatbin src/backend/cuda/kernels/$k.cu &
done; wait
for k in "$@"; do
  cc -c -DSC_CUDA_FATBIN_PATH="\"$o/$k.fatbin\"" -DSC_CUDA_FATBIN_NAME=sc_cuda_fatbin_$k -o $o/$k.fatbin.o src/backend/cuda/cuda_fatbin.S
  objs="$objs $o/$k.fatbin.o"
done
cc -shared -Wl,-soname,libsymcomm_cuda.so -Wl,-z,defs -o $o/libsymcomm_cuda.so $objs -pthread -ldl
ls -la $o/libsymcomm_cuda.so
