#include "window/window.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/round.h"
#include "window/fd_exchange.h"

/* What every rank tells the others after each step of a window's creation
 * that can fail locally: its result and, on a failure, its sentence. */
typedef struct sc_window_status {
  int32_t result;
  char why[252];
} sc_window_status_t;

/* Ranks must agree on the size; a mistake names two ranks that disagree.
 * Every rank sees the same sizes, so all fail alike. */
static sc_result_t sc_window_agree(sc_comm_view_t *view, uint64_t bytes, uint64_t *all) {
  SC_CHECK(sc_bootstrap_allgather(view->boot, "window:size", &bytes, sizeof(bytes), all));
  for (int r = 0; r < view->nranks; r++)
    if (all[r] != all[0])
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                      "ranks disagree on the window's size: rank 0 asks for %llu bytes, rank %d "
                      "for %llu",
                      (unsigned long long)all[0], r, (unsigned long long)all[r]);
  return SYMCOMM_OK;
}

/* Collective: every rank brings its result so far, a failure included, so
 * that all ranks take the same bootstrap steps and fail together. The cause
 * is the first rank that failed on its own rather than by timing out
 * waiting for another. A rank that failed keeps its own code and sentence
 * (unless it only timed out and the cause is another rank); the others
 * return SYMCOMM_ERR_REMOTE naming the cause and its reason. */
static sc_result_t sc_window_all_ok(sc_comm_view_t *view, const char *step, const char *failed_to,
                                    sc_result_t mine, sc_window_status_t *all) {
  sc_window_status_t me = {.result = mine};
  if (mine != SYMCOMM_OK)
    snprintf(me.why, sizeof(me.why), "%s", sc_error_last());
  sc_result_t res = sc_bootstrap_allgather(view->boot, step, &me, sizeof(me), all);
  if (res != SYMCOMM_OK)
    return mine != SYMCOMM_OK ? sc_error_pass(mine, me.why) : res;
  int cause = -1, failed = 0;
  for (int r = 0; r < view->nranks; r++) {
    if (all[r].result == SYMCOMM_OK)
      continue;
    failed++;
    if (cause < 0 ||
        (all[cause].result == SYMCOMM_ERR_TIMEOUT && all[r].result != SYMCOMM_ERR_TIMEOUT))
      cause = r;
  }
  if (cause < 0)
    return SYMCOMM_OK;
  if (mine != SYMCOMM_OK && (cause == view->rank || mine != SYMCOMM_ERR_TIMEOUT ||
                             all[cause].result == SYMCOMM_ERR_TIMEOUT))
    return mine;
  sc_window_status_t *c = &all[cause];
  c->why[sizeof(c->why) - 1] = '\0';
  char others[48] = "";
  if (failed > 1)
    snprintf(others, sizeof(others), " (%d ranks failed)", failed);
  return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_WIN, "rank %d %s: %s%s", cause, failed_to,
                  c->why[0] != '\0' ? c->why : sc_result_name((sc_result_t)c->result), others);
}

/* The lowest free entry of the window table. Ranks create and free windows
 * together in the same order, and a creation succeeds or fails on all of
 * them (see sc_window_all_ok), so every rank finds the same. -1 if full. */
static int64_t sc_window_free_id(const sc_comm_view_t *view) {
  for (int64_t id = 0; id < SC_MAX_WINDOWS; id++)
    if (view->windows[id].bytes == 0)
      return id;
  return -1;
}

/* This rank's part, before any peer is involved: the struct, the memory and
 * the pad, and with peers on this host their exported fds in *mine. What is
 * made stays in *win for sc_window_discard, also on failure. */
static sc_result_t sc_window_make_local(sc_comm_view_t *view, size_t rounded, size_t pad_bytes,
                                        sc_devmem_t *user_mem, size_t offset, sc_window_t **out,
                                        sc_fd_bundle_t *mine) {
  const sc_backend_ops_t *ops = view->ops;
  sc_window_t *win = calloc(1, sizeof(*win));
  *out = win;
  if (win == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
  win->magic = SC_WINDOW_MAGIC;
  win->view = view;
  win->id = -1;
  win->bytes = rounded;
  if ((win->peer = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->pads = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->imported = calloc(2 * (size_t)view->local_size, sizeof(void *))) == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
  if (user_mem != NULL) {
    win->mem = user_mem;
  } else {
    SC_CHECK(ops->mem_alloc(view->device, rounded, &win->mem));
    win->owns_mem = true;
  }
  /* Zeroed by the backend: the host may not write device memory (CUDA). */
  SC_CHECK(ops->mem_alloc(view->device, pad_bytes, &win->pad_mem));
  win->peer[view->rank] = (char *)ops->mem_ptr(win->mem) + offset;
  win->pads[view->rank] = ops->mem_ptr(win->pad_mem);
  if (view->local_size > 1) {
    SC_CHECK(ops->mem_export(win->mem, &mine->fds[0]));
    mine->nfds = 1;
    SC_CHECK(ops->mem_export(win->pad_mem, &mine->fds[1]));
    mine->nfds = 2;
    mine->words[0] = ops->mem_size(win->mem);
    mine->words[1] = offset;
  }
  return SYMCOMM_OK;
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

/* Releases what sc_window_make_local and sc_window_map_peers made of a
 * window that is not in the table. */
static void sc_window_discard(sc_window_t *win) {
  if (win == NULL)
    return;
  const sc_backend_ops_t *ops = win->view->ops;
  if (win->imported != NULL)
    for (int i = 0; i < 2 * win->view->local_size; i++)
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

/* Every rank takes every step below whatever happened before it on this
 * rank or elsewhere (window:size, window:handles, and window:mapped where a
 * host has several ranks), so that bootstrap sequences, exchange numbers and
 * window ids stay equal on all ranks, and a failure anywhere is reported
 * everywhere at once, naming the rank that failed. */
sc_result_t sc_window_create(sc_comm_view_t *view, size_t bytes, sc_devmem_t *user_mem,
                             size_t offset, sc_window_t **out) {
  const sc_backend_ops_t *ops = view->ops;
  size_t gran = ops->granularity(view->device);
  size_t rounded = user_mem != NULL ? bytes : sc_round_up(bytes == 0 ? 1 : bytes, gran);
  /* Too large to round: the ranks still agree on what was asked, then this
   * one fails its local step, so that all fail together. */
  bool too_large = rounded == 0;
  if (too_large)
    rounded = bytes;
  size_t pad_bytes = sc_round_up(sizeof(sc_window_pad_t), gran);
  /* Taken, the same everywhere, before anything can fail; it enters the
   * table only once every rank has its part, so a creation that fails
   * leaves it free on every rank. */
  int64_t id = sc_window_free_id(view);
  /* The one allocation that precedes the collective steps: a rank out of
   * memory for it cannot take part in them. */
  sc_window_status_t *all = malloc(sizeof(*all) * (size_t)view->nranks);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory to create a window with %d ranks",
                    view->nranks);
  /* Sizes first, in the same buffer (a status is larger than a size). */
  sc_result_t res = sc_window_agree(view, rounded, (uint64_t *)(void *)all);
  if (res != SYMCOMM_OK) {
    free(all);
    return res;
  }

  sc_window_t *win = NULL;
  sc_fd_bundle_t mine = {.nfds = 0};
  sc_fd_bundle_t *got = NULL;
  sc_fd_exchange_t x;
  res = sc_fd_exchange_open(view, &x); /* always: it counts the exchange */
  if (res == SYMCOMM_OK) {
    got = calloc((size_t)view->local_size, sizeof(*got));
    if (got == NULL)
      res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
    else if (too_large)
      res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                     "a window of %zu bytes is too large: rounded up to whole %zu-byte pages it "
                     "would pass the end of the address space",
                     bytes, gran);
    else
      res = sc_window_make_local(view, rounded, pad_bytes, user_mem, offset, &win, &mine);
  }
  /* Nobody connects before everyone listens, and nobody waits for a rank
   * that has nothing to pass. */
  res = sc_window_all_ok(view, "window:handles", "could not create its part of the window", res,
                         all);
  if (res == SYMCOMM_OK) {
    res = sc_fd_exchange_run(&x, "window:handles", &mine, got);
    if (res == SYMCOMM_OK)
      res = sc_window_map_peers(win, got, pad_bytes);
    sc_fd_bundles_close(got, view->local_size);
    /* Decided alike everywhere: with one rank per host nothing can fail
     * after window:handles. */
    if (view->max_local_size > 1)
      res = sc_window_all_ok(view, "window:mapped", "could not map the window", res, all);
  }
  sc_fd_exchange_close(&x);
  for (int i = 0; i < mine.nfds; i++)
    close(mine.fds[i]);
  free(got);
  free(all);
  if (res != SYMCOMM_OK) {
    sc_window_discard(win);
    return res;
  }
  win->id = id;
  if (id >= 0) {
    view->windows[id].peer = win->peer;
    /* bytes last: non-zero marks the entry live for whoever reads the table. */
    __atomic_store_n(&view->windows[id].bytes, (uint64_t)win->bytes, __ATOMIC_RELEASE);
    if ((uint32_t)id >= view->windows_made)
      view->windows_made = (uint32_t)id + 1;
  }
  SC_INFO(SC_WIN, "window %lld of %zu bytes%s, mapped by %d ranks of this host",
          (long long)win->id, rounded, user_mem != NULL ? " (registered)" : "", view->local_size);
  *out = win;
  return SYMCOMM_OK;
}

/* Unmaps what this rank mapped and releases what it allocated; frees the
 * window's entry of the table for the next window. */
static void sc_window_unmap(sc_window_t *win) {
  const sc_backend_ops_t *ops = win->view->ops;
  if (win->id >= 0) {
    __atomic_store_n(&win->view->windows[win->id].bytes, (uint64_t)0, __ATOMIC_RELEASE);
    win->view->windows[win->id].peer = NULL;
  }
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

bool sc_window_find(const sc_comm_view_t *view, uint32_t first_id, const void *ptr, size_t bytes,
                    uint32_t *id, size_t *offset) {
  uint32_t n = view->windows_made < SC_MAX_WINDOWS ? view->windows_made : SC_MAX_WINDOWS;
  const char *c = ptr;
  for (uint32_t w = first_id; w < n && bytes > 0; w++) {
    const sc_dev_window_t *e = &view->windows[w];
    if (e->bytes == 0 || e->peer == NULL)
      continue;
    const char *base = e->peer[view->rank];
    if (c >= base && c < base + e->bytes && bytes <= (size_t)(base + e->bytes - c)) {
      *id = w;
      *offset = (size_t)(c - base);
      return true;
    }
  }
  return false;
}
