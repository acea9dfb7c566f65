#include "window/window.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "window/fd_exchange.h"

static size_t sc_round_up(size_t n, size_t g) { return (n + g - 1) / g * g; }

/* Ranks must agree on the size; a mistake names two ranks that disagree. */
static sc_result_t sc_window_agree(sc_comm_view_t *view, uint64_t bytes) {
  uint64_t *all = malloc(sizeof(uint64_t) * (size_t)view->nranks);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory to compare window sizes");
  sc_result_t res = sc_bootstrap_allgather(view->boot, "window:size", &bytes, sizeof(bytes), all);
  for (int r = 0; res == SYMCOMM_OK && r < view->nranks; r++)
    if (all[r] != all[0])
      res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                     "ranks disagree on the window's size: rank 0 asks for %llu bytes, rank %d for %llu",
                     (unsigned long long)all[0], r, (unsigned long long)all[r]);
  free(all);
  return res;
}

static sc_result_t sc_window_map_peers(sc_window_t *win, const sc_fd_bundle_t *got,
                                       size_t pad_bytes) {
  const sc_comm_view_t *view = win->view;
  const sc_backend_ops_t *ops = view->ops;
  for (int l = 0; l < view->local_size; l++) {
    int r = view->local_rank_to_rank[l];
    if (r == view->rank)
      continue;
    const sc_fd_bundle_t *b = &got[l];
    size_t alloc_bytes = (size_t)b->words[0], offset = (size_t)b->words[1];
    if (b->nfds != 2 || offset > alloc_bytes || alloc_bytes - offset < win->bytes)
      return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_WIN, "rank %d passed a malformed window handle", r);
    SC_CHECK(ops->mem_import(view->device, b->fds[0], alloc_bytes, &win->imported[2 * l]));
    SC_CHECK(ops->mem_import(view->device, b->fds[1], pad_bytes, &win->imported[2 * l + 1]));
    win->peer[r] = (char *)ops->mem_ptr(win->imported[2 * l]) + offset;
    win->pads[r] = ops->mem_ptr(win->imported[2 * l + 1]);
  }
  return SYMCOMM_OK;
}

sc_result_t sc_window_create(sc_comm_view_t *view, size_t bytes, sc_devmem_t *user_mem,
                             size_t offset, sc_window_t **out) {
  const sc_backend_ops_t *ops = view->ops;
  /* Every rank makes the same windows in the same order, so the count taken
   * on entry (whatever happens next) gives every rank the same id. */
  uint32_t made = view->windows_made++;
  size_t gran = ops->granularity(view->device);
  size_t rounded = user_mem != NULL ? bytes : sc_round_up(bytes == 0 ? 1 : bytes, gran);
  size_t pad_bytes = sc_round_up(sizeof(sc_window_pad_t), gran);
  SC_CHECK(sc_window_agree(view, rounded));

  sc_result_t res = SYMCOMM_OK;
  sc_fd_bundle_t mine = {.nfds = 0};
  sc_fd_bundle_t *got = calloc((size_t)view->local_size, sizeof(*got));
  sc_window_t *win = calloc(1, sizeof(*win));
  if (got == NULL || win == NULL ||
      (win->peer = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->pads = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->imported = calloc(2 * (size_t)view->local_size, sizeof(void *))) == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
    goto fail;
  }
  win->magic = SC_WINDOW_MAGIC;
  win->view = view;
  win->id = -1;
  win->bytes = rounded;
  if (user_mem != NULL) {
    win->mem = user_mem;
  } else {
    SC_CHECK_GOTO(ops->mem_alloc(view->device, rounded, &win->mem), res, fail);
    win->owns_mem = true;
  }
  SC_CHECK_GOTO(ops->mem_alloc(view->device, pad_bytes, &win->pad_mem), res, fail);
  memset(ops->mem_ptr(win->pad_mem), 0, sizeof(sc_window_pad_t));
  win->peer[view->rank] = (char *)ops->mem_ptr(win->mem) + offset;
  win->pads[view->rank] = ops->mem_ptr(win->pad_mem);

  if (view->local_size > 1) {
    SC_CHECK_GOTO(ops->mem_export(win->mem, &mine.fds[0]), res, fail);
    mine.nfds = 1;
    SC_CHECK_GOTO(ops->mem_export(win->pad_mem, &mine.fds[1]), res, fail);
    mine.nfds = 2;
    mine.words[0] = ops->mem_size(win->mem);
    mine.words[1] = offset;
  }
  SC_CHECK_GOTO(sc_fd_exchange(view, "window:handles", &mine, got), res, fail);
  res = sc_window_map_peers(win, got, pad_bytes);
  sc_fd_bundles_close(got, view->local_size);
  if (res != SYMCOMM_OK)
    goto fail;
  for (int i = 0; i < mine.nfds; i++)
    close(mine.fds[i]);
  free(got);
  win->id = made < SC_MAX_WINDOWS ? (int64_t)made : -1;
  if (win->id >= 0)
    view->windows[win->id] = (sc_dev_window_t){.peer = win->peer, .bytes = win->bytes};
  SC_INFO(SC_WIN, "window %lld of %zu bytes%s, mapped by %d ranks of this host",
          (long long)win->id, rounded, user_mem != NULL ? " (registered)" : "", view->local_size);
  *out = win;
  return SYMCOMM_OK;
fail:
  for (int i = 0; i < mine.nfds; i++)
    close(mine.fds[i]);
  free(got);
  if (win != NULL) {
    if (win->imported != NULL)
      for (int i = 0; i < 2 * view->local_size; i++)
        if (win->imported[i] != NULL)
          ops->mem_free(win->imported[i]);
    if (win->pad_mem != NULL)
      ops->mem_free(win->pad_mem);
    if (win->owns_mem && win->mem != NULL)
      ops->mem_free(win->mem);
    free(win->peer);
    free(win->pads);
    free(win->imported);
    free(win);
  }
  return res;
}

/* Unmaps what this rank mapped and releases what it allocated. */
static void sc_window_unmap(sc_window_t *win) {
  const sc_backend_ops_t *ops = win->view->ops;
  if (win->id >= 0)
    win->view->windows[win->id] = (sc_dev_window_t){0};
  for (int i = 0; i < 2 * win->view->local_size; i++)
    if (win->imported[i] != NULL) {
      ops->mem_free(win->imported[i]);
      win->imported[i] = NULL;
    }
  if (win->pad_mem != NULL)
    ops->mem_free(win->pad_mem);
  if (win->owns_mem)
    ops->mem_free(win->mem);
  win->pad_mem = NULL;
  win->mem = NULL;
}

sc_result_t sc_window_destroy(sc_window_t *win) {
  /* No rank unmaps while another may still reach its memory through the window. */
  sc_result_t res = sc_bootstrap_barrier(win->view->boot, "window:free");
  sc_window_unmap(win);
  win->magic = SC_WINDOW_FREED;
  return res;
}

void sc_window_release(sc_window_t *win) {
  if (win == NULL)
    return;
  if (win->magic == SC_WINDOW_MAGIC)
    sc_window_unmap(win);
  free(win->peer);
  free(win->pads);
  free(win->imported);
  free(win);
}
