/* How an eager send within a host, which ends at its put, learns that its
 * message was refused, and how a message put is still delivered when the
 * pair fails after the put (device/p2p_eager.h). Under symcomm-run with
 * SYMCOMM_P2P_EAGER_BYTES=1024 (sends of 200 bytes go eagerly, 4096 bytes by
 * rendezvous), SYMCOMM_TIMEOUT=10; -n 3 for deadpair, else -n 2:
 *   delivered    rank 0's send #0 ends; its next launch with rank 1 fails
 *                (its receive refuses rank 1's message) while send #1 waits
 *                for #0's ack, which marks the pair failed at rank 1; rank 1
 *                then receives #0 whole, and its receive of #1 fails
 *   lookagain    rank 1's receive of #0 looks before the put, and the
 *                sender's put and its mark of the pair land between that look
 *                and the mark's load (a test point of the simulated backend
 *                stores them there, as rank 0 would): the receive must look
 *                again and take the message
 *   nextsize     rank 1 refuses send #0 (200 bytes) for its size (100);
 *                rank 0's next send, of 50 bytes, fails naming send #0 and
 *                its 200 bytes
 *   otherstream  the same, the next send of 4096 bytes (rendezvous) on
 *                another stream
 *   window       rank 1 receives 4096 bytes into a window (the sender would
 *                write there directly) after rank 0's eager send of 200
 *                ended: the receive fails at once naming both sizes and
 *                writes nothing; rank 0's next send fails naming send #0
 *   window_late  the same, the receive posted before the send
 *   deadpair     rank 1's stream fails (a receive from rank 2 refuses its
 *                size) before its receive from rank 0 runs, which marks
 *                that pair failed; rank 0's send #1, waiting for the ack of
 *                its send #0, fails at once instead of timing out */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/host/host_runtime.h" /* first: the runtime the device code uses */
#include "core/stream.h"
#include "device/p2p.h"
#include "test_data.h"
#include "test_util.h"

enum { SMALL = 200, BIG = 4096 };

static symcomm_comm_t comm;
static int rank;

/* The p2p descriptor, from an argument block, as a launch would carry it. */
static sc_p2p_desc_t *p2p_desc(void *buf) {
  static sc_p2p_args_t args;
  size_t args_bytes;
  uint32_t blocks;
  sc_p2p_op_t op;
  sc_p2p_op_make(comm->p2p, SC_P2P_RECV, rank == 0 ? 1 : 0, buf, SMALL, &op);
  sc_p2p_build(comm->p2p, &op, 1, &args, &args_bytes, &blocks);
  TEST_ASSERT(sc_p2p_eager(SMALL, args.desc->eager_bytes) && !sc_p2p_eager(BIG, args.desc->eager_bytes),
              "run with SYMCOMM_P2P_EAGER_BYTES=1024 (the limit is %llu)",
              (unsigned long long)args.desc->eager_bytes);
  return args.desc;
}

/* Waits until the lines of pair (from -> to) in `owner`'s pad satisfy `ok`. */
static void wait_lines(const sc_p2p_desc_t *d, int owner, int about,
                       int (*ok)(const sc_p2p_peer_lines_t *), const char *what) {
  const sc_p2p_peer_lines_t *lines = &d->pads[owner]->peer[about];
  for (double deadline = test_now() + 8; !ok(lines); usleep(1000))
    TEST_ASSERT(test_now() < deadline, "waited 8 s for %s", what);
}

static int send0_ended(const sc_p2p_peer_lines_t *l) { return sc_dev_load(&l->sends_done.value) >= 1; }
static int marked_failed(const sc_p2p_peer_lines_t *l) {
  return (sc_dev_load(&l->ready[0].value) & SC_SLOT_ERROR) != 0;
}

/* Synchronizes s: the result must be `want`, its sentence must say `says`. */
static void expect(symcomm_stream_t s, symcomm_result_t want, const char *says, const char *what) {
  symcomm_result_t r = symcomm_stream_synchronize(s);
  const char *why = symcomm_last_error(comm);
  TEST_ASSERT(r == want, "%s: %s, not %s (%s)", what, symcomm_result_string(r),
              symcomm_result_string(want), why);
  TEST_ASSERT(says == NULL || test_contains(why, says), "%s: the sentence does not say \"%s\": %s",
              what, says, why);
  printf("rank %d, %s: %s\n", rank, what, r == SYMCOMM_OK ? "ok" : why);
}

/* delivered: the pair fails at rank 0 after its send #0 was put. */
static void run_delivered(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  td_buf_t buf = td_buf_alloc(SMALL, 0), in = td_buf_alloc(300, 0);
  sc_p2p_desc_t *d = p2p_desc(buf.data);
  if (rank == 1) {
    /* A message of 300 bytes that rank 0's receive of 100 will refuse. */
    td_fill(in.data, 300, 7, 1);
    TEST_OK(symcomm_send(in.data, 300, SYMCOMM_UINT8, 0, comm, s));
    expect(s, SYMCOMM_OK, NULL, "the send rank 0 refuses (ended at its put)");
    wait_lines(d, 1, 0, marked_failed, "rank 0 to mark the pair failed");
    td_reset(buf.data, SMALL);
    TEST_OK(symcomm_recv(buf.data, SMALL, SYMCOMM_UINT8, 0, comm, s));
    expect(s, SYMCOMM_OK, NULL, "receive #0, put before the pair failed");
    td_check(buf.data, SMALL, 101, 0, "message #0");
    TEST_OK(symcomm_recv(buf.data, SMALL, SYMCOMM_UINT8, 0, comm, s));
    expect(s, SYMCOMM_ERR_REMOTE, "exchange with rank 0 failed earlier",
           "receive #1 from the failed pair");
  } else {
    td_fill(buf.data, SMALL, 101, 0);
    TEST_OK(symcomm_send(buf.data, SMALL, SYMCOMM_UINT8, 1, comm, s));
    expect(s, SYMCOMM_OK, NULL, "send #0 (ends at its put)");
    /* Rank 1's message of 300 bytes must be there before the launch, whose
     * receive then refuses it at once, with send #1 still waiting for #0's
     * ack: the block gives up with a send pending, which marks the pair. */
    wait_lines(d, 1, 0, send0_ended, "rank 1's send to end");
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(buf.data, SMALL, SYMCOMM_UINT8, 1, comm, s));
    TEST_OK(symcomm_recv(in.data, 100, SYMCOMM_UINT8, 1, comm, s));
    TEST_OK(symcomm_group_end());
    expect(s, SYMCOMM_ERR_INVALID_USAGE, "expects 100 bytes, but rank 1 sends 300 bytes",
           "the launch after send #0");
  }
  td_buf_free(&buf);
  td_buf_free(&in);
  symcomm_stream_destroy(s);
}

/* lookagain: at rank 1's test point, what rank 0's put of message 0 and its
 * mark of the pair would store, in that order. */
static sc_p2p_desc_t *lookagain_desc;
static int lookagain_points;

static void put_behind_the_look(int where) {
  if (where != SC_TEST_POINT_EAGER_MARK || lookagain_points++ > 0)
    return;
  const sc_p2p_desc_t *d = lookagain_desc;
  uint64_t *slot = sc_p2p_eager_slot(d, d->pads[1], 0);
  unsigned char data[SMALL];
  sc_dev_ctx_t one_thread = {0}; /* the simulated backend's block: one thread */
  td_fill(data, SMALL, 101, 0);
  sc_p2p_eager_put(&one_thread, slot, data, SMALL, sc_ll_flag(0));
  sc_dev_or(&d->pads[1]->peer[0].ready[0].value, SC_SLOT_ERROR);
}

static void run_lookagain(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  td_buf_t buf = td_buf_alloc(SMALL, 0);
  if (rank == 1) {
    lookagain_desc = p2p_desc(buf.data);
    sc_host_test_point = put_behind_the_look; /* before the receive is queued */
    td_reset(buf.data, SMALL);
    TEST_OK(symcomm_recv(buf.data, SMALL, SYMCOMM_UINT8, 0, comm, s));
    expect(s, SYMCOMM_OK, NULL, "receive #0, put and the pair marked failed behind its look");
    TEST_ASSERT(lookagain_points >= 1, "the receive found its message at its first look");
    td_check(buf.data, SMALL, 101, 0, "message #0");
  }
  /* Rank 0 stays until rank 1 is done: its leaving would end the receive. */
  int one = 1, sum = 0;
  TEST_OK(symcomm_allreduce(&one, &sum, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, s));
  TEST_OK(symcomm_stream_synchronize(s));
  TEST_ASSERT(sum == 2);
  sc_host_test_point = NULL;
  td_buf_free(&buf);
  symcomm_stream_destroy(s);
}

/* nextsize, otherstream, window, window_late: rank 1 refuses send #0. */
static void run_refused(const char *mode) {
  int window = strncmp(mode, "window", 6) == 0, late = strcmp(mode, "window_late") == 0;
  size_t want = window ? BIG : 100; /* rank 1's size */
  symcomm_stream_t s[2];
  TEST_OK(symcomm_stream_create(comm, &s[0]));
  TEST_OK(symcomm_stream_create(comm, &s[1]));
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 2 * BIG, &win));
  td_buf_t buf = td_buf_alloc(BIG, 0);
  sc_p2p_desc_t *d = p2p_desc(buf.data);
  char says[160];
  if (rank == 0) {
    td_fill(buf.data, SMALL, 101, 0);
    if (late)
      usleep(300000); /* rank 1's receive waits for its first chunk */
    TEST_OK(symcomm_send(buf.data, SMALL, SYMCOMM_UINT8, 1, comm, s[0]));
    expect(s[0], SYMCOMM_OK, NULL, "send #0 (ends at its put)");
    /* The next send: another size, on another stream or of the other protocol. */
    int other = strcmp(mode, "otherstream") == 0;
    size_t next = strcmp(mode, "nextsize") == 0 ? 50 : other ? BIG : SMALL;
    TEST_OK(symcomm_send(buf.data, next, SYMCOMM_UINT8, 1, comm, s[other]));
    snprintf(says, sizeof says, "send #0 to rank 1 had %d bytes, but rank 1 receives %zu bytes",
             SMALL, want);
    expect(s[other], SYMCOMM_ERR_INVALID_USAGE, says, "send #1");
  } else {
    unsigned char *dst = window ? (unsigned char *)symcomm_window_local(win) + 8 : buf.data;
    td_reset(dst, want);
    if (!late)
      wait_lines(d, 0, 1, send0_ended, "rank 0's send #0 to end");
    double t0 = test_now();
    TEST_OK(symcomm_recv(dst, want, SYMCOMM_UINT8, 0, comm, s[0]));
    snprintf(says, sizeof says, "this receive from rank 0 expects %zu bytes, but rank 0 sends %d bytes",
             want, SMALL);
    expect(s[0], SYMCOMM_ERR_INVALID_USAGE, says, "the receive");
    TEST_ASSERT(test_now() - t0 < 5, "the refusal took %.1f s", test_now() - t0);
    td_check_untouched(dst, want, "the receive buffer of a refused message");
  }
  td_buf_free(&buf);
  TEST_OK(symcomm_window_free(win));
  symcomm_stream_destroy(s[0]);
  symcomm_stream_destroy(s[1]);
}

/* deadpair, 3 ranks: rank 1's pair with rank 0 fails before taking send #0. */
static void run_deadpair(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  td_buf_t buf = td_buf_alloc(300, 0), in = td_buf_alloc(SMALL, 0);
  if (rank == 2) {
    usleep(300000); /* rank 1 has queued both its receives */
    td_fill(buf.data, 300, 9, 2);
    TEST_OK(symcomm_send(buf.data, 300, SYMCOMM_UINT8, 1, comm, s));
    expect(s, SYMCOMM_OK, NULL, "the send rank 1 refuses");
  } else if (rank == 1) {
    TEST_OK(symcomm_recv(buf.data, 100, SYMCOMM_UINT8, 2, comm, s));
    TEST_OK(symcomm_recv(in.data, SMALL, SYMCOMM_UINT8, 0, comm, s));
    expect(s, SYMCOMM_ERR_INVALID_USAGE, "rank 2 sends 300 bytes",
           "the stream whose receive from rank 0 never ran");
  } else {
    td_fill(buf.data, SMALL, 101, 0);
    TEST_OK(symcomm_send(buf.data, SMALL, SYMCOMM_UINT8, 1, comm, s));
    expect(s, SYMCOMM_OK, NULL, "send #0 (ends at its put)");
    double t0 = test_now();
    TEST_OK(symcomm_send(buf.data, SMALL, SYMCOMM_UINT8, 1, comm, s));
    expect(s, SYMCOMM_ERR_REMOTE, "exchange with rank 1 failed earlier",
           "send #1, behind a message the failed pair never took");
    TEST_ASSERT(test_now() - t0 < 5, "send #1 took %.1f s to fail", test_now() - t0);
  }
  td_buf_free(&buf);
  td_buf_free(&in);
  symcomm_stream_destroy(s);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int size = 0;
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  int three = strcmp(mode, "deadpair") == 0;
  TEST_ASSERT(size == (three ? 3 : 2), "run %s with %d ranks, not %d", mode, three ? 3 : 2, size);
  if (strcmp(mode, "delivered") == 0)
    run_delivered();
  else if (strcmp(mode, "lookagain") == 0)
    run_lookagain();
  else if (strcmp(mode, "nextsize") == 0 || strcmp(mode, "otherstream") == 0 ||
           strcmp(mode, "window") == 0 || strcmp(mode, "window_late") == 0)
    run_refused(mode);
  else if (three)
    run_deadpair();
  else {
    fprintf(stderr, "usage: test_p2p_eager_refusals "
                    "delivered|lookagain|nextsize|otherstream|window|window_late|deadpair\n");
    return 2;
  }
  symcomm_comm_destroy(comm);
  return 0;
}
