/* Send/recv bandwidth and latency between ranks 0 and 1, from 8 B to 256 MiB,
 * with every size's data checked byte for byte.
 *
 *   build/bin/symcomm-run -n 2 -- build/examples/p2p_bw [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS] [-w]
 *
 * -w puts the buffers in a window: a receive into a window takes the data
 * straight from the sender (one copy); otherwise it goes through the pair's
 * staging ring (two copies).
 *
 * bandwidth: rank 0 sends ITERS messages back to back, rank 1 receives them,
 *            then answers with one byte; time per message and GB/s (1e9 B/s).
 * latency:   ping-pong of one message each way; half the round trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symcomm.h"

#define CHECK(call)                                                                    \
  do {                                                                                 \
    symcomm_result_t r_ = (call);                                                      \
    if (r_ != SYMCOMM_OK) {                                                            \
      fprintf(stderr, "%s failed: %s: %s\n", #call, symcomm_result_string(r_),         \
              symcomm_last_error(comm));                                               \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static symcomm_comm_t comm;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static unsigned char pattern(size_t i, unsigned seed) { return (unsigned char)(i * 131u + seed * 7u + 1u); }

static void fill(unsigned char *buf, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    buf[i] = pattern(i, seed);
}

static size_t count_wrong(const unsigned char *buf, size_t n, unsigned seed) {
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++)
    wrong += buf[i] != pattern(i, seed);
  return wrong;
}

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k')
    v *= 1024;
  else if (*end == 'M' || *end == 'm')
    v *= 1024 * 1024;
  else if (*end == 'G' || *end == 'g')
    v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

int main(int argc, char **argv) {
  size_t min_bytes = 8, max_bytes = 256u << 20;
  int factor = 2, iters = 20, use_window = 0;
  for (int i = 1; i < argc && strcmp(argv[i], "-w") == 0; i++)
    use_window = 1;
  for (int i = 1 + use_window; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-b") == 0)
      min_bytes = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "-e") == 0)
      max_bytes = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "-f") == 0)
      factor = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-i") == 0)
      iters = atoi(argv[i + 1]);
  }
  if (min_bytes < 1 || max_bytes < min_bytes || factor < 2 || iters < 1) {
    fprintf(stderr, "usage: p2p_bw [-b MIN] [-e MAX] [-f FACTOR>=2] [-i ITERS>=1]\n");
    return 2;
  }
  CHECK(symcomm_init_from_env(&comm, NULL));
  int rank, size;
  CHECK(symcomm_comm_rank(comm, &rank));
  CHECK(symcomm_comm_size(comm, &size));
  if (size < 2) {
    fprintf(stderr, "p2p_bw needs 2 ranks (symcomm-run -n 2)\n");
    return 2;
  }
  symcomm_stream_t stream;
  CHECK(symcomm_stream_create(comm, &stream));
  symcomm_window_t win = NULL;
  unsigned char *buf, one = 0;
  if (use_window) {
    CHECK(symcomm_window_alloc(comm, max_bytes, &win));
    buf = symcomm_window_local(win);
  } else {
    buf = malloc(max_bytes);
  }
  if (buf == NULL) {
    fprintf(stderr, "p2p_bw: no memory for %zu bytes\n", max_bytes);
    return 1;
  }
  int peer = 1 - rank;
  size_t total_wrong = 0;
  if (rank == 0) {
    printf("# symcomm p2p_bw: rank 0 -> rank 1, %d messages per size for bandwidth, buffers %s\n",
           iters, use_window ? "in a window (one copy)" : "in plain memory (through the ring)");
    printf("# %12s %12s %12s %12s %8s\n", "size(B)", "time(us)", "algbw(GB/s)", "latency(us)",
           "#wrong");
  }
  for (size_t bytes = min_bytes; rank < 2 && bytes <= max_bytes; bytes *= (size_t)factor) {
    unsigned seed = (unsigned)(bytes % 251);
    /* Checked message (also the warm-up of this size). */
    if (rank == 0) {
      fill(buf, bytes, seed);
      CHECK(symcomm_send(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      CHECK(symcomm_recv(&one, 1, SYMCOMM_UINT8, peer, comm, stream));
    } else {
      memset(buf, 0, bytes);
      CHECK(symcomm_recv(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      CHECK(symcomm_stream_synchronize(stream));
      one = (unsigned char)(count_wrong(buf, bytes, seed) != 0);
      total_wrong += count_wrong(buf, bytes, seed);
      CHECK(symcomm_send(&one, 1, SYMCOMM_UINT8, peer, comm, stream));
    }
    CHECK(symcomm_stream_synchronize(stream));
    size_t wrong = one; /* rank 0 learns whether rank 1 saw a difference */

    /* Bandwidth. */
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
      if (rank == 0)
        CHECK(symcomm_send(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      else
        CHECK(symcomm_recv(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
    }
    if (rank == 0)
      CHECK(symcomm_recv(&one, 1, SYMCOMM_UINT8, peer, comm, stream));
    else
      CHECK(symcomm_send(&one, 1, SYMCOMM_UINT8, peer, comm, stream));
    CHECK(symcomm_stream_synchronize(stream));
    double bw_us = (now_us() - t0) / iters;

    /* Latency: ping-pong. */
    int pings = bytes <= (1u << 20) ? iters * 5 : 3;
    t0 = now_us();
    for (int i = 0; i < pings; i++) {
      if (rank == 0) {
        CHECK(symcomm_send(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
        CHECK(symcomm_recv(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      } else {
        CHECK(symcomm_recv(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
        CHECK(symcomm_send(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      }
    }
    CHECK(symcomm_stream_synchronize(stream));
    double lat_us = (now_us() - t0) / pings / 2;
    if (rank == 1) /* the ping-pong data went through both ranks unchanged */
      total_wrong += count_wrong(buf, bytes, seed);
    if (rank == 0) {
      wrong += count_wrong(buf, bytes, seed);
      total_wrong += wrong;
      printf("  %12zu %12.2f %12.3f %12.2f %8zu\n", bytes, bw_us, (double)bytes / bw_us / 1e3,
             lat_us, wrong);
      fflush(stdout);
    }
  }
  CHECK(symcomm_stream_destroy(stream));
  if (use_window)
    CHECK(symcomm_window_free(win));
  else
    free(buf);
  CHECK(symcomm_comm_destroy(comm));
  if (total_wrong != 0) {
    fprintf(stderr, "rank %d: %zu wrong bytes\n", rank, total_wrong);
    return 1;
  }
  return 0;
}
