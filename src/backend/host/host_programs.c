/* The device programs (src/device/), compiled for the simulated backend: each
 * launch runs as a function call on its stream's worker thread. */
#include "backend/host/host_runtime.h" /* first: the runtime the programs use */

#include "device/coll.h"
#include "device/net.h"
#include "device/reduce_program.h"
#include "device/p2p.h"
#include "device/signal_wait.h"
#include "device/status.h"

#include "backend/host/host_internal.h"
#include "backend/program_items.h"

void (*sc_host_test_point)(int where) = NULL;

static const char *sc_host_program_name(sc_program_t program) {
  switch (program) {
  case SC_PROGRAM_SIGNAL: return "SIGNAL";
  case SC_PROGRAM_WAIT: return "WAIT";
  case SC_PROGRAM_P2P: return "P2P";
  case SC_PROGRAM_COLL: return "COLL";
  case SC_PROGRAM_NET: return "NET";
  case SC_PROGRAM_REDUCE: return "REDUCE";
  case SC_PROGRAM_COUNT: break;
  }
  return "unknown";
}

static sc_result_t sc_host_args_size(sc_program_t program, size_t args_bytes, size_t want) {
  if (args_bytes == want)
    return SYMCOMM_OK;
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                  "device program %s takes %zu bytes of arguments, not %zu",
                  sc_host_program_name(program), want, args_bytes);
}

/* Arguments that are a header, then as many items as it counts. */
static sc_result_t sc_host_items_args_size(sc_program_t program, const void *args, size_t args_bytes,
                                           const sc_program_items_t *items) {
  if (args_bytes < items->header)
    return sc_host_args_size(program, args_bytes, items->header);
  uint32_t n = sc_program_items_count(items, args);
  if (n > items->max)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                    "device program %s takes at most %u %s, not %u", sc_host_program_name(program),
                    items->max, items->what, n);
  return sc_host_args_size(program, args_bytes, items->header + (size_t)n * items->item_bytes);
}

sc_result_t sc_host_program_check(sc_program_t program, const void *args, size_t args_bytes) {
  if (args == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                    "device program %s launched without arguments", sc_host_program_name(program));
  sc_program_items_t items;
  if (sc_program_items(program, &items))
    return sc_host_items_args_size(program, args, args_bytes, &items);
  switch (program) {
  case SC_PROGRAM_SIGNAL: return sc_host_args_size(program, args_bytes, sizeof(sc_signal_args_t));
  case SC_PROGRAM_WAIT: return sc_host_args_size(program, args_bytes, sizeof(sc_wait_args_t));
  case SC_PROGRAM_REDUCE: return sc_host_args_size(program, args_bytes, sizeof(sc_reduce_args_t));
  default: break;
  }
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG, "there is no device program %d",
                  (int)program);
}

void sc_host_program_abandon(sc_program_t program, const void *args) {
  if (program == SC_PROGRAM_P2P) {
    /* Where the communicator's stop is what stopped the stream (a rank
     * exited, say), the peers hear it with the pairs' failure, as from a
     * batch that ran into the stop; else only that the pairs failed. */
    const sc_p2p_args_t *a = args;
    sc_dev_error_t why = {.kind = SC_DEV_ABORTED};
    sc_dev_ctx_t ctx;
    sc_host_ctx_init(&ctx, &why);
    if (a->desc != NULL)
      ctx.guard = a->desc->guard;
    sc_dev_p2p_abandon(args, 0, sc_host_stopped(&ctx) ? &why : NULL);
  } else if (program == SC_PROGRAM_COLL)
    sc_dev_coll_abandon(args);
}

static void sc_host_program_run_block(sc_program_t program, const void *args,
                                      sc_dev_ctx_t *ctx) {
  sc_dev_error_t *err = ctx->err;
  switch (program) {
  case SC_PROGRAM_SIGNAL: sc_dev_signal_run(ctx, args, err); break;
  case SC_PROGRAM_WAIT: sc_dev_wait_run(ctx, args, err); break;
  case SC_PROGRAM_P2P: sc_dev_p2p_run(ctx, args, err); break;
  case SC_PROGRAM_COLL: {
    /* On the path the CUDA backend would pick a kernel for, that kernel's
     * code alone (an error in the choice fails here too). */
    const sc_coll_args_t *a = args;
    sc_dev_coll_run_on(ctx, a, err, 1u << sc_coll_path_index(sc_coll_path(a->algo, a->kind)));
    break;
  }
  case SC_PROGRAM_NET: sc_dev_net_run(ctx, args, err); break;
  case SC_PROGRAM_REDUCE: sc_dev_reduce_run(ctx, args, err); break;
  default:
    err->kind = SC_DEV_BAD_ARGS; /* sc_host_program_check refused it at launch */
    err->a = (int64_t)program;
    break;
  }
}

void sc_host_program_run(sc_program_t program, uint32_t blocks, const void *args,
                         sc_dev_error_t *err) {
  sc_dev_ctx_t ctx;
  memset(err, 0, sizeof(*err));
  sc_host_ctx_init(&ctx, err);
  ctx.blocks = blocks;
  for (ctx.block = 0; ctx.block < blocks; ctx.block++) {
    sc_host_program_run_block(program, args, &ctx);
    if (err->kind != SC_DEV_OK) {
      /* The later blocks will not run here (CUDA runs them): a P2P batch
       * marks their pairs failed, so that their peers do not wait for them. */
      if (program == SC_PROGRAM_P2P)
        sc_dev_p2p_abandon(args, ctx.block + 1, err);
      break;
    }
  }
  sc_dev_publish_failure(ctx.guard.status, err);
}

/* Host code's ring (the network's progress thread after a done word): the
 * same as a program's, so that sleeping programs wake. */
void sc_host_bell_ring(sc_device_t *device, sc_doorbell_t *bell) {
  (void)device;
  sc_dev_ring(bell);
}

/* "Device" memory is this process's memory. */
bool sc_host_reaches_buffers(sc_device_t *device) {
  (void)device;
  return true;
}
