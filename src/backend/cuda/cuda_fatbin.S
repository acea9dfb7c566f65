/* The kernels (cuda_kernels.cu compiled by nvcc into a fatbin) as data of
 * libsymcomm_cuda.so, aligned for cuModuleLoadData. The build passes the
 * fatbin's path as SC_CUDA_FATBIN_PATH. */
	.section .rodata.sc_cuda_fatbin, "a"
	.balign 64
	.globl sc_cuda_fatbin
	.hidden sc_cuda_fatbin
	.type sc_cuda_fatbin, @object
sc_cuda_fatbin:
	.incbin SC_CUDA_FATBIN_PATH
	.globl sc_cuda_fatbin_end
	.hidden sc_cuda_fatbin_end
sc_cuda_fatbin_end:
	.byte 0
	.section .note.GNU-stack, "", @progbits
