/* An eager send ends once its message is put into the receiver's slot
 * (device/p2p_eager.h): it waits for no receive. The next eager send on the
 * pair waits for the receiver's ack of that one before it reuses the slot.
 * Under symcomm-run -n 2 with SYMCOMM_P2P_EAGER_BYTES=1024:
 *   test_p2p_eager_put ended   rank 0's send of message 0 ends (its stream
 *                              synchronizes OK, its pair's done counter moves)
 *                              before rank 1 posts the receive, which then
 *                              gets it whole
 *   test_p2p_eager_put reuse   rank 1's receive of message 0 stalls 1.5 s in
 *                              its copy (the buffer's page comes from a
 *                              userfaultfd that answers late) while rank 0's
 *                              send of message 1 is queued: that send must wait
 *                              for the ack before touching the slot the stalled
 *                              copy reads; both messages arrive whole
 *   test_p2p_eager_put left    rank 0 sends message 0, destroys its
 *                              communicator and exits; rank 1 posts its receive
 *                              after that and gets the message whole (a message
 *                              put is delivered)
 *   test_p2p_eager_put unposted  SYMCOMM_TIMEOUT=2: rank 1 never posts the
 *                              receive; rank 0's send of message 0 ends, its
 *                              send of message 1 times out, naming message 0
 *   test_p2p_eager_put untaken rank 1 destroys its communicator without
 *                              posting the receive; rank 0's send of message
 *                              1 fails, saying that rank 1 left before taking
 *                              message 0 (not during it: that send had ended) */
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

enum { BYTES = 200, STALL_US = 1500000 };

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

/* Message msg of BYTES with data `want` is whole in the slot. */
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

/* Waits (rank 1) until rank 0's pad says its send `msg` to this rank ended. */
static void wait_send_ended(const sc_p2p_desc_t *d, uint64_t msg) {
  const sc_p2p_peer_lines_t *to_me = &d->pads[d->local_rank ^ 1]->peer[d->local_rank];
  double deadline = test_now() + 8;
  while (sc_dev_load(&to_me->sends_done.value) < msg + 1) {
    TEST_ASSERT(test_now() < deadline,
                "rank 0's send #%llu did not end before its receive was posted (sends_done %#llx)",
                (unsigned long long)msg, (unsigned long long)sc_dev_load(&to_me->sends_done.value));
    usleep(1000);
  }
}

enum { MODE_ENDED, MODE_REUSE, MODE_LEFT, MODE_UNPOSTED, MODE_UNTAKEN };

static int run_pair(int mode) {
  symcomm_comm_t comm;
  int rank;
  test_init_pair(&comm, &rank);
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
    double t0 = test_now();
    TEST_OK(symcomm_send(buf[0].data, BYTES, SYMCOMM_UINT8, 1, comm, stream));
    symcomm_result_t r = symcomm_stream_synchronize(stream);
    TEST_ASSERT(r == SYMCOMM_OK, "send #0, not received yet: %s (%s)", symcomm_result_string(r),
                symcomm_last_error(comm));
    /* Its data is out of the buffer: the caller may write it at once. */
    memset(buf[0].data, 0x5a, BYTES);
    printf("rank 0: send #0 ended after %.3f s\n", test_now() - t0);
    if (mode == MODE_LEFT) {
      td_buf_free(&buf[0]);
      td_buf_free(&buf[1]);
      symcomm_stream_destroy(stream);
      TEST_OK(symcomm_comm_destroy(comm));
      printf("rank 0: left\n");
      return 0;
    }
    if (mode != MODE_ENDED) {
      memcpy(buf[1].data, want[1], BYTES);
      TEST_OK(symcomm_send(buf[1].data, BYTES, SYMCOMM_UINT8, 1, comm, stream));
      r = symcomm_stream_synchronize(stream);
      if (mode == MODE_UNPOSTED) {
        const char *why = symcomm_last_error(comm);
        TEST_ASSERT(r == SYMCOMM_ERR_TIMEOUT, "send #1 behind a message never taken: %s (%s)",
                    symcomm_result_string(r), why);
        TEST_ASSERT(test_contains(why, "send #0 (200 bytes) to rank 1"),
                    "the timeout does not name the message not taken: %s", why);
        printf("unposted: %s\n", why);
      } else if (mode == MODE_UNTAKEN) {
        const char *why = symcomm_last_error(comm);
        TEST_ASSERT(r == SYMCOMM_ERR_REMOTE, "send #1 behind a message its peer left untaken: %s (%s)",
                    symcomm_result_string(r), why);
        TEST_ASSERT(test_contains(why, "rank 1 left (destroyed its communicator) before taking send "
                                       "#0 to rank 1, which had ended"),
                    "the sentence does not say that rank 1 left before taking send #0: %s", why);
        printf("untaken: %s\n", why);
      } else {
        TEST_ASSERT(r == SYMCOMM_OK, "send #1: %s (%s)", symcomm_result_string(r),
                    symcomm_last_error(comm));
        printf("rank 0: send #1 ended after %.3f s\n", test_now() - t0);
      }
    }
  } else if (mode == MODE_UNTAKEN) {
    wait_send_ended(d, 0);
    symcomm_stream_destroy(stream);
    TEST_OK(symcomm_comm_destroy(comm));
    printf("rank 1: left without taking message 0\n");
    td_buf_free(&buf[0]);
    td_buf_free(&buf[1]);
    return 0;
  } else if (mode == MODE_UNPOSTED) {
    wait_send_ended(d, 0);
    /* Never received; rank 0's timeout fails the session: wait for the news. */
    symcomm_result_t r = SYMCOMM_OK;
    for (double deadline = test_now() + 20; r == SYMCOMM_OK && test_now() < deadline;) {
      usleep(100000);
      TEST_OK(symcomm_comm_get_async_error(comm, &r));
    }
    TEST_ASSERT(r != SYMCOMM_OK, "rank 0's timeout never reached this rank");
  } else {
    sc_p2p_pad_t *mine = d->pads[d->local_rank];
    uint64_t *slot = sc_p2p_eager_slot(d, mine, d->local_rank ^ 1);
    wait_send_ended(d, 0);
    TEST_ASSERT(slot_holds(slot, 0, want[0]), "send #0 ended, but its message is not in the slot");
    if (mode == MODE_LEFT)
      usleep(500000); /* rank 0 leaves meanwhile */
    if (mode == MODE_REUSE) {
      /* The page is touched first by the copy, after the look. */
      stall_t st;
      pthread_t staller;
      stall_arm(&st, &staller);
      TEST_OK(symcomm_recv(st.page, BYTES, SYMCOMM_UINT8, 0, comm, stream));
      TEST_OK(symcomm_stream_synchronize(stream));
      pthread_join(staller, NULL);
      TEST_ASSERT(st.faulted_at > 0, "the receive never wrote its buffer");
      /* The stalled copy read the slot after the stall: had the next send
       * not waited for the ack, message 1's data would be here. */
      TEST_ASSERT(memcmp(st.page, want[0], BYTES) == 0, "message 0 arrived changed");
      td_reset(buf[1].data, BYTES);
      TEST_OK(symcomm_recv(buf[1].data, BYTES, SYMCOMM_UINT8, 0, comm, stream));
      TEST_OK(symcomm_stream_synchronize(stream));
      td_check(buf[1].data, BYTES, 102, 0, "message 1");
      TEST_ASSERT(munmap(st.page, st.page_bytes) == 0);
      close(st.uffd);
      printf("reuse: rank 1's receive stalled %.1f s in its copy; both messages arrived whole\n",
             STALL_US / 1e6);
    } else {
      td_reset(buf[0].data, BYTES);
      TEST_OK(symcomm_recv(buf[0].data, BYTES, SYMCOMM_UINT8, 0, comm, stream));
      symcomm_result_t r = symcomm_stream_synchronize(stream);
      TEST_ASSERT(r == SYMCOMM_OK, "the receive of a message put: %s (%s)",
                  symcomm_result_string(r), symcomm_last_error(comm));
      td_check(buf[0].data, BYTES, 101, 0, "message 0");
      printf("%s: rank 1 received message 0 whole after its send ended\n",
             mode == MODE_LEFT ? "left" : "ended");
    }
  }
  td_buf_free(&buf[0]);
  td_buf_free(&buf[1]);
  symcomm_stream_destroy(stream);
  symcomm_comm_destroy(comm);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "ended") == 0)
    return run_pair(MODE_ENDED);
  if (strcmp(mode, "reuse") == 0)
    return run_pair(MODE_REUSE);
  if (strcmp(mode, "left") == 0)
    return run_pair(MODE_LEFT);
  if (strcmp(mode, "unposted") == 0)
    return run_pair(MODE_UNPOSTED);
  if (strcmp(mode, "untaken") == 0)
    return run_pair(MODE_UNTAKEN);
  fprintf(stderr, "usage: test_p2p_eager_put ended|reuse|left|unposted|untaken\n");
  return 2;
}
