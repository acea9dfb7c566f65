/* Eager and rendezvous messages back to back on the same pairs, around the
 * eager limit E (SYMCOMM_P2P_EAGER_BYTES, else the backend's default):
 *   test_p2p_eager alt N   ring: N rounds of a burst of 8 messages
 *                          alternating sizes (just under E, eager, then over E,
 *                          rendezvous), queued with no sync between them (an
 *                          eager send must not take the next message's
 *                          rendezvous for its own: a false size mismatch)
 *   test_p2p_eager mix N   all-to-all: N rounds, every pair a size within 20
 *                          bytes of E or 0 (the same sequence on both sides),
 *                          grouped, two streams alternating
 * Every message carries its own data (tests/common/test_data.h), checked with
 * its guards. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

static size_t eager_limit(void) {
  const char *e = getenv("SYMCOMM_P2P_EAGER_BYTES");
  return e ? (size_t)strtoull(e, NULL, 10) : tdev_cuda() ? 32u << 10 : 16u << 10;
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return x;
}

static void test_alt(int rounds) {
  enum { K = 8 };
  size_t E = eager_limit();
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int it = 0; it < rounds; it++) {
    tdev_buf_t out[K], in[K];
    size_t len[K];
    uint64_t seed[K];
    for (int k = 0; k < K; k++) {
      size_t v = mix64((uint64_t)it * K + k) % 5;
      len[k] = (k & 1) ? E + 1 + v * 1000 : (E > v ? E - v : 0);
      seed[k] = (uint64_t)it * 977 + k + 1;
      out[k] = tdev_buf_alloc(len[k], k & 3);
      in[k] = tdev_buf_alloc(len[k], (k * 3) & 7);
      td_fill(out[k].host.data, len[k], seed[k], rank);
      tdev_buf_push(&out[k]);
    }
    for (int k = 0; k < K; k++) {
      TEST_OK(symcomm_group_start());
      TEST_OK(symcomm_send(out[k].data, len[k], SYMCOMM_UINT8, right, comm, s));
      TEST_OK(symcomm_recv(in[k].data, len[k], SYMCOMM_UINT8, left, comm, s));
      TEST_OK(symcomm_group_end());
    }
    symcomm_result_t r = symcomm_stream_synchronize(s);
    TEST_ASSERT(r == SYMCOMM_OK, "round %d: %s", it, symcomm_last_error(comm));
    for (int k = 0; k < K; k++) {
      char what[64];
      snprintf(what, sizeof what, "round %d msg %d (%zu bytes)", it, k, len[k]);
      tdev_buf_pull(&in[k]);
      td_check(in[k].host.data, len[k], seed[k], left, what);
      td_check_guards(in[k].host.data, len[k], what);
      tdev_buf_free(&in[k]);
      tdev_buf_free(&out[k]);
    }
  }
  TEST_OK(symcomm_stream_destroy(s));
}

static void test_mix(int rounds) {
  size_t E = eager_limit();
  symcomm_stream_t s[2];
  TEST_OK(symcomm_stream_create(comm, &s[0]));
  TEST_OK(symcomm_stream_create(comm, &s[1]));
  for (int it = 0; it < rounds; it++) {
    symcomm_stream_t st = s[it & 1];
    tdev_buf_t *out = calloc(size, sizeof *out), *in = calloc(size, sizeof *in);
    size_t *olen = calloc(size, sizeof *olen), *ilen = calloc(size, sizeof *ilen);
    for (int p = 0; p < size; p++) {
      if (p == rank) continue;
      uint64_t ho = mix64(((uint64_t)it << 16) | (uint64_t)rank << 8 | p);
      uint64_t hi = mix64(((uint64_t)it << 16) | (uint64_t)p << 8 | rank);
      long d = (long)(ho % 41) - 20;
      olen[p] = (ho >> 20) % 7 == 0 ? 0 : (size_t)((long)E + d < 0 ? 0 : (long)E + d);
      d = (long)(hi % 41) - 20;
      ilen[p] = (hi >> 20) % 7 == 0 ? 0 : (size_t)((long)E + d < 0 ? 0 : (long)E + d);
      out[p] = tdev_buf_alloc(olen[p], p & 7);
      in[p] = tdev_buf_alloc(ilen[p], (p * 5) & 7);
      td_fill(out[p].host.data, olen[p], (uint64_t)it * 131 + p, rank);
      tdev_buf_push(&out[p]);
    }
    TEST_OK(symcomm_group_start());
    for (int j = 1; j < size; j++) {
      int to = (rank + j) % size, from = (rank + size - j) % size;
      TEST_OK(symcomm_send(out[to].data, olen[to], SYMCOMM_UINT8, to, comm, st));
      TEST_OK(symcomm_recv(in[from].data, ilen[from], SYMCOMM_UINT8, from, comm, st));
    }
    TEST_OK(symcomm_group_end());
    if (it & 1) { /* sync only every other round: two streams in flight */
      symcomm_result_t r = symcomm_stream_synchronize(s[0]);
      TEST_ASSERT(r == SYMCOMM_OK, "round %d: %s", it, symcomm_last_error(comm));
      r = symcomm_stream_synchronize(s[1]);
      TEST_ASSERT(r == SYMCOMM_OK, "round %d: %s", it, symcomm_last_error(comm));
    } else {
      symcomm_result_t r = symcomm_stream_synchronize(st);
      TEST_ASSERT(r == SYMCOMM_OK, "round %d: %s", it, symcomm_last_error(comm));
    }
    for (int p = 0; p < size; p++) {
      if (p == rank) continue;
      char what[64];
      snprintf(what, sizeof what, "round %d from %d (%zu bytes)", it, p, ilen[p]);
      tdev_buf_pull(&in[p]);
      td_check(in[p].host.data, ilen[p], (uint64_t)it * 131 + rank, p, what);
      td_check_guards(in[p].host.data, ilen[p], what);
      tdev_buf_free(&in[p]);
      tdev_buf_free(&out[p]);
    }
    free(out); free(in); free(olen); free(ilen);
  }
  TEST_OK(symcomm_stream_destroy(s[0]));
  TEST_OK(symcomm_stream_destroy(s[1]));
}

int main(int argc, char **argv) {
  TEST_ASSERT(argc == 3, "usage: test_p2p_eager alt|mix ROUNDS");
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  tdev_open(comm);
  int n = atoi(argv[2]);
  if (strcmp(argv[1], "alt") == 0) test_alt(n);
  else if (strcmp(argv[1], "mix") == 0) test_mix(n);
  else TEST_ASSERT(0, "case");
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0) printf("test_p2p_eager %s: passed on %d ranks\n", argv[1], size);
  return 0;
}
