/* On a GPU (tests/gpu/run.sh; one process, device 0, no communicator):
 *   test_gpu_bulk KERNELS.fatbin      (the build's gpu_bulk_kernels.fatbin)
 * The CUDA backend's bulk data paths, run in a kernel of their own
 * (gpu_bulk_kernels.cu) with the backend's device runtime, against the
 * portable C code on the host:
 * - sc_dev_reduce (cuda_reduce.cuh: 16-byte vectors where dst and every
 *   source are equally far past a 16-byte boundary): every dtype x op, 1 to 8
 *   sources, counts 0 to 5003 and 40009, with every pointer aligned, all
 *   equally misaligned (a head to peel), in place (dst one of the sources),
 *   one source misaligned apart (the portable fallback) and every pointer at
 *   random; data with NaNs (payloads, both signs), +-0, +-inf and
 *   subnormals. Every element must equal, bit for bit, the host's portable
 *   loop (device/reduce.h) and the portable loop run on the GPU on a second
 *   copy of the buffers; but where arithmetic (SUM, PROD, AVG) makes a NaN,
 *   its bits are the hardware's (the GPU's, or the CPU's operand order), so
 *   there only NaN-ness is compared. MIN and MAX pick, so their NaNs, with
 *   payload and sign, compare bit for bit too.
 * - sc_dev_copy: 0 to 70001 bytes, pairs of misalignments mod 16, and
 *   overlapping copies both ways; every byte of the result.
 * Every byte outside the outputs must be unchanged. All of it in blocks of
 * 512 threads (the kernels') and of 64 (more turns of each loop). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_bulk.h"
#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

/* The host reference: device/reduce.h's portable loop as one thread. */
typedef struct {
  uint32_t thread, threads;
} sc_dev_ctx_t;
static inline uint32_t sc_dev_thread(const sc_dev_ctx_t *ctx) { return ctx->thread; }
static inline uint32_t sc_dev_threads(const sc_dev_ctx_t *ctx) { return ctx->threads; }
#include "device/reduce.h"

#define MAX_SRCS 8
#define SLACK 64 /* bytes before and after every buffer: writes there are caught */

static const char *const dtype_names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                          "uint64", "float16", "bfloat16", "float32", "float64"};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg"};
static const unsigned block_threads[] = {512, 64};

static void *fn; /* the kernel */
static uint64_t seed = 0x9b1dc0de;

/* ---- an arena: one device allocation per launch, its first contents on
 * the host (random bytes, then the inputs), buffers at chosen misalignments */

typedef struct {
  unsigned char *init; /* what is uploaded */
  unsigned char *out;  /* what came back */
  size_t used, cap;
  tdev_ptr_t dev;
} arena_t;

/* A buffer of `bytes` at `misalign` past a 64-byte boundary, SLACK around it. */
static size_t arena_take(arena_t *a, size_t bytes, size_t misalign) {
  size_t off = (a->used + SLACK + 63) / 64 * 64 + misalign;
  size_t end = off + bytes + SLACK;
  if (end > a->cap) {
    size_t cap = a->cap ? a->cap : 1 << 20;
    while (cap < end)
      cap *= 2;
    a->init = realloc(a->init, cap);
    TEST_ASSERT(a->init != NULL, "no memory for an arena of %zu bytes", cap);
    a->cap = cap;
  }
  for (size_t i = a->used; i < end; i += 8) { /* the slack too: random bytes, not zeros */
    uint64_t r = td_mix(seed, 99, i);
    memcpy(a->init + i, &r, end - i < 8 ? end - i : 8);
  }
  a->used = end;
  return off;
}

static uint64_t arena_addr(const arena_t *a, size_t off) { return a->dev + off; }

/* Uploads, runs `cases` (at `cases_off`) in blocks of `threads`, downloads. */
static void arena_run(arena_t *a, size_t cases_off, size_t ncases, unsigned threads) {
  tdev_upload((void *)(uintptr_t)a->dev, a->init, a->used);
  if (ncases > 0) {
    uint64_t cases = arena_addr(a, cases_off);
    void *params[] = {&cases};
    TDEV_CU(tdev_cu()->cuLaunchKernel(fn, (unsigned)ncases, 1, 1, threads, 1, 1, 0, NULL, params,
                                      NULL));
    TDEV_CU(tdev_cu()->cuStreamSynchronize(NULL)); /* a fault shows here */
  }
  tdev_download(a->out, (void *)(uintptr_t)a->dev, a->used);
}

static void arena_alloc(arena_t *a) {
  a->dev = (tdev_ptr_t)(uintptr_t)tdev_alloc(a->used);
  a->out = malloc(a->used);
  TEST_ASSERT(a->out != NULL, "no memory for %zu bytes", a->used);
}

static void arena_free(arena_t *a) {
  tdev_free((void *)(uintptr_t)a->dev);
  free(a->init);
  free(a->out);
  memset(a, 0, sizeof(*a));
}

/* The first byte where out differs from `expect` (both a->used long), or -1. */
static long first_difference(const arena_t *a, const unsigned char *expect) {
  for (size_t i = 0; i < a->used; i++)
    if (a->out[i] != expect[i])
      return (long)i;
  return -1;
}

/* ---- reductions */

static size_t dtype_bytes(int dtype) {
  static const size_t bytes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return bytes[dtype];
}

/* An input element from 64 random bits h: for the float types one time in
 * about four a NaN (random payload and sign), an infinity, a zero or a
 * subnormal, else a normal number not far from 1 (so that sums and products
 * of up to 8 stay mostly finite); for integers the bits themselves. */
static uint64_t input_bits(int dtype, uint64_t h) {
  unsigned pick = (unsigned)(h & 15);
  uint64_t r = h >> 4, sign = (h >> 63) & 1;
  switch (dtype) {
  case SYMCOMM_FLOAT16:
    switch (pick) {
    case 0: return sign << 15 | 0x7c00u | (r % 0x3ffu + 1);
    case 1: return sign << 15 | 0x7c00u;
    case 2: return sign << 15;
    case 3: return sign << 15 | (r % 0x3ffu + 1);
    default: return sign << 15 | (uint64_t)(15 + r % 9 - 4) << 10 | (r >> 8 & 0x3ffu);
    }
  case SYMCOMM_BFLOAT16:
    switch (pick) {
    case 0: return sign << 15 | 0x7f80u | (r % 0x7fu + 1);
    case 1: return sign << 15 | 0x7f80u;
    case 2: return sign << 15;
    case 3: return sign << 15 | (r % 0x7fu + 1);
    default: return sign << 15 | (uint64_t)(127 + r % 17 - 8) << 7 | (r >> 8 & 0x7fu);
    }
  case SYMCOMM_FLOAT32:
    switch (pick) {
    case 0: return sign << 31 | 0x7f800000u | (r % 0x7fffffu + 1);
    case 1: return sign << 31 | 0x7f800000u;
    case 2: return sign << 31;
    case 3: return sign << 31 | (r % 0x7fffffu + 1);
    default: return sign << 31 | (uint64_t)(127 + r % 17 - 8) << 23 | (r >> 8 & 0x7fffffu);
    }
  case SYMCOMM_FLOAT64: {
    uint64_t mant = r & 0xfffffffffffffull;
    switch (pick) {
    case 0: return sign << 63 | 0x7ff0000000000000ull | (mant != 0 ? mant : 1);
    case 1: return sign << 63 | 0x7ff0000000000000ull;
    case 2: return sign << 63;
    case 3: return sign << 63 | (mant != 0 ? mant : 1);
    default: return sign << 63 | (uint64_t)(1023 + (h >> 56) % 17 - 8) << 52 | mant;
    }
  }
  default: return h;
  }
}

static int is_nan(int dtype, uint64_t b) {
  switch (dtype) {
  case SYMCOMM_FLOAT16: return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
  case SYMCOMM_BFLOAT16: return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
  case SYMCOMM_FLOAT32: return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0;
  case SYMCOMM_FLOAT64:
    return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull) != 0;
  default: return 0;
  }
}

static uint64_t get_bits(int dtype, const unsigned char *p, size_t i) {
  uint64_t v = 0;
  memcpy(&v, p + i * dtype_bytes(dtype), dtype_bytes(dtype));
  return v;
}

/* Where a case's pointers sit: 0 all aligned; 1 all equally misaligned; 2 in
 * place, all equally (mis)aligned; 3 one pointer a whole element apart from
 * the others (the portable fallback); 4 each at random, in place or not. */
#define LAYOUTS 5
static const char *const layout_names[] = {"aligned", "equally misaligned", "in place",
                                           "one pointer apart", "random"};

typedef struct {
  int nsrcs, layout, inplace; /* inplace: the source dst is, or -1 */
  size_t count;
  size_t src[2][MAX_SRCS], dst[2]; /* arena offsets: [0] sc_dev_reduce, [1] the portable loop */
  size_t table[2];                 /* of the nsrcs source addresses */
} rcase_t;

static void plan_reduce(arena_t *a, rcase_t *c, int dtype, int nsrcs, size_t count, int layout,
                        uint64_t h) {
  size_t e = dtype_bytes(dtype), steps = 16 / e, bytes = count * e;
  size_t mis[MAX_SRCS + 1];
  size_t same = e * (size_t)(layout == 1 ? 1 + h % (steps - 1) : h % steps);
  for (int k = 0; k <= nsrcs; k++)
    mis[k] = layout == 0 ? 0 : layout == 4 ? e * (size_t)(td_mix(h, k, 1) % steps) : same;
  if (layout == 3)
    mis[h % (size_t)(nsrcs + 1)] = (same + e) % 16;
  c->nsrcs = nsrcs;
  c->layout = layout;
  c->count = count;
  c->inplace = layout == 2 || (layout == 4 && (h >> 20) % 2) ? (int)(h % (size_t)nsrcs) : -1;
  for (int set = 0; set < 2; set++) {
    for (int k = 0; k < nsrcs; k++) {
      c->src[set][k] = arena_take(a, bytes, mis[k]);
      for (size_t i = 0; i < count; i++) {
        uint64_t v = input_bits(dtype, td_mix(seed ^ h, k, i));
        memcpy(a->init + c->src[set][k] + i * e, &v, e);
      }
    }
    c->dst[set] = c->inplace >= 0 ? c->src[set][c->inplace] : arena_take(a, bytes, mis[nsrcs]);
    c->table[set] = arena_take(a, MAX_SRCS * sizeof(uint64_t), 0);
  }
}

/* Fails naming the case and the element. */
static void reduce_mismatch(int dtype, int op, const rcase_t *c, unsigned threads, size_t i,
                            const char *what, uint64_t got, uint64_t expected) {
  test_fail(__FILE__, __LINE__,
            "%s %s, %d sources, %zu elements, %s%s, blocks of %u threads: element %zu is 0x%llx, "
            "%s 0x%llx",
            dtype_names[dtype], op_names[op], c->nsrcs, c->count, layout_names[c->layout],
            c->inplace >= 0 ? " (in place)" : "", threads, i, (unsigned long long)got, what,
            (unsigned long long)expected);
}

static void check_reduce(const arena_t *a, int dtype, int op, const rcase_t *c, unsigned threads,
                         unsigned char *expect) {
  size_t e = dtype_bytes(dtype), bytes = c->count * e;
  const void *srcs[MAX_SRCS];
  for (int k = 0; k < c->nsrcs; k++)
    srcs[k] = a->init + c->src[0][k];
  unsigned char *host = malloc(bytes + 1);
  TEST_ASSERT(host != NULL, "no memory");
  sc_dev_ctx_t one = {0, 1};
  sc_dev_reduce(&one, host, srcs, c->nsrcs, c->count, dtype, op, c->nsrcs);
  const unsigned char *fast = a->out + c->dst[0], *ref = a->out + c->dst[1];
  int arith =
      dtype >= SYMCOMM_FLOAT16 && (op == SYMCOMM_SUM || op == SYMCOMM_PROD || op == SYMCOMM_AVG);
  for (size_t i = 0; i < c->count; i++) {
    uint64_t got = get_bits(dtype, fast, i), gpu = get_bits(dtype, ref, i);
    uint64_t want = get_bits(dtype, host, i);
    if (got != gpu && !(arith && is_nan(dtype, gpu) && is_nan(dtype, got)))
      reduce_mismatch(dtype, op, c, threads, i, "the portable loop on the GPU gives", got, gpu);
    if (got != want && !(arith && is_nan(dtype, want) && is_nan(dtype, got)))
      reduce_mismatch(dtype, op, c, threads, i, "the portable loop on the host gives", got, want);
  }
  free(host);
  /* the outputs as they came back: what is left to compare is everything else */
  memcpy(expect + c->dst[0], fast, bytes);
  memcpy(expect + c->dst[1], ref, bytes);
}

static const size_t reduce_counts[] = {0,   1,   2,    3,    5,    7,    8,    9,    15,  16,
                                       17,  31,  33,   63,   64,   65,   127,  129,  255, 257,
                                       511, 513, 1023, 1025, 2047, 2049, 4095, 4097, 5003};
#define BIG_COUNT 40009 /* several turns of the vector loop in blocks of 512 */

static void test_reduce_op(int dtype, int op) {
  arena_t a = {0};
  size_t max_cases = MAX_SRCS * (sizeof(reduce_counts) / sizeof(reduce_counts[0]) * LAYOUTS + 2);
  rcase_t *cases = calloc(max_cases, sizeof(*cases));
  TEST_ASSERT(cases != NULL, "no memory");
  size_t n = 0;
  for (int nsrcs = 1; nsrcs <= MAX_SRCS; nsrcs++) {
    for (size_t ci = 0; ci < sizeof(reduce_counts) / sizeof(reduce_counts[0]); ci++)
      for (int layout = 0; layout < LAYOUTS; layout++, n++)
        plan_reduce(&a, &cases[n], dtype, nsrcs, reduce_counts[ci], layout,
                    td_mix(seed, dtype * 8 + op, n));
    if (nsrcs == 1 || nsrcs == 2 || nsrcs == MAX_SRCS)
      for (int layout = 1; layout <= 2; layout++, n++)
        plan_reduce(&a, &cases[n], dtype, nsrcs, BIG_COUNT, layout,
                    td_mix(seed, dtype * 8 + op, n));
  }
  size_t cases_off = arena_take(&a, n * sizeof(tg_case_t), 0);
  arena_alloc(&a);
  tg_case_t *tc = (tg_case_t *)(a.init + cases_off);
  for (size_t i = 0; i < n; i++) {
    const rcase_t *c = &cases[i];
    for (int set = 0; set < 2; set++)
      for (int k = 0; k < c->nsrcs; k++) {
        uint64_t addr = arena_addr(&a, c->src[set][k]);
        memcpy(a.init + c->table[set] + k * sizeof(uint64_t), &addr, sizeof(addr));
      }
    tg_case_t t = {.kind = TG_REDUCE,
                   .nsrcs = c->nsrcs,
                   .dtype = dtype,
                   .op = op,
                   .divisor = c->nsrcs,
                   .count = c->count,
                   .dst = arena_addr(&a, c->dst[0]),
                   .src = arena_addr(&a, c->table[0]),
                   .ref_dst = arena_addr(&a, c->dst[1]),
                   .ref_src = arena_addr(&a, c->table[1])};
    memcpy(&tc[i], &t, sizeof(t));
  }
  unsigned char *expect = malloc(a.used);
  TEST_ASSERT(expect != NULL, "no memory");
  for (size_t b = 0; b < sizeof(block_threads) / sizeof(block_threads[0]); b++) {
    arena_run(&a, cases_off, n, block_threads[b]);
    memcpy(expect, a.init, a.used);
    for (size_t i = 0; i < n; i++)
      check_reduce(&a, dtype, op, &cases[i], block_threads[b], expect);
    long bad = first_difference(&a, expect);
    TEST_ASSERT(bad < 0,
                "%s %s, blocks of %u threads: byte %ld of the arena, outside every output, changed",
                dtype_names[dtype], op_names[op], block_threads[b], bad);
  }
  free(expect);
  free(cases);
  arena_free(&a);
}

/* ---- copies */

typedef struct {
  size_t dst, src, bytes;
} ccase_t;

static const size_t copy_sizes[] = {0,    1,    2,    3,    7,    15,   16,   17,    31,    33,
                                    63,   64,   65,   127,  129,  255,  257,  1000,  1023,  1024,
                                    1025, 4095, 4097, 8191, 8192, 8193, 8208, 16399, 32769, 70001};

static void test_copy(void) {
  arena_t a = {0};
  size_t nsizes = sizeof(copy_sizes) / sizeof(copy_sizes[0]), max_cases = nsizes * 40;
  ccase_t *cases = calloc(max_cases, sizeof(*cases));
  TEST_ASSERT(cases != NULL, "no memory");
  size_t n = 0;
  for (size_t si = 0; si < nsizes; si++) {
    size_t bytes = copy_sizes[si];
    /* equal misalignments (16-byte words after a head), then pairs at random */
    for (int pair = 0; pair < 32; pair++, n++) {
      uint64_t h = td_mix(seed, 7, n);
      size_t ms = pair < 16 ? (size_t)pair : h % 16, md = pair < 16 ? (size_t)pair : (h >> 8) % 16;
      cases[n].src = arena_take(&a, bytes, ms);
      cases[n].dst = arena_take(&a, bytes, md);
      cases[n].bytes = bytes;
    }
    /* overlapping: dst a little after and a little before src in one buffer */
    for (int way = 0; way < 2 && bytes > 0; way++, n++) {
      size_t shift = 1 + td_mix(seed, 8, n) % 64;
      size_t base = arena_take(&a, bytes + shift, td_mix(seed, 9, n) % 16);
      cases[n].src = way == 0 ? base : base + shift;
      cases[n].dst = way == 0 ? base + shift : base;
      cases[n].bytes = bytes;
    }
  }
  size_t cases_off = arena_take(&a, n * sizeof(tg_case_t), 0);
  arena_alloc(&a);
  tg_case_t *tc = (tg_case_t *)(a.init + cases_off);
  for (size_t i = 0; i < n; i++) {
    tg_case_t t = {.kind = TG_COPY,
                   .count = cases[i].bytes,
                   .dst = arena_addr(&a, cases[i].dst),
                   .src = arena_addr(&a, cases[i].src)};
    memcpy(&tc[i], &t, sizeof(t));
  }
  unsigned char *expect = malloc(a.used);
  TEST_ASSERT(expect != NULL, "no memory");
  memcpy(expect, a.init, a.used);
  for (size_t i = 0; i < n; i++)
    memmove(expect + cases[i].dst, a.init + cases[i].src, cases[i].bytes);
  for (size_t b = 0; b < sizeof(block_threads) / sizeof(block_threads[0]); b++) {
    arena_run(&a, cases_off, n, block_threads[b]);
    long bad = first_difference(&a, expect);
    if (bad >= 0) {
      size_t i = 0; /* the case whose buffer (or the slack after it) holds the byte */
      while (i + 1 < n &&
             (size_t)bad + SLACK >=
                 (cases[i + 1].src < cases[i + 1].dst ? cases[i + 1].src : cases[i + 1].dst))
        i++;
      test_fail(
          __FILE__, __LINE__,
          "sc_dev_copy, blocks of %u threads: byte %ld of the arena is 0x%02x, 0x%02x "
          "expected; near copy %zu: %zu bytes from offset %zu (%zu mod 16) to %zu (%zu mod 16)",
          block_threads[b], bad, a.out[bad], expect[bad], i, cases[i].bytes, cases[i].src,
          cases[i].src % 16, cases[i].dst, cases[i].dst % 16);
    }
  }
  printf("test_gpu_bulk: %zu copies right in blocks of 512 and of 64 threads\n", n);
  free(expect);
  free(cases);
  arena_free(&a);
}

/* ---- main */

static void *load_kernel(const char *path, void **module) {
  FILE *f = fopen(path, "rb");
  TEST_ASSERT(f != NULL, "cannot open %s (the fatbin the build makes from gpu_bulk_kernels.cu)",
              path);
  TEST_ASSERT(fseek(f, 0, SEEK_END) == 0, "seek");
  long size = ftell(f);
  TEST_ASSERT(size > 0 && fseek(f, 0, SEEK_SET) == 0, "%s is empty", path);
  void *image = malloc((size_t)size);
  TEST_ASSERT(image != NULL && fread(image, 1, (size_t)size, f) == (size_t)size, "reading %s",
              path);
  fclose(f);
  void *kernel = NULL;
  TDEV_CU(tdev_cu()->cuModuleLoadData(module, image));
  TDEV_CU(tdev_cu()->cuModuleGetFunction(&kernel, *module, "tg_bulk"));
  free(image);
  return kernel;
}

int main(int argc, char **argv) {
  TEST_ASSERT(argc == 2, "usage: test_gpu_bulk PATH-OF-gpu_bulk_kernels.fatbin");
  tdev_open_device(0);
  void *module = NULL;
  fn = load_kernel(argv[1], &module);
  test_copy();
  for (int dtype = 0; dtype < SYMCOMM_DTYPE_COUNT; dtype++) {
    for (int op = 0; op < SYMCOMM_OP_COUNT; op++)
      test_reduce_op(dtype, op);
    printf("test_gpu_bulk: %s: every op right, bit for bit\n", dtype_names[dtype]);
  }
  TDEV_CU(tdev_cu()->cuModuleUnload(module));
  printf("test_gpu_bulk: all passed on a GPU\n");
  return 0;
}
