/* One job's life, for tests that run several jobs at once on one host or
 * attack a running job's root:
 *   job_windows SEED ROUNDS
 *       init from the launcher's environment; ROUNDS times a window checked
 *       as below; a send/recv ring with checked data; destroy
 *   job_windows steps DIR
 *       init, then wait between steps for the test that drives the job:
 *       each rank writes DIR/ready.RANK (rank 0 first DIR/root: "ADDR KEY
 *       PID", its SYMCOMM_ADDR and SYMCOMM_JOB_KEY); once DIR/go1 exists, a
 *       split by rank parity and checked windows in each half and the world,
 *       then DIR/step1.RANK; once DIR/go2 exists, the job's second world
 *       communicator (world 1) with a checked window; destroy
 * A checked window: every rank fills its part with data that depends on
 * (seed, rank, round, element), all ranks meet in an all-reduce (which runs
 * through scratch windows itself), and every rank checks every element of
 * every peer on its host through its mapping. Jobs get different seeds, so a
 * window mapped from another job (names of two jobs colliding) shows as wrong
 * data, not just as a failed call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define WORDS (64 * 1024 / 8)

static uint64_t value(uint64_t seed, int rank, int round, size_t i) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)rank << 40) ^ ((uint64_t)round << 20) ^ i;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

static void check_window(symcomm_comm_t comm, symcomm_stream_t stream, uint64_t seed, int round) {
  int rank, size, host;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  TEST_OK(symcomm_comm_host_index(comm, &host));
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, WORDS * 8, &win));
  uint64_t *mine = symcomm_window_local(win);
  for (size_t i = 0; i < WORDS; i++)
    mine[i] = value(seed, rank, round, i);
  int64_t one = 1, sum = 0;
  TEST_OK(symcomm_allreduce(&one, &sum, 1, SYMCOMM_INT64, SYMCOMM_SUM, comm, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  TEST_ASSERT(sum == size, "all-reduce of ones gave %lld on %d ranks", (long long)sum, size);
  for (int r = 0; r < size; r++) {
    int h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    const uint64_t *peer = symcomm_window_peer(win, r);
    if (h != host)
      continue;
    TEST_ASSERT(peer != NULL, "no mapping of rank %d's window", r);
    for (size_t i = 0; i < WORDS; i++)
      TEST_ASSERT(peer[i] == value(seed, r, round, i),
                  "job %llu round %d: rank %d's window holds %016llx at word %zu, not %016llx",
                  (unsigned long long)seed, round, r, (unsigned long long)peer[i], i,
                  (unsigned long long)value(seed, r, round, i));
  }
  TEST_OK(symcomm_window_free(win));
}

/* Each rank sends to the next and receives from the previous one. */
static void check_ring(symcomm_comm_t comm, symcomm_stream_t stream, uint64_t seed, int round) {
  int rank, size;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  if (size == 1)
    return;
  uint64_t *out = malloc(WORDS * 8), *in = malloc(WORDS * 8);
  TEST_ASSERT(out != NULL && in != NULL);
  for (size_t i = 0; i < WORDS; i++) {
    out[i] = value(seed, rank, round, i);
    in[i] = 0;
  }
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(out, WORDS, SYMCOMM_UINT64, next, comm, stream));
  TEST_OK(symcomm_recv(in, WORDS, SYMCOMM_UINT64, prev, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  for (size_t i = 0; i < WORDS; i++)
    TEST_ASSERT(in[i] == value(seed, prev, round, i), "received %016llx at word %zu from rank %d",
                (unsigned long long)in[i], i, prev);
  free(out);
  free(in);
}

static int rounds_of_windows(uint64_t seed, int rounds) {
  symcomm_comm_t comm;
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  int rank, size;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  for (int round = 0; round < rounds; round++)
    check_window(comm, stream, seed, round);
  /* Its staging rings are windows too. */
  check_ring(comm, stream, seed, rounds);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("job %llu: %d ranks, %d windows and a send/recv ring checked\n",
           (unsigned long long)seed, size, rounds);
  return 0;
}

/* ---- steps */

static void mark(const char *dir, const char *name, int rank) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.%d", dir, name, rank);
  FILE *f = fopen(path, "w");
  TEST_ASSERT(f != NULL, "cannot write %s", path);
  fclose(f);
}

static void wait_for(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++)
    usleep(20 * 1000);
  TEST_ASSERT(access(path, F_OK) == 0, "%s never came", path);
}

static void say_where_the_root_is(const char *dir) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof(path), "%s/root", dir);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  TEST_ASSERT(f != NULL);
  const char *key = getenv("SYMCOMM_JOB_KEY");
  fprintf(f, "%s %s %d\n", getenv("SYMCOMM_ADDR"), key != NULL ? key : "-", (int)getpid());
  fclose(f);
  TEST_ASSERT(rename(tmp, path) == 0);
}

static int steps(const char *dir) {
  symcomm_comm_t world;
  TEST_OK(symcomm_init_from_env(&world, NULL));
  int rank;
  TEST_OK(symcomm_comm_rank(world, &rank));
  if (rank == 0)
    say_where_the_root_is(dir);
  mark(dir, "ready", rank);
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(world, &stream));

  wait_for(dir, "go1");
  symcomm_comm_t half;
  TEST_OK(symcomm_comm_split(world, rank % 2, rank, &half));
  symcomm_stream_t half_stream;
  TEST_OK(symcomm_stream_create(half, &half_stream));
  check_window(half, half_stream, 1 + (uint64_t)rank % 2, 0);
  TEST_OK(symcomm_stream_destroy(half_stream));
  TEST_OK(symcomm_comm_destroy(half));
  check_window(world, stream, 3, 0);
  mark(dir, "step1", rank);

  wait_for(dir, "go2");
  symcomm_comm_t second;
  TEST_OK(symcomm_init_from_env(&second, NULL));
  symcomm_stream_t second_stream;
  TEST_OK(symcomm_stream_create(second, &second_stream));
  check_window(second, second_stream, 4, 0);
  TEST_OK(symcomm_stream_destroy(second_stream));
  TEST_OK(symcomm_comm_destroy(second));
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(world));
  if (rank == 0)
    printf("job_windows steps: every step passed\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "steps") == 0)
    return steps(argv[2]);
  TEST_ASSERT(argc == 3, "usage: job_windows SEED ROUNDS | job_windows steps DIR");
  return rounds_of_windows(strtoull(argv[1], NULL, 0), atoi(argv[2]));
}
