/* Send/recv bandwidth and latency between ranks 0 and 1, from 8 B to 256 MiB,
 * with the data checked byte for byte.
 *
 *   build/bin/symcomm-run -n 2 -- build/examples/p2p_bw [-w] [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS]
 *
 * -w puts the buffers in a window: a receive into a window takes the data
 * straight from the sender (one copy); otherwise it goes through the pair's
 * staging ring (two copies).
 *
 * For each size:
 * check:     rank 0 sends CHECKS messages, each with its own data (every byte
 *            a function of the message, the sender and the byte's position,
 *            so that no two chunks or messages look alike); rank 1 sets its
 *            buffer to a sentinel before each and checks every byte, and the
 *            guard bytes around the buffer, after it.
 * bandwidth: rank 0 sends ITERS messages back to back, rank 1 receives them,
 *            then answers with one byte; time per message and GB/s (1e9 B/s).
 *            They carry the last checked message again, into a buffer reset
 *            to the sentinel before the first: rank 1 checks it afterwards.
 * latency:   ping-pong of one message each way; half the round trip. Both
 *            ranks check the data that went back and forth afterwards.
 * #wrong counts the bytes found wrong on either rank (guard bytes included);
 * any makes the program fail. */
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

enum { CHECKS = 2, GUARD = 64, SENTINEL = 0xa5 };

static symcomm_comm_t comm;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Eight bytes of data: a hash of (message seed, sender, position / 8). */
static uint64_t word(uint64_t seed, int from, uint64_t w) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + (uint64_t)from * 0xd1b54a32d192ed03ull + w;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Byte i is byte i % 8 (little-endian) of word(seed, from, i / 8). */
static void fill(unsigned char *buf, size_t n, uint64_t seed, int from) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = word(seed, from, i / 8);
    memcpy(buf + i, &w, n - i < 8 ? n - i : 8);
  }
}

static size_t count_wrong(const unsigned char *buf, size_t n, uint64_t seed, int from) {
  size_t wrong = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = word(seed, from, i / 8);
    for (size_t k = 0; k < 8 && i + k < n; k++)
      wrong += buf[i + k] != (unsigned char)(w >> (8 * k));
  }
  return wrong;
}

/* The guards before and after the buffer's first `bytes`: a pattern of their
 * own (sender -1), set once and checked after every exchange. */
static void set_guards(unsigned char *buf, size_t bytes) {
  fill(buf - GUARD, GUARD, 1, -1);
  fill(buf + bytes, GUARD, 2, -1);
}

static size_t count_guards_wrong(const unsigned char *buf, size_t bytes) {
  return count_wrong(buf - GUARD, GUARD, 1, -1) + count_wrong(buf + bytes, GUARD, 2, -1);
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
    fprintf(stderr, "usage: p2p_bw [-w] [-b MIN] [-e MAX] [-f FACTOR>=2] [-i ITERS>=1]\n");
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
  /* The buffer, with room for guard bytes on each side. */
  symcomm_window_t win = NULL;
  unsigned char *mem, one = 0;
  if (use_window) {
    CHECK(symcomm_window_alloc(comm, max_bytes + 2 * GUARD, &win));
    mem = symcomm_window_local(win);
  } else {
    mem = malloc(max_bytes + 2 * GUARD);
  }
  if (mem == NULL) {
    fprintf(stderr, "p2p_bw: no memory for %zu bytes\n", max_bytes);
    return 1;
  }
  unsigned char *buf = mem + GUARD;
  int peer = 1 - rank;
  uint64_t messages = 0; /* both ranks count the checked messages alike: their seeds */
  size_t total_wrong = 0;
  if (rank == 0) {
    printf("# symcomm p2p_bw: rank 0 -> rank 1, %d messages per size for bandwidth, buffers %s\n",
           iters, use_window ? "in a window (one copy)" : "in plain memory (through the ring)");
    printf("# %12s %12s %12s %12s %8s\n", "size(B)", "time(us)", "algbw(GB/s)", "latency(us)",
           "#wrong");
  }
  for (size_t bytes = min_bytes; rank < 2 && bytes <= max_bytes; bytes *= (size_t)factor) {
    uint64_t wrong = 0; /* on this rank, for this size */
    set_guards(buf, bytes);
    /* Checked messages (also the warm-up of this size). */
    uint64_t seed = 0;
    for (int k = 0; k < CHECKS; k++) {
      seed = ++messages;
      if (rank == 0) {
        fill(buf, bytes, seed, 0);
        CHECK(symcomm_send(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      } else {
        memset(buf, SENTINEL, bytes);
        CHECK(symcomm_recv(buf, bytes, SYMCOMM_UINT8, peer, comm, stream));
      }
      CHECK(symcomm_stream_synchronize(stream));
      if (rank == 1)
        wrong += count_wrong(buf, bytes, seed, 0) + count_guards_wrong(buf, bytes);
    }

    /* Bandwidth. */
    if (rank == 1)
      memset(buf, SENTINEL, bytes);
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
    if (rank == 1)
      wrong += count_wrong(buf, bytes, seed, 0);

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
    /* The data went back and forth unchanged. */
    wrong += count_wrong(buf, bytes, seed, 0) + count_guards_wrong(buf, bytes);

    /* Rank 0 reports both ranks' counts. */
    uint64_t theirs = 0;
    if (rank == 0)
      CHECK(symcomm_recv(&theirs, 1, SYMCOMM_UINT64, peer, comm, stream));
    else
      CHECK(symcomm_send(&wrong, 1, SYMCOMM_UINT64, peer, comm, stream));
    CHECK(symcomm_stream_synchronize(stream));
    total_wrong += wrong;
    if (rank == 0) {
      total_wrong += theirs;
      printf("  %12zu %12.2f %12.3f %12.2f %8llu\n", bytes, bw_us, (double)bytes / bw_us / 1e3,
             lat_us, (unsigned long long)(wrong + theirs));
      fflush(stdout);
    }
  }
  CHECK(symcomm_stream_destroy(stream));
  if (use_window)
    CHECK(symcomm_window_free(win));
  else
    free(mem);
  CHECK(symcomm_comm_destroy(comm));
  if (total_wrong != 0) {
    fprintf(stderr, "rank %d: %zu wrong bytes\n", rank, total_wrong);
    return 1;
  }
  return 0;
}
