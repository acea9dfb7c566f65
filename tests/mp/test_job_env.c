/* What a job's shape and environment decide, decided once at init, under
 * symcomm-run:
 *   test_job_env ranks_per_host ok|refused
 *       ok: every host has at most 64 ranks of the job (symcomm's limit);
 *       init works, and on each host an all-reduce (one-shot and two-shot)
 *       and an all-to-all fill the per-rank arrays up to the host's size,
 *       every element checked. refused: some host has more; init fails on
 *       every rank, promptly, with UNSUPPORTED and a sentence that gives the
 *       limit.
 *   test_job_env check_once
 *       SYMCOMM_CHECK is read at init: rank 0 flips it in its environment
 *       after init, and collectives still run in step (a rank that read it
 *       again would check alone and wait for the others at the root); a
 *       mismatch is then named at the call (SYMCOMM_CHECK=1 at launch) or
 *       caught on the device (unset at launch), on every rank alike.
 * Run it with a short SYMCOMM_TIMEOUT: a failure must not wait long. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { LIMIT = 64 };

static uint64_t value_of(int rank, size_t i) {
  uint64_t z = (uint64_t)(rank + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
  return z ^ (z >> 29);
}

static void check_allreduce(symcomm_comm_t comm, symcomm_stream_t stream, int rank, int size,
                            size_t count, const int *world_of) {
  uint64_t *buf = malloc(sizeof(uint64_t) * (count + 2));
  TEST_ASSERT(buf != NULL);
  for (size_t i = 0; i < count + 2; i++)
    buf[i] = i == 0 || i == count + 1 ? 0xfeedull : value_of(world_of[rank], i);
  TEST_OK(symcomm_allreduce(buf + 1, buf + 1, count, SYMCOMM_UINT64, SYMCOMM_SUM, comm, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  TEST_ASSERT(buf[0] == 0xfeedull && buf[count + 1] == 0xfeedull, "bytes around the buffer written");
  for (size_t i = 1; i <= count; i++) {
    uint64_t want = 0;
    for (int r = 0; r < size; r++)
      want += value_of(world_of[r], i);
    TEST_ASSERT(buf[i] == want, "all-reduce of %zu on %d ranks: element %zu is %llu, expected %llu", count,
                size, i - 1, (unsigned long long)buf[i], (unsigned long long)want);
  }
  free(buf);
}

static void check_alltoall(symcomm_comm_t comm, symcomm_stream_t stream, int rank, int size,
                           const int *world_of) {
  enum { PER = 3 };
  size_t n = (size_t)size * PER;
  uint64_t *send = malloc(sizeof(uint64_t) * n), *recv = malloc(sizeof(uint64_t) * n);
  TEST_ASSERT(send != NULL && recv != NULL);
  for (size_t i = 0; i < n; i++) {
    send[i] = value_of(world_of[rank], i);
    recv[i] = 0xfeedull;
  }
  TEST_OK(symcomm_alltoall(send, recv, PER, SYMCOMM_UINT64, comm, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int from = 0; from < size; from++)
    for (size_t k = 0; k < PER; k++) {
      uint64_t want = value_of(world_of[from], (size_t)rank * PER + k);
      TEST_ASSERT(recv[(size_t)from * PER + k] == want, "all-to-all on %d ranks: block of rank %d, element %zu",
                  size, from, k);
    }
  free(send);
  free(recv);
}

static void ranks_per_host(int expect_ok) {
  symcomm_comm_t world = NULL;
  double t0 = test_now();
  symcomm_result_t r = symcomm_init_from_env(&world, NULL);
  if (!expect_ok) {
    TEST_ASSERT(r == SYMCOMM_ERR_UNSUPPORTED && world == NULL, "init gave %s", symcomm_result_string(r));
    const char *why = symcomm_last_error(NULL);
    TEST_ASSERT(test_contains(why, "has more than 64 ranks of this communicator") &&
                    test_contains(why, "at most 64 ranks per host"),
                "the sentence: %s", why);
    TEST_ASSERT(test_now() - t0 < 30, "refused only after %.1f s", test_now() - t0);
    return;
  }
  TEST_OK(r);
  int rank, host, local, local_size;
  TEST_OK(symcomm_comm_rank(world, &rank));
  TEST_OK(symcomm_comm_host_index(world, &host));
  TEST_OK(symcomm_comm_local_rank(world, &local));
  TEST_OK(symcomm_comm_local_size(world, &local_size));
  TEST_ASSERT(local_size <= LIMIT, "%d ranks on this host", local_size);
  symcomm_comm_t here;
  TEST_OK(symcomm_comm_split(world, host, local, &here));
  int world_of[LIMIT];
  for (int r2 = 0; r2 < local_size; r2++)
    TEST_OK(symcomm_comm_peer_world_rank(here, r2, &world_of[r2]));
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(here, &stream));
  check_allreduce(here, stream, local, local_size, 5, world_of);    /* one-shot */
  check_allreduce(here, stream, local, local_size, 40000, world_of); /* two-shot */
  check_alltoall(here, stream, local, local_size, world_of);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(here));
  TEST_OK(symcomm_comm_destroy(world));
  if (rank == 0)
    printf("test_job_env: rank 0's host of %d ranks works, every element checked\n", local_size);
}

static void check_once(void) {
  const char *at_launch = getenv("SYMCOMM_CHECK");
  int checked = at_launch != NULL && strcmp(at_launch, "1") == 0;
  symcomm_comm_t comm;
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  int rank, size;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  if (rank == 0) {
    if (checked)
      unsetenv("SYMCOMM_CHECK");
    else
      setenv("SYMCOMM_CHECK", "1", 1);
  }
  int world_of[LIMIT];
  for (int r = 0; r < size; r++)
    world_of[r] = r;
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  for (int i = 0; i < 3; i++)
    check_allreduce(comm, stream, rank, size, 100 + (size_t)i, world_of);
  /* A mismatch shows whether the check runs: it is the same on every rank. */
  static uint64_t buf[16];
  symcomm_result_t r = symcomm_allreduce(buf, buf, rank == 0 ? 7 : 8, SYMCOMM_UINT64, SYMCOMM_SUM, comm, stream);
  if (checked) {
    TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE && test_contains(symcomm_last_error(comm), "but rank"),
                "rank %d: %s: %s", rank, symcomm_result_string(r), symcomm_last_error(comm));
  } else {
    /* Caught on the device: the stream stops, maybe while the call still
     * queues the collective's later steps. */
    if (r == SYMCOMM_OK)
      r = symcomm_stream_synchronize(stream);
    TEST_ASSERT(r != SYMCOMM_OK && test_contains(symcomm_last_error(comm), "ranks disagree on a collective"),
                "rank %d: %s: %s", rank, symcomm_result_string(r), symcomm_last_error(comm));
  }
  symcomm_stream_destroy(stream);
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_job_env: SYMCOMM_CHECK=%s read once, at init\n", checked ? "1" : "0");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "ranks_per_host") == 0 && argc > 2) {
    ranks_per_host(strcmp(argv[2], "ok") == 0);
  } else if (strcmp(mode, "check_once") == 0) {
    check_once();
  } else {
    fprintf(stderr, "usage: test_job_env ranks_per_host ok|refused | check_once\n");
    return 2;
  }
  return 0;
}
