/* An eager send that gives up waiting for its ack, and a receiver that took
 * the message, must agree on whether it was delivered (device/p2p_eager.h):
 * the receiver's claim and the sender's withdrawal settle it, one word by
 * compare-and-swap. A receiver stopped between its claim and its ack (or a
 * slow one) used to finish a message its sender had reported failed.
 *   test_p2p_eager_claim race        one process: two threads in step claim
 *                                    and withdraw the same words (some with
 *                                    earlier messages claimed); both must
 *                                    name the same winner on every word
 *   test_p2p_eager_claim claimed     under symcomm-run -n 2, SYMCOMM_TIMEOUT=2:
 *                                    rank 1's receive of rank 0's eager
 *                                    message 0 stalls 3 s in its copy, after
 *                                    its claim (the buffer's page comes from
 *                                    a userfaultfd that answers late): rank
 *                                    0's send finishes (delivered), not timed
 *                                    out; its next send waits for the ack
 *                                    before touching the slot the stalled copy
 *                                    reads; both messages arrive whole
 *   test_p2p_eager_claim withdrawn   rank 1 plays a receiver that stalls 3 s
 *                                    between its look at message 0 and its
 *                                    claim (by hand, through the simulated
 *                                    backend's runtime): rank 0's send times
 *                                    out, the late claim must lose, and a
 *                                    receive then fails
 *   test_p2p_eager_claim poisoned    rank 1's receive of message 0 stalls in
 *                                    its copy as in `claimed`, on stream X;
 *                                    meanwhile its stream Y fails (a send that
 *                                    rank 0 never receives times out) and
 *                                    marks the pair failed: rank 0's send,
 *                                    still waiting for the ack, finds the
 *                                    failure, but the message was claimed: the
 *                                    send and the receive both finish
 * (From a review that found this case; stream Y's later receive on the
 * pair, queued behind X's, is what the failure discards and marks.) */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/host/host_runtime.h" /* first: the runtime the device code uses */
#include "core/stream.h"
#include "device/p2p.h"
#include "test_data.h"
#include "test_util.h"

enum { BYTES = 200, WORDS = 1 << 16, SWEEPS = 8, STALL_US = 3000000 };

/* ---- race: both sides of each word, from two threads in step */

/* Each thread takes the words in order, at most one ahead of the other, so
 * that the two meet on most words at once: a claim that reads, decides and
 * then stores (not one atomic) loses the race somewhere in a sweep. */
typedef struct {
  uint64_t *words;
  unsigned char *result;
  int *progress; /* [2]: words each thread finished */
  int me;        /* 0 claims, 1 withdraws */
} side_t;

static void *sweep(void *arg) {
  side_t *s = arg;
  for (int i = 0; i < WORDS; i++) {
    while (__atomic_load_n(&s->progress[1 - s->me], __ATOMIC_ACQUIRE) < i - 1)
      ;
    uint64_t msg = (uint64_t)(i % 7); /* messages 0..msg-1 claimed before */
    s->result[i] = s->me == 0 ? (unsigned char)sc_p2p_eager_claim(&s->words[i], msg)
                              : (unsigned char)sc_p2p_eager_withdraw(&s->words[i], msg);
    __atomic_store_n(&s->progress[s->me], i + 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

static int run_race(void) {
  uint64_t *words = calloc(WORDS, sizeof(*words));
  unsigned char *claimed = calloc(WORDS, 1), *delivered = calloc(WORDS, 1);
  TEST_ASSERT(words != NULL && claimed != NULL && delivered != NULL);
  long claims = 0, withdrawals = 0;
  for (int round = 0; round < SWEEPS; round++) {
    for (int i = 0; i < WORDS; i++)
      words[i] = (uint64_t)(i % 7);
    int progress[2] = {0, 0};
    side_t c = {words, claimed, progress, 0}, w = {words, delivered, progress, 1};
    pthread_t tc, tw;
    TEST_ASSERT(pthread_create(&tc, NULL, sweep, &c) == 0);
    TEST_ASSERT(pthread_create(&tw, NULL, sweep, &w) == 0);
    pthread_join(tc, NULL);
    pthread_join(tw, NULL);
    for (int i = 0; i < WORDS; i++) {
      uint64_t msg = (uint64_t)(i % 7), v = words[i];
      /* Claimed: the withdrawal says delivered. Withdrawn: the claim lost. */
      TEST_ASSERT(claimed[i] == delivered[i], "sweep %d word %d: the claim says %d, the withdrawal %d",
                  round, i, claimed[i], delivered[i]);
      TEST_ASSERT(claimed[i] ? v == msg + 1 : v == (msg | SC_SLOT_ERROR),
                  "sweep %d word %d holds %#llx after %s", round, i, (unsigned long long)v,
                  claimed[i] ? "a claim" : "a withdrawal");
      claims += claimed[i];
      withdrawals += !claimed[i];
    }
  }
  /* Either order, one after the other: the first one wins. */
  uint64_t word = 3;
  TEST_ASSERT(sc_p2p_eager_claim(&word, 3) == 1 && sc_p2p_eager_withdraw(&word, 3) == 1);
  TEST_ASSERT(sc_p2p_eager_withdraw(&word, 4) == 0 && sc_p2p_eager_claim(&word, 4) == 0);
  TEST_ASSERT(sc_p2p_eager_withdraw(&word, 5) == 0, "a failed word stays failed");
  TEST_ASSERT(word == (4 | SC_SLOT_ERROR), "the word holds %#llx", (unsigned long long)word);
  printf("race: %d sweeps of %d words, %ld claimed first, %ld withdrawn first, always agreed\n",
         SWEEPS, WORDS, claims, withdrawals);
  TEST_ASSERT(claims > 0 && withdrawals > 0, "one side always won: the threads never met");
  free(words);
  free(claimed);
  free(delivered);
  return 0;
}

/* ---- a receive buffer whose first write waits (userfaultfd) */

typedef struct {
  int uffd;
  void *page;
  size_t page_bytes;
  double faulted_at; /* when the copy touched the page (0: never) */
} stall_t;

/* The first fault on the page is answered STALL_US later. */
static void *stall_main(void *arg) {
  stall_t *st = arg;
  struct pollfd p = {.fd = st->uffd, .events = POLLIN};
  TEST_ASSERT(poll(&p, 1, 20000) == 1, "the receive never wrote its buffer");
  struct uffd_msg msg;
  TEST_ASSERT(read(st->uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg));
  TEST_ASSERT(msg.event == UFFD_EVENT_PAGEFAULT, "userfaultfd event %d", msg.event);
  st->faulted_at = test_now();
  usleep(STALL_US);
  struct uffdio_zeropage z = {.range = {.start = (uintptr_t)st->page, .len = st->page_bytes}};
  TEST_ASSERT(ioctl(st->uffd, UFFDIO_ZEROPAGE, &z) == 0, "UFFDIO_ZEROPAGE: %s", strerror(errno));
  return NULL;
}

static void stall_arm(stall_t *st, pthread_t *thread) {
  st->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
  st->page = mmap(NULL, st->page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TEST_ASSERT(st->page != MAP_FAILED);
  /* User-mode faults only: allowed without privilege (the copy is user code). */
  st->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
  TEST_ASSERT(st->uffd >= 0, "userfaultfd: %s", strerror(errno));
  struct uffdio_api api = {.api = UFFD_API};
  TEST_ASSERT(ioctl(st->uffd, UFFDIO_API, &api) == 0, "UFFDIO_API: %s", strerror(errno));
  struct uffdio_register reg = {.range = {.start = (uintptr_t)st->page, .len = st->page_bytes},
                                .mode = UFFDIO_REGISTER_MODE_MISSING};
  TEST_ASSERT(ioctl(st->uffd, UFFDIO_REGISTER, &reg) == 0, "UFFDIO_REGISTER: %s",
              strerror(errno));
  st->faulted_at = 0;
  TEST_ASSERT(pthread_create(thread, NULL, stall_main, st) == 0);
}

/* ---- a sender (rank 0) against a receiver that stalls (rank 1) */

/* Message msg of `bytes`, sent with fill seed `seed`, is whole in the slot. */
static int slot_holds(uint64_t *slot, uint64_t msg, const unsigned char *want) {
  uint64_t v;
  uint32_t flag = sc_ll_flag(msg);
  if (!sc_ll_read(sc_p2p_eager_line(slot, 0), flag, &v) || v != BYTES)
    return 0;
  for (uint64_t l = 0; l + 1 < sc_p2p_eager_lines(BYTES); l++) {
    if (!sc_ll_read(sc_p2p_eager_line(slot, 1 + l), flag, &v))
      return 0;
    if (v != sc_ll_take(want, l, BYTES))
      return 0;
  }
  return 1;
}

/* Rank 1 of `poisoned`: X's receive stalls after its claim while Y fails. */
static void run_poisoned_receiver(symcomm_comm_t comm, symcomm_stream_t sx, const unsigned char *want,
                                  td_buf_t *other) {
  symcomm_stream_t sy;
  TEST_OK(symcomm_stream_create(comm, &sy));
  stall_t st;
  pthread_t staller;
  stall_arm(&st, &staller);
  TEST_OK(symcomm_send(other->data, BYTES, SYMCOMM_UINT8, 0, comm, sy)); /* never received */
  TEST_OK(symcomm_recv(st.page, BYTES, SYMCOMM_UINT8, 0, comm, sx));
  TEST_OK(symcomm_recv(other->data, BYTES, SYMCOMM_UINT8, 0, comm, sy)); /* after X's */
  symcomm_result_t ry = symcomm_stream_synchronize(sy);
  TEST_ASSERT(ry == SYMCOMM_ERR_TIMEOUT, "stream Y: %s", symcomm_result_string(ry));
  symcomm_result_t rx = symcomm_stream_synchronize(sx);
  pthread_join(staller, NULL);
  TEST_ASSERT(rx == SYMCOMM_OK, "stream X's claimed receive: %s", symcomm_result_string(rx));
  TEST_ASSERT(memcmp(st.page, want, BYTES) == 0, "message 0 arrived changed");
  TEST_ASSERT(munmap(st.page, st.page_bytes) == 0);
  close(st.uffd);
  symcomm_stream_destroy(sy);
  printf("poisoned: rank 1's stream Y timed out; its claimed receive on X finished whole\n");
}

enum { MODE_CLAIMED, MODE_WITHDRAWN, MODE_POISONED };

static int run_pair(int mode) {
  int claim_first = mode != MODE_WITHDRAWN;
  symcomm_comm_t comm;
  int rank, size;
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  TEST_ASSERT(size == 2, "run with 2 ranks, not %d", size);
  int peer = 1 - rank;
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  td_buf_t buf[2] = {td_buf_alloc(BYTES, 0), td_buf_alloc(BYTES, 0)};
  unsigned char want[2][BYTES];
  for (int m = 0; m < 2; m++)
    td_fill(want[m], BYTES, 101 + (uint64_t)m, 0);

  /* The descriptor: from an argument block, as a launch would carry it. */
  static sc_p2p_args_t args;
  size_t args_bytes;
  uint32_t blocks;
  sc_p2p_op_t op;
  sc_p2p_op_make(comm->p2p, rank == 0 ? SC_P2P_SEND : SC_P2P_RECV, peer, buf[0].data, BYTES, &op);
  sc_p2p_build(comm->p2p, &op, 1, &args, &args_bytes, &blocks);
  sc_p2p_desc_t *d = args.desc;
  TEST_ASSERT(sc_p2p_eager(BYTES, d->eager_bytes), "%d bytes should go eagerly (eager limit %llu)",
              BYTES, (unsigned long long)d->eager_bytes);

  if (rank == 0) {
    memcpy(buf[0].data, want[0], BYTES);
    if (mode == MODE_POISONED)
      usleep(500000); /* rank 1's streams are under way */
    double t0 = test_now();
    symcomm_result_t r = symcomm_send(buf[0].data, BYTES, SYMCOMM_UINT8, 1, comm, stream);
    if (r == SYMCOMM_OK)
      r = symcomm_stream_synchronize(stream);
    double waited = test_now() - t0;
    if (!claim_first) {
      TEST_ASSERT(r == SYMCOMM_ERR_TIMEOUT, "the send not taken: %s after %.2f s",
                  symcomm_result_string(r), waited);
      printf("withdrawn: rank 0's send timed out after %.2f s\n", waited);
    } else {
      /* It waited out its timeout, then found the message claimed. */
      TEST_ASSERT(r == SYMCOMM_OK, "the send claimed by the receiver: %s after %.2f s",
                  symcomm_result_string(r), waited);
      if (mode == MODE_POISONED) {
        printf("poisoned: rank 0's send ended delivered after %.2f s\n", waited);
        goto done;
      }
      TEST_ASSERT(waited > 1.5, "the send ended after %.2f s, before its timeout", waited);
      memcpy(buf[1].data, want[1], BYTES);
      TEST_OK(symcomm_send(buf[1].data, BYTES, SYMCOMM_UINT8, 1, comm, stream));
      TEST_OK(symcomm_stream_synchronize(stream));
      printf("claimed: rank 0's send ended delivered after %.2f s, the next one after %.2f s\n",
             waited, test_now() - t0);
    }
  } else if (mode == MODE_POISONED) {
    run_poisoned_receiver(comm, stream, want[0], &buf[1]);
  } else {
    sc_p2p_pad_t *mine = d->pads[d->local_rank];
    sc_p2p_peer_lines_t *from0 = &mine->peer[d->local_rank ^ 1];
    uint64_t *slot = sc_p2p_eager_slot(d, mine, d->local_rank ^ 1);
    double deadline = test_now() + 20;
    while (!slot_holds(slot, 0, want[0])) { /* rank 0 sent it */
      TEST_ASSERT(test_now() < deadline, "message 0 never arrived whole");
      usleep(1000);
    }
    if (claim_first) {
      /* The page is touched first by the copy, after the claim. */
      stall_t st;
      pthread_t staller;
      stall_arm(&st, &staller);
      TEST_OK(symcomm_recv(st.page, BYTES, SYMCOMM_UINT8, 0, comm, stream));
      TEST_OK(symcomm_stream_synchronize(stream));
      pthread_join(staller, NULL);
      TEST_ASSERT(st.faulted_at > 0 && sc_dev_load(&from0->eager_taken.value) == 1,
                  "message 0 was not claimed before the copy");
      /* The stalled copy read the slot after the stall: had the next send
       * not waited for the ack, message 1's data would be here. */
      TEST_ASSERT(memcmp(st.page, want[0], BYTES) == 0, "message 0 arrived changed");
      td_reset(buf[1].data, BYTES);
      TEST_OK(symcomm_recv(buf[1].data, BYTES, SYMCOMM_UINT8, 0, comm, stream));
      TEST_OK(symcomm_stream_synchronize(stream));
      td_check(buf[1].data, BYTES, 102, 0, "message 1");
      TEST_ASSERT(munmap(st.page, st.page_bytes) == 0);
      close(st.uffd);
      printf("claimed: rank 1's receive stalled %.1f s in its copy; both messages arrived whole\n",
             STALL_US / 1e6);
    } else {
      usleep(STALL_US); /* between the look and the claim */
      TEST_ASSERT(sc_p2p_eager_claim(&from0->eager_taken.value, 0) == 0,
                  "a claim after the sender gave up on the message won");
      TEST_ASSERT(sc_dev_load(&from0->eager_taken.value) & SC_SLOT_ERROR);
      symcomm_result_t r = symcomm_recv(buf[1].data, BYTES, SYMCOMM_UINT8, 0, comm, stream);
      if (r == SYMCOMM_OK)
        r = symcomm_stream_synchronize(stream);
      TEST_ASSERT(r != SYMCOMM_OK, "a receive of the withdrawn message succeeded");
      printf("withdrawn: rank 1's late claim lost; its receive failed: %s\n",
             symcomm_result_string(r));
    }
  }
done:
  td_buf_free(&buf[0]);
  td_buf_free(&buf[1]);
  symcomm_stream_destroy(stream);
  symcomm_comm_destroy(comm);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "race") == 0)
    return run_race();
  if (strcmp(mode, "claimed") == 0)
    return run_pair(MODE_CLAIMED);
  if (strcmp(mode, "withdrawn") == 0)
    return run_pair(MODE_WITHDRAWN);
  if (strcmp(mode, "poisoned") == 0)
    return run_pair(MODE_POISONED);
  fprintf(stderr, "usage: test_p2p_eager_claim race|claimed|withdrawn|poisoned\n");
  return 2;
}
