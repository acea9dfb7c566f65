/* The REDUCE program: dst[i] = srcs[0][i] OP ... OP srcs[nsrcs-1][i], each
 * block a slice of whole groups of 64 elements (the vector loop's alignment
 * stays that of the buffers), every thread of the block together. It waits
 * for nothing; a communicator that stopped skips it (its sources are not
 * what the call meant). Include after the backend's runtime and its reduce. */
#ifndef SC_DEVICE_REDUCE_PROGRAM_H
#define SC_DEVICE_REDUCE_PROGRAM_H

#include "device/reduce.h"
#include "device/runtime.h"
#include "device/status.h"

SC_DEV_FN void sc_dev_reduce_run(sc_dev_ctx_t *ctx, const sc_reduce_args_t *a, sc_dev_error_t *err) {
  int why = sc_dev_share(ctx, sc_dev_begin(ctx, &a->guard));
  if (why != 0) {
    if (sc_dev_leader(ctx))
      err->kind = why;
    return;
  }
  if (!sc_dev_reduce_ok(a->nsrcs, a->dtype, a->op, a->divisor) || a->nsrcs > SC_REDUCE_MAX_SRCS) {
    if (sc_dev_leader(ctx)) {
      err->kind = SC_DEV_BAD_ARGS;
      err->a = SC_PROGRAM_REDUCE;
    }
    return;
  }
  uint64_t groups = (a->count + 63) / 64, blocks = sc_dev_blocks(ctx), b = sc_dev_block(ctx);
  uint64_t first = groups * b / blocks * 64, end = groups * (b + 1) / blocks * 64;
  if (end > a->count)
    end = a->count;
  if (first >= end)
    return;
  const void *srcs[SC_REDUCE_MAX_SRCS];
  for (int s = 0; s < a->nsrcs; s++)
    srcs[s] = (const char *)a->srcs[s] + first * a->elem;
  sc_dev_reduce(ctx, (char *)a->dst + first * a->elem, srcs, a->nsrcs, (size_t)(end - first),
                a->dtype, a->op, a->divisor);
}

#endif
