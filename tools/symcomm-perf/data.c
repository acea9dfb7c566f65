/* Inputs, expected results and comparison, per dtype.
 *
 * Reductions get small integers, so that every partial result is exact in
 * every dtype and the answer does not depend on the order in which ranks are
 * combined: SUM, MIN, MAX and AVG take values in [-a, a] ([0, 2a] unsigned),
 * a = 4 up to 64 ranks (|any partial sum| <= 256, exact even in bfloat16),
 * 2 up to 128 and 1 beyond; PROD takes 1 or 2, with a sign for signed types,
 * so products are powers of two. The expected value is computed exactly and
 * finished the way symcomm documents it (src/device/reduce.h): integers wrap,
 * AVG divides the sum once (integers with C division, toward zero; float16 and
 * bfloat16 in float, then rounded once to nearest even). Operations that only
 * move data get random bit patterns (NaNs included), which catches a byte out
 * of place better than small integers do. Results compare bit for bit. */
#include <pthread.h>
#include <string.h>

#include "../common/float16.h"
#include "perf.h"

/* Threads that fill and compare the large buffers (perf_data_set_threads):
 * at 1 GiB one thread spends seconds a size making inputs and the expected
 * result, which made a run to 1 GiB take minutes on a GPU host. */
static int data_threads = 1;
/* Below this many elements one thread does it. */
#define DATA_SPLIT_MIN (64u << 10)
#define DATA_MAX_THREADS 64

void perf_data_set_threads(int threads) {
  data_threads = threads < 1 ? 1 : threads > DATA_MAX_THREADS ? DATA_MAX_THREADS : threads;
}

typedef struct data_piece {
  size_t (*fn)(const void *args, size_t lo, size_t hi);
  const void *args;
  size_t lo, hi, result;
} data_piece_t;

static void *data_piece_run(void *p) {
  data_piece_t *piece = p;
  piece->result = piece->fn(piece->args, piece->lo, piece->hi);
  return NULL;
}

/* fn over [0, n) in data_threads pieces at once; the sum of what they return.
 * A thread that cannot start leaves its piece to this one. */
static size_t data_split(size_t n, size_t (*fn)(const void *args, size_t lo, size_t hi),
                         const void *args) {
  int t = n >= DATA_SPLIT_MIN ? data_threads : 1;
  if (t <= 1)
    return fn(args, 0, n);
  data_piece_t pieces[DATA_MAX_THREADS];
  pthread_t threads[DATA_MAX_THREADS];
  int started[DATA_MAX_THREADS] = {0};
  for (int i = 0; i < t; i++)
    pieces[i] = (data_piece_t){fn, args, n * (size_t)i / (size_t)t, n * (size_t)(i + 1) / (size_t)t, 0};
  for (int i = 1; i < t; i++)
    started[i] = pthread_create(&threads[i], NULL, data_piece_run, &pieces[i]) == 0;
  data_piece_run(&pieces[0]);
  size_t sum = pieces[0].result;
  for (int i = 1; i < t; i++) {
    if (started[i])
      pthread_join(threads[i], NULL);
    else
      data_piece_run(&pieces[i]);
    sum += pieces[i].result;
  }
  return sum;
}

static uint64_t mix(uint64_t seed, int rank, size_t i) {
  uint64_t z =
      seed * 0x9e3779b97f4a7c15ull + (uint64_t)(unsigned)rank * 0xd1b54a32d192ed03ull + (uint64_t)i;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int is_unsigned(symcomm_dtype_t dtype) {
  return dtype == SYMCOMM_UINT8 || dtype == SYMCOMM_UINT32 || dtype == SYMCOMM_UINT64;
}

static int is_float(symcomm_dtype_t dtype) {
  return dtype == SYMCOMM_FLOAT16 || dtype == SYMCOMM_BFLOAT16 || dtype == SYMCOMM_FLOAT32 ||
         dtype == SYMCOMM_FLOAT64;
}

size_t perf_dtype_size(symcomm_dtype_t dtype) {
  size_t size = 0;
  symcomm_dtype_size(dtype, &size);
  return size;
}

static long long small_value(symcomm_dtype_t dtype, symcomm_op_t op, uint64_t seed, int rank,
                             size_t i, int nranks) {
  uint64_t h = mix(seed, rank, i);
  if (op == SYMCOMM_PROD) {
    long long v = (h & 7) == 0 ? 2 : 1;
    return !is_unsigned(dtype) && ((h >> 3) & 7) == 0 ? -v : v;
  }
  long long a = nranks <= 64 ? 4 : nranks <= 128 ? 2 : 1;
  long long v = (long long)(h % (uint64_t)(2 * a + 1));
  return is_unsigned(dtype) ? v : v - a;
}

/* v fits every dtype here (inputs, MIN/MAX results); out-of-range integers wrap. */
static void store_int(void *buf, size_t j, symcomm_dtype_t dtype, long long v) {
  switch (dtype) {
  case SYMCOMM_INT8:
    ((int8_t *)buf)[j] = (int8_t)v;
    break;
  case SYMCOMM_UINT8:
    ((uint8_t *)buf)[j] = (uint8_t)v;
    break;
  case SYMCOMM_INT32:
    ((int32_t *)buf)[j] = (int32_t)v;
    break;
  case SYMCOMM_UINT32:
    ((uint32_t *)buf)[j] = (uint32_t)v;
    break;
  case SYMCOMM_INT64:
    ((int64_t *)buf)[j] = (int64_t)v;
    break;
  case SYMCOMM_UINT64:
    ((uint64_t *)buf)[j] = (uint64_t)v;
    break;
  case SYMCOMM_FLOAT16:
    ((uint16_t *)buf)[j] = float16_from_float((float)v);
    break;
  case SYMCOMM_BFLOAT16:
    ((uint16_t *)buf)[j] = bfloat16_from_float((float)v);
    break;
  case SYMCOMM_FLOAT32:
    ((float *)buf)[j] = (float)v;
    break;
  case SYMCOMM_FLOAT64:
    ((double *)buf)[j] = (double)v;
    break;
  default:
    break;
  }
}

typedef struct input_args {
  char *buf;
  symcomm_dtype_t dtype;
  int op, rank, nranks;
  uint64_t seed;
  size_t first;
} input_args_t;

/* Elements lo .. hi-1 of perf_data_input's buffer. */
static size_t input_range(const void *args, size_t lo, size_t hi) {
  const input_args_t *a = args;
  size_t elem = perf_dtype_size(a->dtype);
  void *buf = a->buf + lo * elem;
  size_t first = a->first + lo, n = hi - lo;
  if (a->op < 0) {
    for (size_t j = 0; j < n; j++) {
      uint64_t h = mix(a->seed, a->rank, first + j);
      memcpy((char *)buf + j * elem, &h, elem);
    }
    return 0;
  }
  for (size_t j = 0; j < n; j++)
    store_int(buf, j, a->dtype,
              small_value(a->dtype, (symcomm_op_t)a->op, a->seed, a->rank, first + j, a->nranks));
  return 0;
}

void perf_data_input(void *buf, symcomm_dtype_t dtype, int op, uint64_t seed, int rank,
                     size_t first, size_t n, int nranks) {
  input_args_t a = {buf, dtype, op, rank, nranks, seed, first};
  data_split(n, input_range, &a);
}

/* SUM, PROD or AVG of integers: the wrapped sum or product, then AVG's C
 * division in the type symcomm divides in (int for 8-bit types). */
static void finish_int(void *buf, size_t j, symcomm_dtype_t dtype, symcomm_op_t op, uint64_t acc,
                       int nranks) {
  int avg = op == SYMCOMM_AVG;
  switch (dtype) {
  case SYMCOMM_INT8: {
    int8_t t = (int8_t)acc;
    ((int8_t *)buf)[j] = avg ? (int8_t)((int)t / nranks) : t;
    break;
  }
  case SYMCOMM_UINT8: {
    uint8_t t = (uint8_t)acc;
    ((uint8_t *)buf)[j] = avg ? (uint8_t)((int)t / nranks) : t;
    break;
  }
  case SYMCOMM_INT32: {
    int32_t t = (int32_t)(uint32_t)acc;
    ((int32_t *)buf)[j] = avg ? t / (int32_t)nranks : t;
    break;
  }
  case SYMCOMM_UINT32: {
    uint32_t t = (uint32_t)acc;
    ((uint32_t *)buf)[j] = avg ? t / (uint32_t)nranks : t;
    break;
  }
  case SYMCOMM_INT64: {
    int64_t t = (int64_t)acc;
    ((int64_t *)buf)[j] = avg ? t / (int64_t)nranks : t;
    break;
  }
  case SYMCOMM_UINT64:
    ((uint64_t *)buf)[j] = avg ? acc / (uint64_t)nranks : acc;
    break;
  default:
    break;
  }
}

/* Floats: acc is exact (small integers, powers of two); AVG divides in the
 * type symcomm accumulates in, and 16-bit types round once at the end. */
static void finish_float(void *buf, size_t j, symcomm_dtype_t dtype, symcomm_op_t op, double acc,
                         int nranks) {
  int avg = op == SYMCOMM_AVG;
  if (dtype == SYMCOMM_FLOAT64) {
    ((double *)buf)[j] = avg ? acc / (double)nranks : acc;
    return;
  }
  float f = avg ? (float)acc / (float)nranks : (float)acc;
  if (dtype == SYMCOMM_FLOAT32)
    ((float *)buf)[j] = f;
  else if (dtype == SYMCOMM_FLOAT16)
    ((uint16_t *)buf)[j] = float16_from_float(f);
  else
    ((uint16_t *)buf)[j] = bfloat16_from_float(f);
}

typedef struct reduced_args {
  char *buf;
  symcomm_dtype_t dtype;
  symcomm_op_t op;
  uint64_t seed;
  size_t first;
  int nranks;
} reduced_args_t;

/* Elements lo .. hi-1 of perf_data_reduced's buffer. */
static size_t reduced_range(const void *args, size_t lo, size_t hi) {
  const reduced_args_t *a = args;
  void *buf = a->buf + lo * perf_dtype_size(a->dtype);
  symcomm_dtype_t dtype = a->dtype;
  symcomm_op_t op = a->op;
  uint64_t seed = a->seed;
  size_t first = a->first + lo, n = hi - lo;
  int nranks = a->nranks;
  int fl = is_float(dtype);
  for (size_t j = 0; j < n; j++) {
    size_t i = first + j;
    long long v0 = small_value(dtype, op, seed, 0, i, nranks);
    if (op == SYMCOMM_MIN || op == SYMCOMM_MAX) {
      long long m = v0;
      for (int r = 1; r < nranks; r++) {
        long long v = small_value(dtype, op, seed, r, i, nranks);
        m = op == SYMCOMM_MIN ? (v < m ? v : m) : (v > m ? v : m);
      }
      store_int(buf, j, dtype, m);
    } else if (fl) {
      double acc = (double)v0;
      for (int r = 1; r < nranks; r++) {
        double v = (double)small_value(dtype, op, seed, r, i, nranks);
        acc = op == SYMCOMM_PROD ? acc * v : acc + v;
      }
      finish_float(buf, j, dtype, op, acc, nranks);
    } else {
      uint64_t acc = (uint64_t)v0;
      for (int r = 1; r < nranks; r++) {
        uint64_t v = (uint64_t)small_value(dtype, op, seed, r, i, nranks);
        acc = op == SYMCOMM_PROD ? acc * v : acc + v;
      }
      finish_int(buf, j, dtype, op, acc, nranks);
    }
  }
  return 0;
}

void perf_data_reduced(void *buf, symcomm_dtype_t dtype, symcomm_op_t op, uint64_t seed,
                       size_t first, size_t n, int nranks) {
  reduced_args_t a = {buf, dtype, op, seed, first, nranks};
  data_split(n, reduced_range, &a);
}

typedef struct compare_args {
  const char *got, *want;
  size_t elem;
} compare_args_t;

static size_t compare_range(const void *args, size_t lo, size_t hi) {
  const compare_args_t *a = args;
  const char *got = a->got + lo * a->elem, *want = a->want + lo * a->elem;
  size_t n = hi - lo;
  if (memcmp(got, want, a->elem * n) == 0)
    return 0;
  size_t wrong = 0;
  for (size_t j = 0; j < n; j++)
    wrong += memcmp(got + j * a->elem, want + j * a->elem, a->elem) != 0;
  return wrong;
}

size_t perf_data_compare(const void *got, const void *want, size_t elem, size_t n) {
  compare_args_t a = {got, want, elem};
  return data_split(n, compare_range, &a);
}

void perf_data_poison(void *buf, size_t bytes) { memset(buf, 0xa5, bytes); }

int perf_dtype_from_name(const char *name) {
  static const struct {
    const char *alias;
    symcomm_dtype_t dtype;
  } aliases[] = {
      {"char", SYMCOMM_INT8},    {"int", SYMCOMM_INT32},      {"half", SYMCOMM_FLOAT16},
      {"fp16", SYMCOMM_FLOAT16}, {"bf16", SYMCOMM_BFLOAT16},  {"float", SYMCOMM_FLOAT32},
      {"fp32", SYMCOMM_FLOAT32}, {"double", SYMCOMM_FLOAT64}, {"fp64", SYMCOMM_FLOAT64},
  };
  for (int d = 0; d < SYMCOMM_DTYPE_COUNT; d++)
    if (strcmp(name, symcomm_dtype_string((symcomm_dtype_t)d)) == 0)
      return d;
  for (size_t k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
    if (strcmp(name, aliases[k].alias) == 0)
      return (int)aliases[k].dtype;
  return -1;
}

int perf_redop_from_name(const char *name) {
  for (int op = 0; op < SYMCOMM_OP_COUNT; op++)
    if (strcmp(name, symcomm_op_string((symcomm_op_t)op)) == 0)
      return op;
  return -1;
}
