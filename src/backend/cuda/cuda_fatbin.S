/* One fatbin of kernels (a file of src/backend/cuda/kernels/ compiled by
 * nvcc) as data of libsymcomm_cuda.so, aligned for cuModuleLoadData. The
 * build passes the fatbin's path as SC_CUDA_FATBIN_PATH and its symbol as
 * SC_CUDA_FATBIN_NAME (sc_cuda_fatbin_<file>; its end: <symbol>_end). */
#define SC_CAT_(a, b) a##b
#define SC_CAT(a, b) SC_CAT_(a, b)
#define SC_FATBIN_END SC_CAT(SC_CUDA_FATBIN_NAME, _end)
	.section .rodata.SC_CUDA_FATBIN_NAME, "a"
	.balign 64
	.globl SC_CUDA_FATBIN_NAME
	.hidden SC_CUDA_FATBIN_NAME
	.type SC_CUDA_FATBIN_NAME, @object
SC_CUDA_FATBIN_NAME:
	.incbin SC_CUDA_FATBIN_PATH
	.globl SC_FATBIN_END
	.hidden SC_FATBIN_END
SC_FATBIN_END:
	.byte 0
	.section .note.GNU-stack, "", @progbits
