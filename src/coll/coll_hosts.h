/* Collectives of a communicator whose ranks are on several hosts, built from
 * send/recv (the P2P program within a host, the NET program between hosts,
 * on transports of their own so that the collectives' messages never meet
 * the caller's sends and receives) and REDUCE launches that combine what
 * arrived, all queued on the caller's stream: nothing waits on the host.
 *
 *   all-reduce      hierarchical: within each host, part p of the buffer is
 *                   reduced onto local rank p (a reduce-scatter); each part
 *                   is all-reduced across hosts among the ranks that own it
 *                   (a reduce-scatter and an all-gather, direct exchanges);
 *                   then every host all-gathers its parts. Hosts with
 *                   different numbers of ranks: one part, owned by each
 *                   host's first rank (reduce to it, across the hosts'
 *                   first ranks, broadcast from it).
 *   reduce          each host's ranks send to a collector (the root on its
 *                   host, the first rank elsewhere), which combines them and
 *                   sends the result to the root, which combines those.
 *   broadcast       the root sends to its host's ranks and to the first rank
 *                   of every other host, which passes it on within its host.
 *   reduce-scatter  direct: every rank sends each block to its owner, which
 *                   combines what arrives.
 *   all-gather      direct: every rank sends its block to every rank.
 *   all-to-all      direct: every rank sends each block to its rank.
 * Large calls go in rounds of elements that fit the scratch buffer
 * (SYMCOMM_COLL_SCRATCH_BYTES); every element's result is computed once, by
 * one rank, so every rank ends with the same bits. AVG sums until the last
 * combination, which divides by the number of ranks. */
#ifndef SC_COLL_COLL_HOSTS_H
#define SC_COLL_COLL_HOSTS_H

#include "coll/coll.h"
#include "transport/net/net_bridge.h"
#include "transport/p2p.h"

typedef struct sc_coll_hosts sc_coll_hosts_t;

/* Collective over the communicator (every rank, when its ranks are on several
 * hosts): host_of[r] is rank r's host index (0..nhosts-1, hosts numbered by
 * their lowest rank). Makes the scratch buffer and the transports. */
sc_result_t sc_coll_hosts_create(sc_comm_view_t *view, const int *host_of, int nhosts,
                                 sc_net_fail_fn fail, void *fail_ctx, sc_coll_hosts_t **out);
void sc_coll_hosts_destroy(sc_coll_hosts_t *h);

/* The event that marks the previous collective's end on its stream, for the
 * next one on another stream to wait for (they share the scratch buffer). */
sc_event_t *sc_coll_hosts_order_event(sc_coll_hosts_t *h);

/* Queues the collective on stream, in launches every rank queues alike. On
 * failure the launches before the one refused stay queued: the ranks are out
 * of step. */
sc_result_t sc_coll_hosts_enqueue(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                  sc_stream_t *stream);

#endif
