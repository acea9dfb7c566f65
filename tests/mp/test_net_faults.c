/* Faults between hosts, under symcomm-run --hosts 2 (--netns where said), in
 * a loop of checked all-reduces of 4 MiB and sends around a ring:
 *   test_net_faults link_down   (--netns) after a few rounds, rank `local 0 of
 *                               host 1` takes its host's network link down
 *                               (ip link set ... down inside its namespace):
 *                               every rank's work fails, within
 *                               SYMCOMM_TIMEOUT and a margin, with a sentence
 *                               naming a rank
 *   test_net_faults survive [N] the loop runs its N rounds (40) to the end, every
 *                               result checked (a stray client sends garbage
 *                               to the job's ports meanwhile: the script)
 *   test_net_faults fail        every rank's work fails with a sentence naming
 *                               a rank (SYMCOMM_NET_FAULT=seq: a chunk with
 *                               another message's number)
 * In every case no byte outside the buffers changes (guards checked after
 * the failure too). A rank whose work failed as the case expects exits 3
 * after printing "rank R: failed as expected after T s: SENTENCE"; the
 * script checks that every rank did. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

enum { COUNT = 1 << 20, FAIL_AT = 3 };

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_net_faults link_down|survive|fail\n");
    return 2;
  }
  const char *mode = argv[1];
  bool expect_ok = strcmp(mode, "survive") == 0;
  int rounds = argc > 2 ? atoi(argv[2]) : 40;
  symcomm_comm_t comm;
  int rank, size, host, local;
  tdev_init_job(&comm, &rank, &size, false);
  TEST_OK(symcomm_comm_host_index(comm, &host));
  TEST_OK(symcomm_comm_local_rank(comm, &local));
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  size_t bytes = COUNT * sizeof(int32_t);
  tdev_buf_t in = tdev_buf_alloc(bytes, 0), out = tdev_buf_alloc(bytes, 0);
  tdev_buf_t ring_out = tdev_buf_alloc(bytes, 0), ring_in = tdev_buf_alloc(bytes, 0);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double start = test_now();
  symcomm_result_t res = SYMCOMM_OK;
  int round = 0;
  for (; round < rounds && res == SYMCOMM_OK; round++) {
    if (strcmp(mode, "link_down") == 0 && round == FAIL_AT && host == 1 && local == 0) {
      char cmd[128];
      snprintf(cmd, sizeof(cmd), "ip link set dev %s down", getenv("SYMCOMM_SOCKET_IFNAME"));
      TEST_ASSERT(system(cmd) == 0, "%s failed", cmd);
      start = test_now();
    }
    uint64_t seed = 7919u * (uint64_t)(round + 1);
    td_fill_small(in.host.data, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, seed, rank, 0);
    td_fill(ring_out.host.data, bytes, seed, rank);
    tdev_buf_push(&in);
    tdev_buf_push(&ring_out);
    td_reset(out.host.data, bytes);
    td_reset(ring_in.host.data, bytes);
    tdev_buf_push(&out);
    tdev_buf_push(&ring_in);
    res = symcomm_allreduce(in.data, out.data, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
    if (res == SYMCOMM_OK)
      res = symcomm_group_start();
    if (res == SYMCOMM_OK) {
      symcomm_send(ring_out.data, bytes, SYMCOMM_UINT8, right, comm, stream);
      symcomm_recv(ring_in.data, bytes, SYMCOMM_UINT8, left, comm, stream);
      res = symcomm_group_end();
    }
    if (res == SYMCOMM_OK)
      res = symcomm_stream_synchronize(stream);
    tdev_buf_pull(&out);
    tdev_buf_pull(&ring_in);
    tdev_buf_pull(&in);
    tdev_buf_pull(&ring_out);
    td_check_guards(out.host.data, bytes, "the all-reduce's output");
    td_check_guards(ring_in.host.data, bytes, "the receive buffer");
    td_check_guards(in.host.data, bytes, "the all-reduce's input");
    td_check_guards(ring_out.host.data, bytes, "the send buffer");
    if (res == SYMCOMM_OK) {
      td_check_reduced(out.host.data, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, seed, 0, size, "all-reduce");
      td_check(ring_in.host.data, bytes, seed, left, "the ring's receive");
    }
  }
  if (expect_ok) {
    TEST_ASSERT(res == SYMCOMM_OK, "round %d failed: %s", round, symcomm_last_error(comm));
    printf("rank %d: %d rounds checked\n", rank, rounds);
  } else {
    TEST_ASSERT(res != SYMCOMM_OK, "all %d rounds passed: the fault did nothing", rounds);
    const char *why = symcomm_last_error(comm);
    TEST_ASSERT(test_contains(why, "rank "), "the sentence names no rank: %s", why);
    printf("rank %d: failed as expected after %.1f s: %s\n", rank, test_now() - start, why);
    fflush(stdout);
  }
  tdev_buf_free(&in);
  tdev_buf_free(&out);
  tdev_buf_free(&ring_in);
  tdev_buf_free(&ring_out);
  if (!expect_ok) {
    /* The launcher stops the job when a rank exits: the others get time to
     * report their own failure first (on 2 loaded cores one rank once took
     * more than 5 s longer than the first to fail). */
    sleep(8);
    symcomm_comm_abort(comm);
    return 3;
  }
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  return 0;
}
