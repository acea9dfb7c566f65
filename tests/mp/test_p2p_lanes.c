/* Send/recv within a host in lanes (a message of several
 * SYMCOMM_P2P_LANE_BYTES runs in parts, each on its own block and its own
 * share of the pair's ring), under symcomm-run with SYMCOMM_P2P_LANES > 1:
 *   test_p2p_lanes sizes     a grouped ring (send right, receive left) at sizes
 *                            around the part, chunk and lane-ring boundaries: 0,
 *                            1, 63, 64, 65 bytes, k lane_bytes +- 1 up to more
 *                            parts than lanes, a part of one lane's ring +- 1,
 *                            from and into misaligned buffers; then bursts of
 *                            one-part and many-part messages queued back to
 *                            back, grouped and one way
 *   test_p2p_lanes mismatch  many-part receives of another size than the send
 *                            (many-part or one-part), and sizes on either side
 *                            of SYMCOMM_P2P_EAGER_BYTES (one side eager, or both),
 *                            into plain memory and into
 *                            a window: both sides fail naming both sizes (an
 *                            eager send, which ends at its put, at the
 *                            sender's next send on the pair, naming the
 *                            refused one), and nothing is written (each case
 *                            on a fresh split of the communicator: a failed
 *                            pair is not used again)
 *   test_p2p_lanes order     (3 ranks, lanes or not) rank 0 sends two messages to rank 1 on
 *                            two streams while the first stream is held up (it
 *                            waits for rank 2's late message) and other streams
 *                            of the communicator order themselves after each
 *                            other: the messages still arrive in call order
 *   test_p2p_lanes abandon   (4 ranks) a group of rank 0's sends to ranks 1, 2
 *                            and 3, rank 2 receiving another size: rank 3, whose
 *                            sender's blocks never run after the failure, fails
 *                            at once (not at its timeout); rank 1 gets its data
 * Every message carries its own data (tests/common/test_data.h: a function of
 * the message's seed, the sender and the byte's position); receive buffers
 * start as a sentinel and their guard bytes must stay as they were. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;
static uint64_t messages; /* seeds: every rank posts the same sequence */

static uint64_t next_seed(void) { return ++messages * 1000003u; }

/* A send/recv setting in force: its variable, else `fallback` (the
 * simulated backend's default, which the suite lines do not rely on). */
static int settings_unset; /* how many of them fell back */

static size_t setting(const char *name, size_t fallback) {
  for (int i = 0; i < symcomm_param_count(); i++) {
    const char *n, *value;
    TEST_OK(symcomm_param_info(i, &n, NULL, NULL, &value, NULL));
    if (strcmp(n, name) == 0 && value == NULL)
      settings_unset++;
    if (strcmp(n, name) == 0)
      return value != NULL ? (size_t)strtoull(value, NULL, 10) : fallback;
  }
  TEST_ASSERT(0, "no parameter %s", name);
}

static size_t lanes, lane_bytes, chunk, lane_slots, eager;

static void read_settings(bool need_lanes) {
  lanes = setting("SYMCOMM_P2P_LANES", 1);
  lane_bytes = setting("SYMCOMM_P2P_LANE_BYTES", 1u << 20);
  chunk = setting("SYMCOMM_P2P_CHUNK_BYTES", 512u << 10);
  size_t slots = setting("SYMCOMM_P2P_SLOTS", 4 > 2 * lanes ? 4 : 2 * lanes);
  /* The fallbacks are the simulated backend's defaults: on GPUs set all four. */
  TEST_ASSERT((!tdev_cuda() || settings_unset == 0) && (lanes > 1 || !need_lanes),
              "run on the simulated backend, or with all four SYMCOMM_P2P_ settings, with "
              "SYMCOMM_P2P_LANES > 1 (it is %zu)",
              lanes);
  lane_slots = slots / lanes;
  /* Not among the four a GPU run must set: its default gives way to the part. */
  int unset = settings_unset;
  eager = setting("SYMCOMM_P2P_EAGER_BYTES", tdev_cuda() ? 64u << 10 : 16u << 10);
  if (settings_unset > unset && eager > lane_bytes)
    eager = lane_bytes;
  settings_unset = unset;
}

/* One grouped ring step: `bytes` to the right, from the left, the send buffer
 * at `out_at` and the receive buffer at `in_at` past a 64-byte boundary. */
static void ring_step(symcomm_stream_t stream, size_t bytes, size_t out_at, size_t in_at) {
  uint64_t seed = next_seed();
  tdev_buf_t out = tdev_buf_alloc(bytes, out_at), in = tdev_buf_alloc(bytes, in_at);
  td_fill(out.host.data, bytes, seed, rank);
  tdev_buf_push(&out);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(out.data, bytes, SYMCOMM_UINT8, right, comm, stream));
  TEST_OK(symcomm_recv(in.data, bytes, SYMCOMM_UINT8, left, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_buf_pull(&in);
  tdev_buf_pull(&out);
  char what[128];
  snprintf(what, sizeof(what), "a ring step of %zu bytes (%zu-byte parts, %zu lanes) from +%zu into +%zu",
           bytes, lane_bytes, lanes, out_at, in_at);
  td_check(in.host.data, bytes, seed, left, what);
  td_check_guards(in.host.data, bytes, what);
  td_check(out.host.data, bytes, seed, rank, "the send buffer after the step");
  td_check_guards(out.host.data, bytes, what);
  tdev_buf_free(&out);
  tdev_buf_free(&in);
}

/* The size of message k of a burst: one part, then several, in turn. */
static size_t burst_size(int k) {
  switch (k % 4) {
  case 0: return 1 + (size_t)k;                                /* one part */
  case 1: return lanes * lane_bytes * 2 + 13 + (size_t)k;      /* as many parts as lanes */
  case 2: return 2 * lane_bytes + (size_t)k;                   /* two parts */
  default: return lane_bytes - 1;                              /* one part, just below */
  }
}

/* `n` messages queued back to back with one synchronization at the end:
 * grouped ring steps, or (one_way) sends from rank 0 to rank 1 alone. */
static void burst(symcomm_stream_t stream, int n, bool one_way) {
  enum { MAX = 40 };
  TEST_ASSERT(n <= MAX);
  if (one_way && rank > 1)
    return;
  tdev_buf_t out[MAX], in[MAX];
  size_t len[MAX];
  uint64_t seed = next_seed(); /* message k uses seed + k */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int k = 0; k < n; k++) {
    len[k] = burst_size(k);
    out[k] = tdev_buf_alloc(len[k], (size_t)k % 5);
    in[k] = tdev_buf_alloc(len[k], (size_t)(k * 7) % 64);
    td_fill(out[k].host.data, len[k], seed + (uint64_t)k, rank);
    tdev_buf_push(&out[k]);
  }
  for (int k = 0; k < n; k++) {
    if (one_way && rank == 0) {
      TEST_OK(symcomm_send(out[k].data, len[k], SYMCOMM_UINT8, 1, comm, stream));
    } else if (one_way) {
      TEST_OK(symcomm_recv(in[k].data, len[k], SYMCOMM_UINT8, 0, comm, stream));
    } else {
      TEST_OK(symcomm_group_start());
      TEST_OK(symcomm_send(out[k].data, len[k], SYMCOMM_UINT8, right, comm, stream));
      TEST_OK(symcomm_recv(in[k].data, len[k], SYMCOMM_UINT8, left, comm, stream));
      TEST_OK(symcomm_group_end());
    }
  }
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int k = 0; k < n; k++) {
    char what[128];
    snprintf(what, sizeof(what), "message %d of %d back to back (%zu bytes, %s)", k, n, len[k],
             one_way ? "rank 0 to rank 1" : "grouped ring");
    tdev_buf_pull(&in[k]);
    if (!one_way || rank == 1) {
      td_check(in[k].host.data, len[k], seed + (uint64_t)k, one_way ? 0 : left, what);
      td_check_guards(in[k].host.data, len[k], what);
    }
    tdev_buf_free(&out[k]);
    tdev_buf_free(&in[k]);
  }
}

static void test_sizes(symcomm_stream_t stream) {
  size_t lb = lane_bytes, ring = lane_slots * chunk; /* a lane's share of the ring */
  size_t sizes[64];
  int n = 0;
  const size_t small[] = {0, 1, 63, 64, 65, 4095, 4097};
  for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++)
    sizes[n++] = small[i];
  if (eager > 0) {
    sizes[n++] = eager - 1;
    sizes[n++] = eager;
    sizes[n++] = eager + 1;
  }
  for (size_t k = 1; k <= lanes + 1 && n + 3 <= 40; k++) { /* k parts, then capped at lanes */
    sizes[n++] = k * lb - 1;
    sizes[n++] = k * lb;
    sizes[n++] = k * lb + 1;
  }
  sizes[n++] = lanes * ring - 1; /* parts of about one lane's ring */
  sizes[n++] = lanes * ring + 64 * lanes + 1;
  sizes[n++] = 3 * lanes * ring + 7; /* each lane's ring wraps within its part */
  sizes[n++] = (5u << 20) + 3;
  const size_t at[][2] = {{0, 0}, {3, 5}, {1, 0}};
  for (int i = 0; i < n; i++)
    for (size_t a = 0; a < sizeof(at) / sizeof(at[0]); a++)
      if (a == 0 || sizes[i] < (1u << 20))
        ring_step(stream, sizes[i], at[a][0], at[a][1]);
  burst(stream, 40, false);
  burst(stream, 40, true);
}

/* A mismatch on a fresh split of the communicator (ranks 0 and 1): rank 0
 * sends `sent` bytes, rank 1 receives `expected` (into a window when asked). */
static void mismatch_case(size_t sent, size_t expected, bool window) {
  symcomm_comm_t c;
  TEST_OK(symcomm_comm_split(comm, rank < 2 ? 0 : 1, rank, &c));
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(c, &s));
  size_t room = (sent > expected ? sent : expected) + 2 * TD_GUARD + 64;
  symcomm_window_t win = NULL;
  if (window)
    TEST_OK(symcomm_window_alloc(c, room + 3, &win));
  if (rank < 2) {
    tdev_buf_t out = tdev_buf_alloc(sent, 3), in = tdev_buf_alloc(expected, 5);
    tdev_mirror_t wc = {0};
    unsigned char *dst = in.data, *hdst = in.host.data;
    if (window) { /* the receive at an odd offset in the window, guards around */
      unsigned char *base = symcomm_window_local(win);
      wc = tdev_mirror(base, room + 3);
      dst = base + TD_GUARD + 3;
      hdst = tdev_host_of(&wc, dst);
      td_reset(hdst, expected);
      td_arm_guards(hdst, expected);
      tdev_mirror_push(&wc, dst - TD_GUARD, expected + 2 * TD_GUARD);
    }
    uint64_t seed = next_seed();
    td_fill(out.host.data, sent, seed, rank);
    tdev_buf_push(&out);
    /* An eager send ends at its put: the refusal reaches the sender's next
     * send on the pair, which fails naming the refused message. */
    bool later = rank == 0 && eager > 0 && sent <= eager;
    if (rank == 0)
      TEST_OK(symcomm_send(out.data, sent, SYMCOMM_UINT8, 1, c, s));
    else
      TEST_OK(symcomm_recv(dst, expected, SYMCOMM_UINT8, 0, c, s));
    symcomm_result_t r = symcomm_stream_synchronize(s);
    if (later) {
      TEST_ASSERT(r == SYMCOMM_OK, "an eager send of %zu bytes (against a receive of %zu): %s (%s)",
                  sent, expected, symcomm_result_string(r), symcomm_last_error(c));
      TEST_OK(symcomm_send(out.data, sent, SYMCOMM_UINT8, 1, c, s));
      r = symcomm_stream_synchronize(s);
    }
    char want_sent[48], want_expected[48], side[64];
    snprintf(want_sent, sizeof(want_sent), "%zu bytes", sent);
    snprintf(want_expected, sizeof(want_expected), "%zu bytes", expected);
    snprintf(side, sizeof(side), "%s",
             later ? "send #0 to rank 1 had" : rank == 0 ? "this send to rank 1" : "this receive from rank 0");
    const char *why = symcomm_last_error(c);
    TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE,
                "rank %d: a send of %zu bytes met a receive of %zu%s and gave %s (%s)", rank, sent,
                expected, window ? " into a window" : "", symcomm_result_string(r), why);
    TEST_ASSERT(test_contains(why, want_sent) && test_contains(why, want_expected) &&
                    test_contains(why, side),
                "rank %d: the sentence of a send of %zu bytes against a receive of %zu names "
                "neither both sizes nor this side (%s): %s",
                rank, sent, expected, side, why);
    if (rank == 1) {
      const char *what = window ? "a refused receive into a window" : "a refused receive";
      if (window)
        tdev_mirror_pull(&wc, dst - TD_GUARD, expected + 2 * TD_GUARD);
      else
        tdev_buf_pull(&in);
      td_check_untouched(hdst, expected, what);
      td_check_guards(hdst, expected, what);
    } else {
      tdev_buf_pull(&out);
      td_check(out.host.data, sent, seed, 0, "the send buffer of a refused send");
    }
    if (window)
      tdev_mirror_free(&wc);
    tdev_buf_free(&out);
    tdev_buf_free(&in);
  } else {
    next_seed();
  }
  if (win != NULL)
    TEST_OK(symcomm_window_free(win));
  TEST_OK(symcomm_stream_destroy(s));
  TEST_OK(symcomm_comm_destroy(c));
}

static void test_mismatch(void) {
  size_t lb = lane_bytes;
  mismatch_case(3 * lb + 5, 2 * lb + 1, false);         /* both in several parts */
  mismatch_case(2 * lb + 1, lanes * lb * 3, false);     /* fewer parts than the receive */
  mismatch_case(100, lanes * lb + 64, false);           /* one part against many */
  mismatch_case(lanes * lb + 64, 100, false);           /* many against one */
  mismatch_case(3 * lb + 5, 2 * lb + 1, true);          /* into a window */
  mismatch_case(2 * lb, 4 * lb + 128, true);
  if (eager > 0) { /* around the eager limit: either side, or both, eagerly */
    mismatch_case(eager, eager + 1, false);
    mismatch_case(eager + 1, eager, false);
    mismatch_case(eager - 1, eager, false);
    mismatch_case(eager, 1, true);
    mismatch_case(0, eager, false);
    mismatch_case(eager, 0, false);
    mismatch_case(eager + 1, eager, true);
    mismatch_case(eager, 3 * lb + 5, false); /* eager against many parts */
  }
}

/* (4 ranks) One group of rank 0's many-part sends to ranks 1, 2 and 3 (its
 * blocks hold them in that order), where rank 2 receives another size: rank
 * 0's lead block for rank 2 fails, and on a backend that runs blocks one
 * after another the blocks after it (rank 3's group) never run. Rank 3 must
 * learn at once that they never will (its pair is marked failed), not wait
 * for its timeout; rank 1, whose group ran before, gets its data. */
static void test_abandon(void) {
  TEST_ASSERT(size == 4, "run with 4 ranks, not %d", size);
  size_t bytes = 3 * lane_bytes + 5, other = 2 * lane_bytes + 1;
  uint64_t seed = next_seed();
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  tdev_buf_t out = tdev_buf_alloc(bytes, 0), in = tdev_buf_alloc(bytes, 0);
  if (rank == 0) {
    td_fill(out.host.data, bytes, seed, 0);
    tdev_buf_push(&out);
    TEST_OK(symcomm_group_start());
    for (int to = 1; to < 4; to++)
      TEST_OK(symcomm_send(out.data, bytes, SYMCOMM_UINT8, to, comm, s));
    TEST_OK(symcomm_group_end());
    TEST_ASSERT(symcomm_stream_synchronize(s) != SYMCOMM_OK,
                "rank 0's group with a receive of the wrong size went through");
  } else {
    size_t want = rank == 2 ? other : bytes;
    double t0 = test_now();
    TEST_OK(symcomm_recv(in.data, want, SYMCOMM_UINT8, 0, comm, s));
    symcomm_result_t r = symcomm_stream_synchronize(s);
    double waited = test_now() - t0;
    const char *why = symcomm_last_error(comm);
    if (rank == 2) {
      TEST_ASSERT(r != SYMCOMM_OK && test_contains(why, "bytes"),
                  "rank 2's receive of the wrong size gave %s: %s", symcomm_result_string(r), why);
    } else if (r == SYMCOMM_OK) {
      tdev_buf_pull(&in);
      td_check(in.host.data, bytes, seed, 0, "a send of a group in which another send failed");
      td_check_guards(in.host.data, bytes, "a send of a group in which another send failed");
    } else {
      TEST_ASSERT(rank == 3, "rank 1's receive, whose blocks ran before the failure, failed: %s",
                  why);
      TEST_ASSERT(waited < 10.0 && !test_contains(why, "bytes"),
                  "rank 3's receive, whose sender's blocks never ran, failed after %.1f s "
                  "(not at once) or blamed sizes: %s",
                  waited, why);
    }
  }
  /* Rank 0 stays until every rank is done (its leaving would end rank 3's
   * wait too): a collective, which a failed pair does not stop. */
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  int32_t one = 1, ranks = 0;
  TEST_OK(symcomm_allreduce(&one, &ranks, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, s2));
  TEST_OK(symcomm_stream_synchronize(s2));
  TEST_ASSERT(ranks == 4, "the all-reduce after the group gave %d", ranks);
  TEST_OK(symcomm_stream_destroy(s2));
  tdev_buf_free(&out);
  tdev_buf_free(&in);
  TEST_OK(symcomm_stream_destroy(s));
}

/* Rank 0: stream a waits for rank 2's late message, then sends message 0 to
 * rank 1; stream b sends message 1 to rank 1 (ordered after a); streams c
 * and d receive from rank 1, d ordered after c, whose receive ends at once. */
static void test_order(void) {
  TEST_ASSERT(size >= 3, "run with 3 ranks or more, not %d", size);
  enum { LATE_US = 300 * 1000 };
  size_t bytes = lanes * lane_bytes + 1000;
  for (int round = 0; round < 3; round++) {
    uint64_t seeds[2] = {next_seed(), next_seed()};
    uint64_t small_seed = next_seed();
    symcomm_stream_t s[4];
    for (int i = 0; i < 4; i++)
      TEST_OK(symcomm_stream_create(comm, &s[i]));
    tdev_buf_t m[2] = {tdev_buf_alloc(bytes, 0), tdev_buf_alloc(bytes, 1)};
    tdev_buf_t small[3] = {tdev_buf_alloc(64, 0), tdev_buf_alloc(64, 0), tdev_buf_alloc(64, 0)};
    if (rank == 0) {
      for (int k = 0; k < 2; k++) {
        td_fill(m[k].host.data, bytes, seeds[k], 0);
        tdev_buf_push(&m[k]);
      }
      TEST_OK(symcomm_recv(small[0].data, 64, SYMCOMM_UINT8, 2, comm, s[0]));
      TEST_OK(symcomm_send(m[0].data, bytes, SYMCOMM_UINT8, 1, comm, s[0]));
      TEST_OK(symcomm_send(m[1].data, bytes, SYMCOMM_UINT8, 1, comm, s[1]));
      TEST_OK(symcomm_recv(small[1].data, 64, SYMCOMM_UINT8, 1, comm, s[2]));
      TEST_OK(symcomm_recv(small[2].data, 64, SYMCOMM_UINT8, 1, comm, s[3]));
    } else if (rank == 1) {
      for (int k = 1; k < 3; k++) {
        td_fill(small[k].host.data, 64, small_seed + (uint64_t)k, 1);
        tdev_buf_push(&small[k]);
        TEST_OK(symcomm_send(small[k].data, 64, SYMCOMM_UINT8, 0, comm, s[0]));
      }
      TEST_OK(symcomm_recv(m[0].data, bytes, SYMCOMM_UINT8, 0, comm, s[1]));
      TEST_OK(symcomm_recv(m[1].data, bytes, SYMCOMM_UINT8, 0, comm, s[1]));
    } else if (rank == 2) {
      usleep(LATE_US); /* rank 0's stream a waits this long */
      td_fill(small[0].host.data, 64, small_seed, 2);
      tdev_buf_push(&small[0]);
      TEST_OK(symcomm_send(small[0].data, 64, SYMCOMM_UINT8, 0, comm, s[0]));
    }
    for (int i = 0; i < 4; i++)
      TEST_OK(symcomm_stream_synchronize(s[i]));
    if (rank == 1) {
      for (int k = 0; k < 2; k++) {
        char what[128];
        snprintf(what, sizeof(what),
                 "round %d: message %d of rank 0's two sends to rank 1 on two streams (call order)",
                 round, k);
        tdev_buf_pull(&m[k]);
        td_check(m[k].host.data, bytes, seeds[k], 0, what);
        td_check_guards(m[k].host.data, bytes, what);
      }
    } else if (rank == 0) {
      for (int k = 0; k < 3; k++) {
        tdev_buf_pull(&small[k]);
        td_check(small[k].host.data, 64, small_seed + (uint64_t)k, k == 0 ? 2 : 1,
                 "a small message to rank 0");
      }
    }
    for (int k = 0; k < 2; k++)
      tdev_buf_free(&m[k]);
    for (int k = 0; k < 3; k++)
      tdev_buf_free(&small[k]);
    for (int i = 0; i < 4; i++)
      TEST_OK(symcomm_stream_destroy(s[i]));
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_p2p_lanes sizes|mismatch|order|abandon\n");
    return 2;
  }
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  tdev_open(comm);
  read_settings(strcmp(argv[1], "order") != 0);
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  const char *what = argv[1];
  if (strcmp(what, "sizes") == 0)
    test_sizes(stream);
  else if (strcmp(what, "mismatch") == 0)
    test_mismatch();
  else if (strcmp(what, "order") == 0)
    test_order();
  else if (strcmp(what, "abandon") == 0)
    test_abandon();
  else
    TEST_ASSERT(0, "unknown case %s", what);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p_lanes %s: passed on %d ranks, %zu lanes of %zu-byte parts\n", what, size,
           lanes, lane_bytes);
  return 0;
}
