#include "window/window.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/keep.h"
#include "util/log.h"
#include "util/round.h"
#include "window/fd_exchange.h"

/* What every rank tells the others after each step of a window's creation
 * that can fail locally: its result and, on a failure, its sentence. */
typedef struct sc_window_status {
  int32_t result;
  char why[252];
} sc_window_status_t;

/* Ranks must agree on the size, on the kind (allocated or registered:
 * the pads lie elsewhere) and on whether collectives may use it at offsets
 * that differ (one rank reading another's buffer at its own offset would
 * read the wrong bytes); a mistake names two ranks that disagree. Every
 * rank sees the same, so all fail alike. */
typedef struct sc_window_shape {
  uint64_t bytes;
  uint64_t registered;
  uint64_t any_offset;
} sc_window_shape_t;

static sc_result_t sc_window_agree(sc_comm_view_t *view, uint64_t bytes, bool registered,
                                   bool any_offset, sc_window_shape_t *all) {
  sc_window_shape_t me = {.bytes = bytes, .registered = registered, .any_offset = any_offset};
  SC_CHECK(sc_bootstrap_allgather(view->boot, "window:size", &me, sizeof(me), all));
  for (int r = 0; r < view->nranks; r++) {
    if (all[r].registered != all[0].registered)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                      "ranks disagree on the window: rank 0 %s, rank %d %s",
                      all[0].registered ? "registers a buffer" : "allocates one", r,
                      all[r].registered ? "registers a buffer" : "allocates one");
    if (all[r].any_offset != all[0].any_offset)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                      "ranks disagree on the window's flags: rank 0 registers it %s "
                      "SYMCOMM_WINDOW_ANY_OFFSET, rank %d %s",
                      all[0].any_offset ? "with" : "without", r,
                      all[r].any_offset ? "with" : "without");
    if (all[r].bytes != all[0].bytes)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                      "ranks disagree on the window's size: rank 0 asks for %llu bytes, rank %d "
                      "for %llu",
                      (unsigned long long)all[0].bytes, r, (unsigned long long)all[r].bytes);
  }
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

/* The pads of registered windows on this rank and, mapped, on the others of
 * its host: a pad per window id. */
struct sc_window_pads {
  sc_devmem_t *mem;
  sc_devmem_t **imported; /* [local_size] */
  char **base;            /* [nranks] each rank's region mapped here, NULL off this host */
  int users;              /* live registered windows */
};

static size_t sc_window_pads_bytes(size_t gran) {
  return sc_round_up(sizeof(sc_window_pad_t) * SC_MAX_WINDOWS, gran);
}

static void sc_window_pads_free(const sc_comm_view_t *view, struct sc_window_pads *p) {
  if (p == NULL)
    return;
  if (p->imported != NULL)
    for (int l = 0; l < view->local_size; l++)
      if (p->imported[l] != NULL)
        view->ops->mem_free(p->imported[l]);
  if (p->mem != NULL)
    view->ops->mem_free(p->mem);
  free(p->imported);
  free(p->base);
  free(p);
}

/* The region the first registered window makes (collectively: every rank
 * registers the same windows in the same order, so all make it together). */
static sc_result_t sc_window_pads_make(const sc_comm_view_t *view, size_t bytes,
                                       struct sc_window_pads **out) {
  struct sc_window_pads *p = calloc(1, sizeof(*p));
  *out = p;
  if (p == NULL || (p->imported = calloc((size_t)view->local_size, sizeof(void *))) == NULL ||
      (p->base = calloc((size_t)view->nranks, sizeof(char *))) == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for the registered windows' pads");
  SC_CHECK(view->ops->mem_alloc(view->device, bytes, &p->mem));
  p->base[view->rank] = view->ops->mem_ptr(p->mem);
  return SYMCOMM_OK;
}

/* The pad region a registered window uses: the view's, or the one it made. */
static struct sc_window_pads *sc_window_pads_of(const sc_window_t *win) {
  return win->made_pads != NULL ? win->made_pads : win->view->reg_pads;
}

/* Rank r's pad of the window, once its memory is mapped here. */
static sc_window_pad_t *sc_window_pad_at(const sc_window_t *win, int r) {
  if (win->owns_mem)
    return (sc_window_pad_t *)((char *)win->peer[r] + win->bytes);
  return (sc_window_pad_t *)(sc_window_pads_of(win)->base[r]) + win->id;
}

/* The window's peer table in device memory, and its entry of the device
 * window table (or a cleared one). */
static sc_result_t sc_window_publish(const sc_window_t *win, bool live) {
  const sc_comm_view_t *view = win->view;
  const sc_backend_ops_t *ops = view->ops;
  if (live)
    SC_CHECK(ops->upload(view->device, win->dev_peer, win->peer, sizeof(void *) * (size_t)view->nranks));
  if (win->id < 0)
    return SYMCOMM_OK;
  sc_dev_window_t entry = {.peer = live ? win->dev_peer : NULL, .bytes = live ? win->bytes : 0};
  return ops->upload(view->device, &view->dev_windows[win->id], &entry, sizeof(entry));
}

/* This rank's part, before any peer is involved: the struct, the memory, the
 * pad (and the registered pads' region, with the first registered window),
 * and with peers on this host their exported fds in *mine. What is made
 * stays in *win for sc_window_discard, also on failure. */
static sc_result_t sc_window_make_local(sc_comm_view_t *view, size_t rounded, size_t alloc_bytes,
                                        sc_devmem_t *user_mem, size_t offset, int64_t id,
                                        sc_window_t **out, sc_fd_bundle_t *mine) {
  static const sc_window_pad_t zero_pad;
  const sc_backend_ops_t *ops = view->ops;
  sc_window_t *win = calloc(1, sizeof(*win));
  *out = win;
  if (win == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
  win->magic = SC_WINDOW_MAGIC;
  win->view = view;
  win->id = id;
  win->bytes = rounded;
  if ((win->peer = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->pads = calloc((size_t)view->nranks, sizeof(void *))) == NULL ||
      (win->imported = calloc((size_t)view->local_size, sizeof(void *))) == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a window");
  if (user_mem != NULL) {
    /* A pad per id: a window without one cannot be registered. */
    if (id < 0)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                      "symcomm_window_register: all %d window ids of the communicator are taken; "
                      "free a window first",
                      SC_MAX_WINDOWS);
    win->mem = user_mem;
    if (view->reg_pads == NULL)
      SC_CHECK(sc_window_pads_make(view, sc_window_pads_bytes(ops->granularity(view->device)),
                                   &win->made_pads));
  } else {
    SC_CHECK(ops->mem_alloc(view->device, alloc_bytes, &win->mem));
    win->owns_mem = true;
  }
  SC_CHECK(ops->dev_alloc(view->device, sizeof(void *) * (size_t)view->nranks,
                          (void **)&win->dev_peer));
  win->peer[view->rank] = (char *)ops->mem_ptr(win->mem) + offset;
  win->pads[view->rank] = sc_window_pad_at(win, view->rank);
  /* Device memory, maybe reused: cleared before any peer can signal it. */
  SC_CHECK(ops->upload(view->device, win->pads[view->rank], &zero_pad, sizeof(zero_pad)));
  if (view->local_size == 1) /* the table is whole: nothing to map */
    SC_CHECK(sc_window_publish(win, true));
  if (view->local_size > 1) {
    SC_CHECK(ops->mem_export(win->mem, &mine->fds[0]));
    mine->nfds = 1;
    if (win->made_pads != NULL) {
      SC_CHECK(ops->mem_export(win->made_pads->mem, &mine->fds[1]));
      mine->nfds = 2;
      mine->words[2] = ops->mem_size(win->made_pads->mem);
    }
    mine->words[0] = ops->mem_size(win->mem);
    mine->words[1] = offset;
  }
  return SYMCOMM_OK;
}

static sc_result_t sc_window_map_peers(sc_window_t *win, const sc_fd_bundle_t *got) {
  const sc_comm_view_t *view = win->view;
  const sc_backend_ops_t *ops = view->ops;
  struct sc_window_pads *made = win->made_pads;
  for (int l = 0; l < view->local_size; l++) {
    int r = view->local_rank_to_rank[l];
    if (r == view->rank)
      continue;
    const sc_fd_bundle_t *b = &got[l];
    size_t alloc_bytes = (size_t)b->words[0], offset = (size_t)b->words[1];
    /* An allocation of symcomm's holds its pad after the buffer. */
    size_t need = win->owns_mem ? win->bytes + sizeof(sc_window_pad_t) : win->bytes;
    if (b->nfds != (made != NULL ? 2 : 1) || offset > alloc_bytes || alloc_bytes - offset < need ||
        (made != NULL && b->words[2] < sizeof(sc_window_pad_t) * SC_MAX_WINDOWS))
      return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_WIN, "rank %d passed a malformed window handle", r);
    SC_CHECK(ops->mem_import(view->device, b->fds[0], alloc_bytes, &win->imported[l]));
    win->peer[r] = (char *)ops->mem_ptr(win->imported[l]) + offset;
    if (made != NULL) {
      SC_CHECK(ops->mem_import(view->device, b->fds[1], (size_t)b->words[2], &made->imported[l]));
      made->base[r] = ops->mem_ptr(made->imported[l]);
    }
    win->pads[r] = sc_window_pad_at(win, r);
  }
  return sc_window_publish(win, true);
}

/* Unmaps and releases what this rank mapped and allocated for the window
 * (its table entries are cleared by the caller). */
static void sc_window_unmap_memory(sc_window_t *win) {
  const sc_comm_view_t *view = win->view;
  const sc_backend_ops_t *ops = view->ops;
  if (win->imported != NULL)
    for (int l = 0; l < view->local_size; l++)
      if (win->imported[l] != NULL) {
        ops->mem_free(win->imported[l]);
        win->imported[l] = NULL;
      }
  if (win->dev_peer != NULL)
    ops->dev_free(view->device, win->dev_peer);
  win->dev_peer = NULL;
  if (win->owns_mem && win->mem != NULL)
    ops->mem_free(win->mem);
  win->mem = NULL;
  sc_window_pads_free(view, win->made_pads);
  win->made_pads = NULL;
  if (win->uses_pads && --win->view->reg_pads->users == 0) {
    sc_window_pads_free(view, win->view->reg_pads);
    win->view->reg_pads = NULL;
  }
  win->uses_pads = false;
}

/* Releases what sc_window_make_local and sc_window_map_peers made of a
 * window that is not in the table. */
static void sc_window_discard(sc_window_t *win) {
  if (win == NULL)
    return;
  if (win->dev_peer != NULL)
    sc_window_publish(win, false);
  sc_window_unmap_memory(win);
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
                             size_t offset, bool any_offset, sc_window_t **out) {
  const sc_backend_ops_t *ops = view->ops;
  size_t gran = ops->granularity(view->device);
  size_t rounded = user_mem != NULL ? bytes : sc_round_up(bytes == 0 ? 1 : bytes, gran);
  /* With the pad after the buffer, whole granules again. */
  size_t alloc_bytes = rounded == 0 || rounded > SIZE_MAX - sizeof(sc_window_pad_t)
                           ? 0
                           : sc_round_up(rounded + sizeof(sc_window_pad_t), gran);
  /* Too large to round: the ranks still agree on what was asked, then this
   * one fails its local step, so that all fail together. */
  bool too_large = rounded == 0 || (user_mem == NULL && alloc_bytes == 0);
  if (rounded == 0)
    rounded = bytes;
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
  /* Shapes first, in the same buffer (a status is larger than a shape). */
  _Static_assert(sizeof(sc_window_status_t) >= sizeof(sc_window_shape_t), "shapes fit statuses");
  /* The sizes as asked: sizes that differ are a mistake even where they
   * round up to the same granule (2 MiB on a GPU). */
  sc_result_t res = sc_window_agree(view, bytes, user_mem != NULL, any_offset,
                                    (sc_window_shape_t *)(void *)all);
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
      res = sc_window_make_local(view, rounded, alloc_bytes, user_mem, offset, id, &win, &mine);
  }
  /* Nobody connects before everyone listens, and nobody waits for a rank
   * that has nothing to pass. */
  res = sc_window_all_ok(view, "window:handles", "could not create its part of the window", res,
                         all);
  if (res == SYMCOMM_OK) {
    res = sc_fd_exchange_run(&x, "window:handles", &mine, got);
    if (res == SYMCOMM_OK && view->local_size > 1)
      res = sc_window_map_peers(win, got);
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
  if (user_mem != NULL) {
    if (win->made_pads != NULL)
      view->reg_pads = win->made_pads;
    win->made_pads = NULL;
    view->reg_pads->users++;
    win->uses_pads = true;
  }
  if (id >= 0) {
    view->windows[id].peer = win->peer;
    view->window_any_offset[id] = any_offset;
    /* bytes last: non-zero marks the entry live for whoever reads the table. */
    __atomic_store_n(&view->windows[id].bytes, (uint64_t)win->bytes, __ATOMIC_RELEASE);
    if ((uint32_t)id >= view->windows_made)
      view->windows_made = (uint32_t)id + 1;
  }
  SC_INFO(SC_WIN, "window %lld of %zu bytes%s%s, mapped by %d ranks of this host",
          (long long)win->id, rounded, user_mem != NULL ? " (registered)" : "",
          any_offset ? " (any offset: collectives on it stage)" : "", view->local_size);
  *out = win;
  return SYMCOMM_OK;
}

/* Unmaps what this rank mapped and releases what it allocated; frees the
 * window's entry of the tables for the next window. */
static void sc_window_unmap(sc_window_t *win) {
  if (win->id >= 0) {
    __atomic_store_n(&win->view->windows[win->id].bytes, (uint64_t)0, __ATOMIC_RELEASE);
    win->view->windows[win->id].peer = NULL;
    win->view->window_any_offset[win->id] = false;
    sc_window_publish(win, false); /* setup time: a failure leaves only a stale entry */
  }
  sc_window_unmap_memory(win);
}

sc_result_t sc_window_destroy(sc_window_t *win, bool idle) {
  /* No rank unmaps while another may still reach its memory through the window. */
  sc_result_t res = sc_bootstrap_barrier(win->view->boot, "window:free");
  if (idle) {
    sc_window_unmap(win);
  } else {
    /* A kernel of this rank may still write through its mappings. */
    SC_WARN(SC_WIN, "window %p (%zu bytes) is kept mapped (leaked): work queued before its free "
            "may still use it", (void *)win, win->bytes);
    win->kept = true;
    sc_keep(win);
  }
  win->magic = SC_WINDOW_FREED;
  return res;
}

void sc_window_release(sc_window_t *win) {
  if (win == NULL || win->kept)
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

bool sc_window_symmetric(const sc_comm_view_t *view, uint32_t id) {
  return id < SC_MAX_WINDOWS && !view->window_any_offset[id];
}
