/* One P2P argument block launched over and over, as a CUDA graph replays its
 * kernels, under symcomm-run -n 2 (a unit test, linked to the static
 * library: it builds the block with the transport's own calls). Each rank
 * sends the other a staged message (several chunks, so that ring slots
 * wrap) and a message into the other's window (straight there), and
 * receives both; between launches only the send buffers' data changes, and
 * nothing but the launches keeps the ranks in step. Every launch must
 * deliver that launch's data: message numbers and ring positions are in
 * device memory. Were they in the block, the second launch would take the
 * first one's rendezvous and ring positions for its own: a sender would
 * write into the peer's window before that peer checked the last data, or
 * a receiver would copy out a stale ring slot.
 * With SYMCOMM_P2P_LANES > 1 a launch holds one op of each pair and
 * direction (the host's rule: a lead never waits for its own launch's
 * lanes), so two blocks go in turn, the staged pair of messages, then the
 * pair into windows; with SYMCOMM_P2P_LANE_BYTES=4096 both run in parts. */
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "test_data.h"
#include "test_util.h"

enum { LAUNCHES = 100, STAGED = 3 * 4096 + 5, DIRECT = 2 * 4096 + 3, WINDOW_OFFSET = 4096 + 1 };

int main(void) {
  symcomm_comm_t comm;
  int rank;
  test_init_pair(&comm, &rank);
  int peer = 1 - rank;
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 1 << 16, &win));
  unsigned char *in_window = (unsigned char *)symcomm_window_local(win) + WINDOW_OFFSET;
  td_buf_t staged_out = td_buf_alloc(STAGED, 1), direct_out = td_buf_alloc(DIRECT, 2);
  td_buf_t staged_in = td_buf_alloc(STAGED, 3);

  sc_p2p_op_t ops[4];
  sc_p2p_op_make(comm->p2p, SC_P2P_SEND, peer, staged_out.data, STAGED, &ops[0]);
  sc_p2p_op_make(comm->p2p, SC_P2P_SEND, peer, direct_out.data, DIRECT, &ops[1]);
  sc_p2p_op_make(comm->p2p, SC_P2P_RECV, peer, staged_in.data, STAGED, &ops[2]);
  sc_p2p_op_make(comm->p2p, SC_P2P_RECV, peer, in_window, DIRECT, &ops[3]);
  TEST_ASSERT(ops[2].window == 0 && ops[3].window != 0, "the receives should go %s",
              "through the ring, then into the window");
  const char *lanes_set = getenv("SYMCOMM_P2P_LANES");
  uint32_t lanes = lanes_set != NULL ? (uint32_t)atoi(lanes_set) : 1;
  /* One block of all four ops, or with lanes [0] the staged send and
   * receive, [1] the send and receive into windows. */
  static sc_p2p_args_t args[2];
  size_t args_bytes[2] = {0, 0};
  uint32_t blocks[2] = {0, 0};
  int nargs = lanes > 1 ? 2 : 1;
  if (lanes > 1) {
    sc_p2p_op_t staged[2] = {ops[0], ops[2]}, direct[2] = {ops[1], ops[3]};
    sc_p2p_build(comm->p2p, staged, 2, &args[0], &args_bytes[0], &blocks[0]);
    sc_p2p_build(comm->p2p, direct, 2, &args[1], &args_bytes[1], &blocks[1]);
  } else {
    sc_p2p_build(comm->p2p, ops, 4, &args[0], &args_bytes[0], &blocks[0]);
  }
  for (int k = 0; k < nargs; k++)
    TEST_ASSERT(blocks[k] == lanes, "%u blocks for one peer with %u lanes", blocks[k], lanes);

  for (int i = 0; i < LAUNCHES; i++) {
    uint64_t seed = 7919u * (uint64_t)(i + 1);
    td_fill(staged_out.data, STAGED, seed, rank);
    td_fill(direct_out.data, DIRECT, seed + 1, rank);
    for (int k = 0; k < nargs; k++)
      TEST_OK(sc_p2p_launch(comm->p2p, stream->stream, &args[k], args_bytes[k], blocks[k]));
    TEST_OK(symcomm_stream_synchronize(stream));
    char what[64];
    snprintf(what, sizeof(what), "launch %d, through the ring", i);
    td_check(staged_in.data, STAGED, seed, peer, what);
    td_check_guards(staged_in.data, STAGED, what);
    snprintf(what, sizeof(what), "launch %d, into the window", i);
    td_check(in_window, DIRECT, seed + 1, peer, what);
  }
  td_buf_free(&staged_out);
  td_buf_free(&direct_out);
  td_buf_free(&staged_in);
  TEST_OK(symcomm_window_free(win));
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p_relaunch: %d launches of %d argument block%s (%u lane%s)\n", LAUNCHES, nargs,
           nargs > 1 ? "s" : "", lanes, lanes > 1 ? "s" : "");
  return 0;
}
