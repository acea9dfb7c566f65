/* Sends on one pair that the host did not order, under symcomm-run -n 2 (a
 * unit test, linked to the static library: it launches argument blocks with
 * the transport's own calls, as CUDA graphs replayed on two streams do,
 * without the public calls' ordering of one stream after the other). Rank 0
 * launches two sends of one message each on two streams at once; rank 1
 * receives two messages on one stream. Each send takes its message number
 * when it starts (a ticket in device memory), so the two never take the same
 * number: each buffer of rank 1 holds one message whole, and not the same
 * one. One lane (SYMCOMM_P2P_LANES=1): with several, launches that the host
 * did not order may find their lanes crossed, which fails on purpose. */
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "test_data.h"
#include "test_util.h"

enum { BYTES = (3u << 20) + 5, ROUNDS = 8 };

/* Which of the two messages (seeds) buf holds whole: 0, 1, or -1. */
static int which_message(const unsigned char *buf, const uint64_t *seeds) {
  for (int k = 0; k < 2; k++)
    if (td_count_wrong(buf, BYTES, seeds[k], 0) == 0)
      return k;
  return -1;
}

int main(void) {
  symcomm_comm_t comm;
  int rank;
  test_init_pair(&comm, &rank);
  const char *lanes = getenv("SYMCOMM_P2P_LANES");
  TEST_ASSERT(lanes == NULL || atoi(lanes) == 1, "run with one lane, not %s", lanes);
  symcomm_stream_t s[2];
  for (int k = 0; k < 2; k++)
    TEST_OK(symcomm_stream_create(comm, &s[k]));
  td_buf_t m[2] = {td_buf_alloc(BYTES, 0), td_buf_alloc(BYTES, 3)};
  for (int round = 0; round < ROUNDS; round++) {
    uint64_t seeds[2] = {7919u * (uint64_t)(2 * round + 1), 7919u * (uint64_t)(2 * round + 2)};
    static sc_p2p_args_t args[2];
    size_t args_bytes[2];
    uint32_t blocks[2];
    for (int k = 0; k < 2; k++) {
      sc_p2p_op_t op;
      if (rank == 0)
        td_fill(m[k].data, BYTES, seeds[k], 0);
      else
        td_reset(m[k].data, BYTES);
      sc_p2p_op_make(comm->p2p, rank == 0 ? SC_P2P_SEND : SC_P2P_RECV, 1 - rank, m[k].data,
                     BYTES, &op);
      sc_p2p_build(comm->p2p, &op, 1, &args[k], &args_bytes[k], &blocks[k]);
    }
    /* Rank 0: one send on each stream, at once; rank 1: both on one. */
    for (int k = 0; k < 2; k++)
      TEST_OK(sc_p2p_launch(comm->p2p, s[rank == 0 ? k : 0]->stream, &args[k], args_bytes[k],
                            blocks[k]));
    for (int k = 0; k < 2; k++)
      TEST_OK(symcomm_stream_synchronize(s[k]));
    if (rank == 1) {
      int a = which_message(m[0].data, seeds), b = which_message(m[1].data, seeds);
      TEST_ASSERT(a >= 0 && b >= 0 && a != b,
                  "round %d: two sends on two streams that the host did not order arrived as "
                  "messages %d and %d (-1: none whole), not each once",
                  round, a, b);
      td_check_guards(m[0].data, BYTES, "the first receive");
      td_check_guards(m[1].data, BYTES, "the second receive");
    }
  }
  td_buf_free(&m[0]);
  td_buf_free(&m[1]);
  for (int k = 0; k < 2; k++)
    TEST_OK(symcomm_stream_destroy(s[k]));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p_unordered: %d rounds of two sends on two streams, each message once\n",
           ROUNDS);
  return 0;
}
