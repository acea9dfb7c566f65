/* Public one-sided operations on windows: put, signal, wait. Their launches
 * carry only what the caller gave (a slot of a pad, a value, an operation)
 * and the communicator's guard, nothing counted on the host, so a CUDA graph
 * may replay them; nothing here queries or synchronizes a stream. */
#include "core/stream.h"
#include "util/log.h"
#include "util/round.h"

/* Checks a window and a stream for an operation on comm, the window's. */
static sc_result_t sc_onesided_check(sc_window_t *win, symcomm_stream_t stream, const char *call,
                                     struct symcomm_comm *comm) {
  if (win == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "%s: the window is NULL", call);
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "%s: not a window", call);
  if (win->magic == SC_WINDOW_FREED)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN, "%s: the window was freed", call);
  SC_CHECK(sc_comm_check_alive(comm));
  return sc_stream_use(stream, comm);
}

static sc_result_t sc_onesided_peer(sc_window_t *win, int peer, const char *call) {
  if (peer < 0 || peer >= win->view->nranks)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "%s: rank %d is not in [0, %d)", call,
                    peer, win->view->nranks);
  if (win->peer[peer] == NULL)
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_WIN,
                    "%s: rank %d is on another host; windows are mapped within a host", call, peer);
  return SYMCOMM_OK;
}

static sc_result_t sc_put(sc_window_t *win, int peer, size_t dst_offset, const void *src,
                          size_t bytes, symcomm_stream_t stream) {
  if (bytes > win->bytes || dst_offset > win->bytes - bytes)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "symcomm_put: %zu bytes at offset %zu pass the window's end (%zu bytes)", bytes,
                    dst_offset, win->bytes);
  if (src == NULL && bytes > 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_put: src is NULL");
  if (sc_range_wraps(src, bytes))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "symcomm_put: %zu bytes at %p run past the end of the address space", bytes, src);
  if (bytes == 0)
    return SYMCOMM_OK;
  /* A CUDA copy from pageable memory would hold the caller until the
   * driver staged it, and cannot be captured into a graph. */
  sc_result_t res = sc_comm_check_buffers(sc_comm_of_window(win), "symcomm_put", src, bytes, "src",
                                          NULL, 0, NULL);
  if (res != SYMCOMM_OK) {
    sc_error_append("; symcomm_put copies from device memory of this GPU or page-locked host "
                    "memory (cudaMallocHost, cudaHostRegister): copy pageable memory there first");
    return res;
  }
  return win->view->ops->copy(stream->stream, (char *)win->peer[peer] + dst_offset, src, bytes);
}

/* A slot of the signal pad, and whether what is done to it (`kind` `value`,
 * a signal operation or a comparison) is one symcomm knows. */
static sc_result_t sc_slot_check(int slot, bool known, const char *kind, int value) {
  if (slot < 0 || slot >= SYMCOMM_SIGNAL_SLOTS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "signal slot %d is not in [0, %d)", slot,
                    SYMCOMM_SIGNAL_SLOTS);
  if (!known)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "unknown %s %d", kind, value);
  return SYMCOMM_OK;
}

static sc_result_t sc_signal_check(int slot, symcomm_signal_op_t op) {
  return sc_slot_check(slot, op == SYMCOMM_SIGNAL_SET || op == SYMCOMM_SIGNAL_ADD, "signal operation",
                       (int)op);
}

static sc_result_t sc_signal(sc_window_t *win, int peer, int slot, uint64_t value,
                             symcomm_signal_op_t op, symcomm_stream_t stream) {
  SC_CHECK(sc_signal_check(slot, op));
  sc_window_pad_t *pad = win->pads[peer];
  sc_signal_args_t args = {.slot = &pad->slots[slot], .value = value, .op = (int)op,
                           .bell = &pad->bell};
  return win->view->ops->launch(stream->stream, SC_PROGRAM_SIGNAL, &args, sizeof(args), SC_LAUNCH_ONE(win->view->status));
}

symcomm_result_t symcomm_put(symcomm_window_t win, int peer, size_t dst_offset, const void *src,
                             size_t bytes, symcomm_stream_t stream) {
  sc_error_clear();
  struct symcomm_comm *comm = sc_comm_of_window(win);
  sc_result_t res = sc_onesided_check(win, stream, "symcomm_put", comm);
  if (res == SYMCOMM_OK)
    res = sc_onesided_peer(win, peer, "symcomm_put");
  if (res == SYMCOMM_OK)
    res = sc_put(win, peer, dst_offset, src, bytes, stream);
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_signal(symcomm_window_t win, int peer, int slot, uint64_t value,
                                symcomm_signal_op_t op, symcomm_stream_t stream) {
  sc_error_clear();
  struct symcomm_comm *comm = sc_comm_of_window(win);
  sc_result_t res = sc_onesided_check(win, stream, "symcomm_signal", comm);
  if (res == SYMCOMM_OK)
    res = sc_onesided_peer(win, peer, "symcomm_signal");
  if (res == SYMCOMM_OK)
    res = sc_signal(win, peer, slot, value, op, stream);
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_put_signal(symcomm_window_t win, int peer, size_t dst_offset,
                                    const void *src, size_t bytes, int slot, uint64_t value,
                                    symcomm_signal_op_t op, symcomm_stream_t stream) {
  sc_error_clear();
  struct symcomm_comm *comm = sc_comm_of_window(win);
  sc_result_t res = sc_onesided_check(win, stream, "symcomm_put_signal", comm);
  if (res == SYMCOMM_OK)
    res = sc_onesided_peer(win, peer, "symcomm_put_signal");
  /* Check the signal's arguments before queueing the put: all or nothing. */
  if (res == SYMCOMM_OK)
    res = sc_signal_check(slot, op);
  if (res == SYMCOMM_OK)
    res = sc_put(win, peer, dst_offset, src, bytes, stream);
  if (res == SYMCOMM_OK)
    res = sc_signal(win, peer, slot, value, op, stream);
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_wait_signal(symcomm_window_t win, int slot, symcomm_cmp_t cmp,
                                     uint64_t value, symcomm_stream_t stream) {
  sc_error_clear();
  struct symcomm_comm *comm = sc_comm_of_window(win);
  sc_result_t res = sc_onesided_check(win, stream, "symcomm_wait_signal", comm);
  if (res == SYMCOMM_OK)
    res = sc_slot_check(slot, cmp == SYMCOMM_CMP_GE || cmp == SYMCOMM_CMP_EQ, "comparison", (int)cmp);
  if (res == SYMCOMM_OK) {
    sc_window_pad_t *pad = win->pads[win->view->rank];
    sc_wait_args_t args = {.slot = &pad->slots[slot], .value = value, .cmp = (int)cmp,
                           .bell = &pad->bell,
                           .guard = win->view->guard};
    args.guard.call = SC_CALL_WAIT_SIGNAL;
    res = win->view->ops->launch(stream->stream, SC_PROGRAM_WAIT, &args, sizeof(args), SC_LAUNCH_ONE(win->view->status));
  }
  return sc_comm_finish(comm, res);
}
