/* The communicator: who its ranks are, where they run, how its host's GPUs
 * connect, and its bootstrap. Those, its options and its device are decided
 * at init or split and stay as they are. What changes afterwards: the abort
 * flag and how it failed (comm_watch.c), the last error, the lists under
 * `lock` (windows, streams used), and the collective and send/recv
 * state (coll, p2p, coll_broken, coll_last_stream), changed by the calls that
 * queue work. */
#ifndef SC_CORE_COMM_H
#define SC_CORE_COMM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <pthread.h>

#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "coll/coll.h"
#include "coll/coll_hosts.h"
#include "core/comm_watch.h"
#include "topo/topo.h"
#include "transport/net/net_bridge.h"
#include "transport/p2p.h"
#include "window/comm_view.h"
#include "window/window.h"
#include "util/error.h"
#include "util/wakeup.h"

#define SC_COMM_MAGIC 0x53434f4du /* "SCOM" */
#define SC_COMM_DEAD 0xdeadc0deu
#define SC_HOSTNAME_BYTES 64

/* What a communicator knows of each of its ranks. */
typedef struct sc_peer {
  uint64_t host_hash;
  int host;        /* host index in this communicator */
  int local_rank;  /* rank among this communicator's ranks on that host */
  int world_rank;  /* rank in the communicator made by init */
  int sim_host;    /* SYMCOMM_HOSTID of the rank, -1 on a real host */
  int dev;         /* device index on its host */
  int64_t busid;
  int pid;
  char hostname[SC_HOSTNAME_BYTES];
} sc_peer_t;

/* Resolved communicator options (from symcomm_config_t and the environment). */
typedef struct sc_comm_options {
  int64_t timeout_ms;
  int device; /* -1 = the local rank */
  char name[64];
  char backend[8];     /* config.backend ("auto", "host", "cuda"); "" = SYMCOMM_BACKEND */
  int host_ranks_hint; /* ranks of the whole job on this host, as the launcher or a parent knows; 0 = unknown */
  bool check_calls;    /* SYMCOMM_CHECK: collectives compare calls through the root */
  bool share_device;   /* SYMCOMM_SHARE_DEVICE: ranks of a host may use one device (tests) */
  int abort_fd;        /* config.abort_fd (init only: a split does not inherit it); 0 = none */
  int max_blocks;      /* config.max_blocks (a split inherits it); 0 = SYMCOMM_COLL_MAX_BLOCKS */
} sc_comm_options_t;

struct symcomm_comm {
  uint32_t magic;
  int rank, nranks;
  int host, nhosts;
  int local_rank, local_size;
  sc_peer_t *peers;        /* [nranks] */
  sc_topo_t **host_topo;   /* [nhosts]: GPUs of the host in local-rank order */
  sc_comm_options_t options;

  sc_bootstrap_t boot;
  sc_store_server_t *root; /* the root this process serves for this comm, if any */
  uint64_t session;
  sc_secret_t secret; /* its ranks' own: the fd exchange derives names and tokens from it */

  sc_wakeup_t abort_wake; /* readable once aborted or failed: interrupts host-side waits */
  atomic_bool aborted;
  /* How it failed, here or elsewhere in the job (comm_watch.c): written once,
   * under the watch list's lock, fail_text before `failed` (a symcomm_result_t,
   * 0 while it works). */
  atomic_int failed;
  char fail_text[1024];
  int root_rank;          /* the rank whose process serves its root; -1 none or unknown */
  sc_comm_watch_t watch;  /* its place on the process's watch list */
  char last_error[1024];

  /* The device and what lives on it (sc_comm_attach_device). */
  const sc_backend_ops_t *ops;
  sc_device_t *device;
  sc_dev_status_t *status;       /* device-readable: its stop word, its programs' own failure */
  uint32_t *dev_stop;            /* the stop word's copy in device memory, read by the
                                    collectives and send/recv, which must not wait for a read
                                    of host memory */
  sc_dev_window_t *window_table; /* the view's window table, for host code */
  sc_dev_window_t *dev_window_table; /* its copy in device memory, for programs */
  sc_comm_view_t view;           /* what windows and transports see of this comm */
  int *local_of, *local_rank_to_rank, *pids;
  sc_p2p_t *p2p;                 /* NULL when alone on the host */
  sc_net_t *net;                 /* send/recv with other hosts; NULL on one host */
  sc_coll_t *coll;               /* NULL for one rank, or ranks on several hosts */
  sc_coll_hosts_t *coll_hosts;   /* collectives of ranks on several hosts; NULL on one */
  bool coll_broken;              /* a collective was half queued: the ranks are out of step */
  struct symcomm_stream *coll_last_stream; /* where the last collective was queued (may be gone) */
  /* Where the last send ([SC_P2P_SEND]) to and receive from each local peer
   * was queued (may be gone): see sc_p2p_order. */
  struct symcomm_stream *p2p_last_stream[2][SC_MAX_LOCAL_RANKS];
  pthread_mutex_t lock;          /* the lists below */
  sc_window_t *windows;          /* live ones, and freed ones until destroy */
  struct symcomm_stream **used;  /* streams this communicator queued work on */
  int nused, used_cap;
};

/* The communicator whose view a window or transport holds. */
static inline struct symcomm_comm *sc_comm_of_view(const sc_comm_view_t *view) {
  return (struct symcomm_comm *)((char *)view - offsetof(struct symcomm_comm, view));
}

/* The communicator of a window handle, freed or not (a freed window stays
 * known to its communicator until destroy), so that every failed check of a
 * call on the window becomes that communicator's last error; NULL when the
 * handle is no window. */
static inline struct symcomm_comm *sc_comm_of_window(const sc_window_t *win) {
  if (win == NULL || (win->magic != SC_WINDOW_MAGIC && win->magic != SC_WINDOW_FREED))
    return NULL;
  return sc_comm_of_view(win->view);
}

/* Checks a handle passed to a public call. */
sc_result_t sc_comm_check(const struct symcomm_comm *comm);
/* Copies this thread's error sentence to the communicator when res failed
 * (ABORTED once this rank aborted it); every public entry point that takes a
 * communicator returns through this. */
sc_result_t sc_comm_finish(struct symcomm_comm *comm, sc_result_t res);
/* The same for a call that creates or changes the communicator's shared
 * state (`during` names it: "split", "window creation"). */
sc_result_t sc_comm_finish_during(struct symcomm_comm *comm, sc_result_t res, const char *during);
/* A failed wait of comm, while its rank did not abort it: res, unless the
 * communicator failed (on another rank, or as the root said), which is then
 * what the call reports, "during <during>" when given. Gives the monitor a
 * moment to bring that news; a REMOTE result it does not confirm becomes
 * comm's failure. */
/* Waits up to ms for comm to fail or be aborted (the monitor's news of a
 * failure elsewhere); returns at once if it has. */
void sc_comm_await_news(struct symcomm_comm *comm, int64_t ms);
sc_result_t sc_comm_explain(struct symcomm_comm *comm, sc_result_t res, const char *during);
/* Copies this thread's error sentence to the communicator. */
void sc_comm_note_error(struct symcomm_comm *comm);
/* Fails once the communicator was aborted (ABORTED) or failed (its result and
 * sentence), here or on another rank: later calls are refused. */
sc_result_t sc_comm_check_alive(struct symcomm_comm *comm);

sc_result_t sc_comm_options_resolve(const symcomm_config_t *config, sc_comm_options_t *options);

/* A communicator shell with its abort fd, ready for its bootstrap. */
sc_result_t sc_comm_alloc(int rank, int nranks, const sc_comm_options_t *options,
                          struct symcomm_comm **comm);
/* Frees whatever the communicator holds; closes its bootstrap politely. */
void sc_comm_free(struct symcomm_comm *comm);
/* The same for a communicator whose device work may still run (destroy gave
 * up waiting for it): what only the host uses is freed, the rest kept for
 * good (util/keep.h), so that no kernel writes freed memory. */
void sc_comm_free_busy(struct symcomm_comm *comm);
/* For a communicator whose creation failed here: the other ranks are told why
 * (this thread's error sentence), then it is freed. */
void sc_comm_free_failed(struct symcomm_comm *comm);

/* Init's exchange over a connected bootstrap: host identity, device choice,
 * links; fills peers, hosts and host topologies. */
sc_result_t sc_comm_exchange_identity(struct symcomm_comm *comm);

/* Numbers the hosts of comm (by lowest rank) from peers[].host_hash and sets
 * every peer's host and local rank, and comm's own. UNSUPPORTED when a host
 * has more than SC_MAX_LOCAL_RANKS of them: the one place that limit is
 * checked. */
sc_result_t sc_comm_assign_hosts(struct symcomm_comm *comm);

/* Builds comm->host_topo from peers[] (busid, dev) and the links between ranks
 * of one host given by `links_of(ctx, rank_a, rank_b, &link, &nvlinks)`; with
 * rank_a == rank_b, nvlinks is the rank's GPU's NVSwitch link count. */
typedef void (*sc_comm_link_fn)(void *ctx, int rank_a, int rank_b, uint8_t *link, uint8_t *nvlinks);
sc_result_t sc_comm_build_host_topos(struct symcomm_comm *comm, sc_comm_link_fn links_of, void *ctx);

/* Connects to a root and builds a communicator from the environment of the
 * host (init): rank, nranks, options; serves_root when this process serves the
 * root (known to the launcher path; a root started for the session is found
 * on its own). */
sc_result_t sc_comm_init_at_root(const sc_root_addr_t *root, int rank, int nranks,
                                 const sc_comm_options_t *options, bool serves_root,
                                 struct symcomm_comm **comm);

/* The device index this rank uses among those its process sees:
 * SYMCOMM_DEVICE / config.device, else its local rank; on real GPUs shared
 * by simulated hosts (SYMCOMM_HOSTID), its place among this machine's ranks. */
int sc_comm_device_index(const struct symcomm_comm *comm);

/* Chooses the backend (SYMCOMM_BACKEND) and opens device `index` (once; -1:
 * sc_comm_device_index once the backend is known): init does it before its
 * exchange, which reports the device's bus id. */
sc_result_t sc_comm_open_device(struct symcomm_comm *comm, int index);

/* Checks the buffers a data call got (bytes 0: not used) with the backend
 * (on CUDA: device memory of this communicator's device): INVALID_ARGUMENT
 * naming the call and the buffer otherwise. */
sc_result_t sc_comm_check_buffers(struct symcomm_comm *comm, const char *call, const void *a,
                                  size_t a_bytes, const char *a_name, const void *b,
                                  size_t b_bytes, const char *b_name);

/* Collective, once hosts and the bootstrap are known (init and split): opens
 * the backend's device (unless init did), fills the view, and sets up
 * send/recv. */
sc_result_t sc_comm_attach_device(struct symcomm_comm *comm);

/* "comm 0x... rank r nranks n host h/H local l/L busId B - Init COMPLETE" at INFO,
 * plus the host's classification. */
void sc_comm_log_complete(const struct symcomm_comm *comm, const char *what);

#endif
