/* How a failure anywhere in a job reaches every rank's communicator at once,
 * and how abort and destroy stay safe from any thread.
 *
 * Every live communicator of the process is on one list, each with a watch on
 * its root (a second connection the root answers only when the session
 * fails: bootstrap/store_proto.h). One monitor thread per process polls every
 * watch: when the root says the session failed (a rank exited, aborted or
 * failed), or the root itself goes away, it records the failure in the
 * communicator and sets its status block's stop word, so that every wait of
 * its programs ends (within a sleep slice) with a sentence naming the rank.
 * It also looks at each status block's `failed` word: a program of this rank
 * that failed on its own (a timeout) stops the communicator here and is told
 * to the root, which fails the session for everyone.
 *
 * A rank that destroys its communicator leaves on purpose: the root tells the
 * other ranks' watches, and the monitor sets the rank's bit in the status
 * block's `departed` word (ranks of this host only), without failing
 * anything. A device wait that still needs that rank then fails, which fails
 * this rank's communicator alone (the root is not told): the others may go on
 * with work that does not involve the rank. Once the root has gone away
 * without failing the communicator (its rank left, then its process
 * exited), the monitor counts a rank of this host whose process ended as
 * left: nobody else can say so any more.
 *
 * The list's lock also orders abort against destroy: abort does all its work
 * under it on a communicator it finds on the list, and destroy takes the
 * communicator off the list before freeing anything. Nothing here blocks on
 * the network or on a stream. */
#ifndef SC_CORE_COMM_WATCH_H
#define SC_CORE_COMM_WATCH_H

#include <stdbool.h>

#include "bootstrap/root.h"
#include "bootstrap/store_watch.h"
#include "util/error.h"

struct symcomm_comm;

/* What a communicator keeps for the list (under the list's lock). */
typedef struct sc_comm_watch {
  sc_store_watch_t conn;    /* the watch on the root (fd -1 before it opens, after news) */
  bool listed;              /* on the process's list */
  bool attached;            /* its status block exists: a failure also stops its programs */
  bool destroying;          /* symcomm_comm_destroy has begun */
  bool told_root;           /* this rank's own failure or abort went to the root */
  bool local_seen;          /* the status block's own failure was handled */
  bool root_left;           /* the rank whose process serves the root destroyed its
                               communicator: the root's end fails nothing */
  bool root_gone;           /* the root ended without failing: the monitor looks for
                               ended processes of this host's ranks itself */
  int stop, stop_rank;      /* the recorded failure as its programs see it (sc_stop_t) */
  int stop_result;          /* ... and its result */
  char stop_why[768];       /* SC_STATUS_WHY_BYTES */
  struct symcomm_comm *next;
} sc_comm_watch_t;

/* Opens comm's watch on its root, once comm's rank has joined and before
 * its first collective step through the root: so every rank's watch is open
 * before any rank can finish the communicator and leave (the root's process
 * may then exit). abort_fd interrupts the connect. What the root says waits
 * in the socket until the watch starts. */
sc_result_t sc_comm_watch_open(struct symcomm_comm *comm, const sc_root_addr_t *root,
                               int abort_fd);
/* Puts comm on the list as soon as its watch is open: the monitor watches it
 * from then on, also while init or split still exchange what the device
 * needs, and a failure it hears of ends those host-side waits at once (it
 * signals comm's abort_wake; comm->aborted stays false). */
sc_result_t sc_comm_watch_start(struct symcomm_comm *comm);
/* comm's device is attached: failures stop its programs from now on (one
 * recorded before does so now; the calls that follow are refused, as after a
 * failure that arrives the moment init or split returns). */
void sc_comm_watch_attach(struct symcomm_comm *comm);
/* A call of this thread learned that the job failed (a REMOTE result the
 * monitor has not recorded yet): it becomes comm's failure now, so that later
 * calls are refused with this sentence. */
void sc_comm_watch_fail(struct symcomm_comm *comm, sc_result_t result, const char *text);
/* Something of this rank that works in the background (the network's progress
 * thread) failed on its own: unless, for a REMOTE result (a closed
 * connection: a peer that died?), the root's news of a failure comes within
 * a moment,
 * comm fails here with `text`, its programs stop, and the root tells the
 * other ranks. Ignored once comm failed or is off the list. */
void sc_comm_watch_fail_here(struct symcomm_comm *comm, sc_result_t result, const char *text);
/* Takes comm off the list, so that neither abort nor the monitor touches it
 * again, and closes its watch. Safe on a communicator never listed. */
void sc_comm_watch_stop(struct symcomm_comm *comm);

/* symcomm_comm_destroy's first step: INVALID_USAGE (without touching comm)
 * unless comm is on the list and no destroy began before. comm stays listed,
 * so that an abort still ends destroy's wait for its work. */
sc_result_t sc_comm_watch_claim_destroy(struct symcomm_comm *comm);
/* symcomm_comm_abort: everything it does, under the list's lock, on a
 * communicator that is on the list (else INVALID_USAGE, comm untouched). */
sc_result_t sc_comm_watch_abort(struct symcomm_comm *comm);

/* A failure of comm's own programs that the monitor has not seen yet (its
 * status block's `failed` word): handle it now. */
void sc_comm_watch_poll_local(struct symcomm_comm *comm);

#endif
