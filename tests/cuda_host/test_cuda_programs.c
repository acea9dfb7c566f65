/* The CUDA backend's program table (src/backend/cuda/cuda_programs.c) on a
 * machine without a GPU: which kernel runs which arguments is decided there,
 * and a mistake would only show on a GPU, as a kernel of another kind or
 * reduction running the call. Built where nvcc is (the table needs cuda.h's
 * types), run by tests/scripts/test_cuda_kernel_names.sh, which also checks
 * the names printed here against the kernels each file defines.
 *   test_cuda_programs         checks the LL variants of every kind, dtype
 *                              and reduction; then prints "KERNEL FILE" for
 *                              every kernel of the table, one a line
 * Exits 1 on the first mismatch, naming it. */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_programs.c"

static const char *const kind_names[SC_COLL_KIND_COUNT] = {
    [SC_COLL_ALLREDUCE] = "allreduce", [SC_COLL_REDUCE] = "reduce",
    [SC_COLL_BROADCAST] = "broadcast", [SC_COLL_ALLGATHER] = "allgather",
    [SC_COLL_REDUCESCATTER] = "reducescatter", [SC_COLL_ALLTOALL] = "alltoall"};

/* The kernel an LL call of this kind, type and reduction must run: the
 * kind's, or where it reduces a sum of float32, bfloat16 or float16, that
 * sum's. */
static void expected(int kind, int dtype, int op, char *out, size_t len) {
  int reduces = kind == SC_COLL_ALLREDUCE || kind == SC_COLL_REDUCE || kind == SC_COLL_REDUCESCATTER;
  const char *sum = op != SYMCOMM_SUM              ? NULL
                    : dtype == SYMCOMM_FLOAT32     ? "f32"
                    : dtype == SYMCOMM_BFLOAT16    ? "bf16"
                    : dtype == SYMCOMM_FLOAT16     ? "f16"
                                                   : NULL;
  if (reduces && sum != NULL)
    snprintf(out, len, "sc_kernel_coll_ll_%s_%s_sum", kind_names[kind], sum);
  else
    snprintf(out, len, "sc_kernel_coll_ll_%s", kind_names[kind]);
}

int main(void) {
  const sc_cuda_program_t *coll = sc_cuda_program(SC_PROGRAM_COLL);
  if (coll == NULL) {
    fprintf(stderr, "FAIL: the table has no COLL program\n");
    return 1;
  }
  int checked = 0;
  for (int kind = 0; kind < SC_COLL_KIND_COUNT; kind++)
    for (int dtype = 0; dtype < SYMCOMM_DTYPE_COUNT; dtype++)
      for (int op = 0; op < SYMCOMM_OP_COUNT; op++) {
        sc_coll_args_t a;
        memset(&a, 0, sizeof(a));
        a.algo = SC_ALGO_LL;
        a.kind = kind;
        a.dtype = dtype;
        a.op = op;
        int v = sc_cuda_program_variant(SC_PROGRAM_COLL, &a);
        char want[96];
        expected(kind, dtype, op, want, sizeof(want));
        const char *got = v >= 0 && v < coll->variants ? coll->kernel[v] : NULL;
        if (got == NULL || strcmp(got, want) != 0) {
          fprintf(stderr, "FAIL: an LL %s of dtype %d, op %d runs variant %d (%s), not %s\n",
                  kind_names[kind], dtype, op, v, got != NULL ? got : "no kernel", want);
          return 1;
        }
        if (!sc_cuda_program_waits(SC_PROGRAM_COLL, v)) {
          fprintf(stderr, "FAIL: %s is not said to wait for the kernel ahead of it\n", got);
          return 1;
        }
        checked++;
      }
  for (int p = 0; p < SC_PROGRAM_COUNT; p++) {
    const sc_cuda_program_t *prog = sc_cuda_program((sc_program_t)p);
    for (int v = 0; prog != NULL && v < prog->variants; v++)
      if (prog->kernel[v] != NULL)
        printf("%s %s\n", prog->kernel[v], prog->file[v] != NULL ? prog->file[v] : "(none)");
  }
  fprintf(stderr, "ok: %d LL calls run their kind's (or sum's) kernel\n", checked);
  return 0;
}
