#!/usr/bin/env bash
# mkvar.sh NAME KERNEL "NVCC defines": build-ab/NAME/libsymcomm_cuda.so with one kernel file rebuilt with extra defines.
set -e
name=$1; k=$2; defs=$3
o=build-ab/$name; mkdir -p $o
FLAGS="-std=c++17 -O3 -Isrc -Iinclude -Xfatbin=-compress-all -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
nvcc $FLAGS $defs -fatbin -o $o/$k.fatbin src/backend/cuda/kernels/$k.cu
cc -c -DSC_CUDA_FATBIN_PATH="\"$o/$k.fatbin\"" -DSC_CUDA_FATBIN_NAME=sc_cuda_fatbin_$k -o $o/$k.fatbin.o src/backend/cuda/cuda_fatbin.S
objs=$(ls build/obj/src/backend/cuda/*.o build/obj/src/device/describe.o build/obj/src/backend/dev_result.o build/obj/src/backend/cuda/kernels/*.fatbin.o | grep -v "kernels/$k.fatbin.o")
cc -shared -Wl,-soname,libsymcomm_cuda.so -Wl,-z,defs -o $o/libsymcomm_cuda.so $objs $o/$k.fatbin.o -pthread -ldl
ls -la $o/libsymcomm_cuda.so
