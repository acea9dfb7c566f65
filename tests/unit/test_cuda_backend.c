/* libsymcomm_cuda.so through its one entry, as backend_select.c loads it:
 *   test_cuda_backend PATH-OF-libsymcomm_cuda.so
 * Everywhere: the entry refuses services of another size; the ops table has
 * this build's size, its name, and every entry. Without a usable GPU (CI):
 * available() says why in one of the sentences the issue names, and
 * device_open fails with UNSUPPORTED and that reason. With a GPU (make
 * test-gpu): device 0's bus id, pointer checks (host memory, past an
 * allocation's end, another device's memory), zeroed host and device memory,
 * an exported allocation imported again, and kernels on a made and on a
 * wrapped stream: SIGNAL into host-mapped memory, stream copies, and a WAIT
 * that times out, whose failure is the stream's sentence. A missing PATH
 * (a build without nvcc, or a sanitizer build) is a skip, said so. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "test_util.h"
#include "util/clock.h"
#include "util/error.h"

static const sc_backend_ops_t *B;

static const sc_backend_services_t services = {
    .size = sizeof(sc_backend_services_t),
    .abi = SC_BACKEND_ABI,
    .raise = sc_error_raise,
    .pass = sc_error_pass,
    .log = sc_log,
    .log_enabled = sc_log_enabled,
};

static void test_table(void) {
  TEST_ASSERT(B->size == sizeof(sc_backend_ops_t), "ops table of %zu bytes, %zu expected", B->size,
              sizeof(sc_backend_ops_t));
  TEST_ASSERT(strcmp(B->name, "cuda") == 0, "name '%s'", B->name);
  void (*const *fn)(void) =
      (void (*const *)(void))((const char *)B + offsetof(sc_backend_ops_t, available));
  size_t n = (sizeof(sc_backend_ops_t) - offsetof(sc_backend_ops_t, available)) / sizeof(*fn);
  for (size_t i = 0; i < n; i++)
    TEST_ASSERT(fn[i] != NULL, "entry %zu of the CUDA ops table is NULL", i);
}

static int known_reason(const char *why) {
  return strncmp(why, "no libcuda.so.1", 15) == 0 || strncmp(why, "no CUDA device", 14) == 0 ||
         strncmp(why, "driver older than", 17) == 0 || strncmp(why, "the driver lacks", 16) == 0;
}

static void test_no_gpu(const char *why) {
  TEST_ASSERT(known_reason(why), "unexpected reason: '%s'", why);
  sc_device_t *dev = NULL;
  TEST_EXPECT_RESULT(B->device_open(0, &dev), SYMCOMM_ERR_UNSUPPORTED);
  TEST_ASSERT(dev == NULL && test_contains(sc_error_last(), "the CUDA backend cannot run here: ") &&
                  test_contains(sc_error_last(), why),
              "'%s'", sc_error_last());
  printf("test_cuda_backend: no usable GPU here (%s): device_open refused it cleanly\n", why);
}

/* ---- with a GPU */

typedef struct pad {
  sc_doorbell_t bell;
  uint64_t slot[8];
} pad_t;

static void test_pointers(sc_device_t *dev) {
  char stack[64];
  void *heap = malloc(4096);
  TEST_EXPECT_RESULT(B->ptr_check(dev, heap, 4096, "sendbuf"), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "sendbuf") && test_contains(sc_error_last(), "host memory"),
              "'%s'", sc_error_last());
  TEST_EXPECT_RESULT(B->ptr_check(dev, stack, sizeof(stack), "recvbuf"), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_OK(B->ptr_check(dev, heap, 0, "nothing")); /* no bytes: nothing to check */
  free(heap);
  void *d = NULL;
  TEST_OK(B->dev_alloc(dev, 1 << 20, &d));
  TEST_OK(B->ptr_check(dev, d, 1 << 20, "buf"));
  TEST_OK(B->ptr_check(dev, (char *)d + 4096, 4096, "buf"));
  TEST_EXPECT_RESULT(B->ptr_check(dev, (char *)d + 4096, 1 << 20, "buf"), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "past the end"), "'%s'", sc_error_last());
  B->dev_free(dev, d);
  /* Another device's memory, where there is one. */
  sc_device_t *other = NULL;
  if (B->device_open(1, &other) == SYMCOMM_OK) {
    TEST_OK(B->dev_alloc(other, 4096, &d));
    TEST_EXPECT_RESULT(B->ptr_check(dev, d, 4096, "buf"), SYMCOMM_ERR_INVALID_ARGUMENT);
    TEST_ASSERT(test_contains(sc_error_last(), "memory of CUDA device 1"), "'%s'", sc_error_last());
    B->dev_free(other, d);
    B->device_close(other);
    printf("  pointer checks: host memory, past the end, another device's memory refused\n");
  } else {
    printf("  pointer checks: host memory, past the end refused (one device: no cross-device check)\n");
  }
}

static void test_memory(sc_device_t *dev) {
  size_t g = B->granularity(dev);
  TEST_ASSERT(g >= 4096 && (g & (g - 1)) == 0, "granularity %zu", g);
  unsigned char *h = NULL;
  TEST_OK(B->host_alloc(dev, 10000, (void **)&h));
  for (int i = 0; i < 10000; i++)
    TEST_ASSERT(h[i] == 0, "host memory byte %d is %d", i, h[i]);
  TEST_OK(B->ptr_check(dev, h, 10000, "pinned host memory")); /* the GPU maps it */
  B->host_free(dev, h);
  sc_devmem_t *m = NULL, *again = NULL;
  TEST_OK(B->mem_alloc(dev, 3 * g + 1, &m));
  TEST_ASSERT(B->mem_size(m) == 4 * g, "%zu bytes for %zu asked", B->mem_size(m), 3 * g + 1);
  TEST_OK(B->ptr_check(dev, B->mem_ptr(m), B->mem_size(m), "window memory"));
  int fd = -1;
  TEST_OK(B->mem_export(m, &fd));
  TEST_ASSERT(fd >= 0);
  TEST_OK(B->mem_import(dev, fd, 3 * g + 1, &again));
  close(fd);
  TEST_ASSERT(B->mem_ptr(again) != B->mem_ptr(m), "the import has an address of its own");
  B->mem_free(again);
  B->mem_free(m);
  printf("  memory: granularity %zu, zeroed pinned host memory, export + import of %zu bytes\n", g,
         4 * g);
}

static void run_kernels(sc_device_t *dev, sc_stream_t *s, const char *which) {
  pad_t *pad = NULL;
  int32_t *data = NULL;
  TEST_OK(B->host_alloc(dev, sizeof(*pad), (void **)&pad));
  TEST_OK(B->host_alloc(dev, 3 * 1000 * sizeof(int32_t), (void **)&data));
  sc_signal_args_t sig = {.slot = &pad->slot[1], .value = 0x1234567890ull, .op = SC_SIGNAL_OP_SET,
                          .bell = &pad->bell};
  TEST_OK(B->launch(s, SC_PROGRAM_SIGNAL, &sig, sizeof(sig), SC_LAUNCH_ONE(NULL)));
  sig.op = SC_SIGNAL_OP_ADD;
  sig.value = 5;
  TEST_OK(B->launch(s, SC_PROGRAM_SIGNAL, &sig, sizeof(sig), SC_LAUNCH_ONE(NULL)));
  int32_t *a = data, *b = data + 1000, *out = data + 2000;
  for (int i = 0; i < 1000; i++) {
    a[i] = i * 3 - 700;
    b[i] = 1000 - i;
  }
  a[999] = -5; /* its top byte differs from b[999]'s: the copy below stops short of it */
  /* The stream's copy (the copy engine), then one of what it copied. */
  TEST_OK(B->copy(s, b, a, 999 * sizeof(int32_t) + 3));
  TEST_OK(B->copy(s, out, b, 1000 * sizeof(int32_t)));
  TEST_OK(B->stream_synchronize(s, sc_now_ms() + 20000));
  TEST_ASSERT(pad->slot[1] == 0x1234567890ull + 5, "%s: slot %llx", which,
              (unsigned long long)pad->slot[1]);
  for (int i = 0; i < 1000; i++)
    TEST_ASSERT(out[i] == b[i], "%s: second copy, element %d = %d", which, i, out[i]);
  for (int i = 0; i < 999; i++)
    TEST_ASSERT(b[i] == a[i], "%s: copy element %d", which, i);
  TEST_ASSERT(b[999] == (int32_t)0x00fffffb, "%s: b[999] = %#x: 3 bytes of it copied, not 4",
              which, (unsigned)b[999]);
  /* A wait that gives up: the stream's failure, named. */
  sc_dev_status_t *status = NULL;
  TEST_OK(B->host_alloc(dev, sizeof(*status), (void **)&status));
  status->rank = -1;
  sc_wait_args_t w = {.slot = &pad->slot[2], .value = 1, .cmp = SC_CMP_OP_GE, .bell = &pad->bell,
                      .guard = {.status = status, .timeout_ms = 300, .call = SC_CALL_WAIT_SIGNAL}};
  double t0 = test_now();
  TEST_OK(B->launch(s, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(status)));
  TEST_EXPECT_RESULT(B->stream_synchronize(s, sc_now_ms() + 20000), SYMCOMM_ERR_TIMEOUT);
  double dt = test_now() - t0;
  TEST_ASSERT(dt > 0.25 && dt < 5, "%s: the wait gave up after %.2f s (timeout 0.3 s)", which, dt);
  TEST_ASSERT(test_contains(B->stream_error(s), "for a window's signal slot"), "%s: '%s'", which,
              B->stream_error(s));
  TEST_ASSERT(status->failed == 2 && status->error.kind == SC_DEV_TIMEOUT,
              "%s: status block failed %u kind %d", which, status->failed, status->error.kind);
  /* Sticky: later work is refused at once. */
  TEST_EXPECT_RESULT(B->launch(s, SC_PROGRAM_SIGNAL, &sig, sizeof(sig), SC_LAUNCH_ONE(NULL)),
                     SYMCOMM_ERR_TIMEOUT);
  printf("  kernels on %s: SIGNAL and copies right; WAIT gave up after %.2f s: '%s'\n", which,
         dt, B->stream_error(s));
  B->host_free(dev, status);
  B->host_free(dev, data);
  B->host_free(dev, pad);
}

static void test_gpu(void) {
  sc_device_t *dev = NULL;
  TEST_OK(B->device_open(0, &dev));
  char busid[32];
  TEST_OK(B->device_busid(dev, busid, sizeof(busid)));
  unsigned dom, bus, d, f;
  char tail;
  TEST_ASSERT(sscanf(busid, "%x:%x:%x.%x%c", &dom, &bus, &d, &f, &tail) == 4, "bus id '%s'", busid);
  for (const char *c = busid; *c; c++)
    TEST_ASSERT(*c < 'A' || *c > 'F', "bus id '%s' is not lower case", busid);
  printf("  device 0: bus id %s\n", busid);
  TEST_EXPECT_RESULT(B->device_open(1000, &(sc_device_t *){NULL}), SYMCOMM_ERR_INVALID_USAGE);
  test_pointers(dev);
  test_memory(dev);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(dev, &s));
  run_kernels(dev, s, "a made stream");
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  TEST_OK(B->stream_wrap(dev, NULL, &s)); /* the default stream of the device */
  run_kernels(dev, s, "the wrapped default stream");
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  /* Events: recorded, waited for, queried, bounded. */
  sc_event_t *ev = NULL;
  TEST_OK(B->stream_create(dev, &s));
  TEST_OK(B->event_create(dev, &ev));
  TEST_OK(B->event_record(ev, s));
  TEST_OK(B->stream_wait_event(s, ev));
  TEST_OK(B->event_synchronize(ev, sc_now_ms() + 10000));
  TEST_OK(B->event_query(ev));
  B->event_destroy(ev);
  /* The stream outlives the device's communicator hold. */
  B->device_close(dev);
  TEST_OK(B->stream_synchronize(s, sc_now_ms() + 10000));
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  printf("test_cuda_backend: all passed on a GPU\n");
}

int main(int argc, char **argv) {
  TEST_ASSERT(argc == 2, "usage: test_cuda_backend PATH-OF-libsymcomm_cuda.so");
  if (access(argv[1], F_OK) != 0) {
    printf("test_cuda_backend: SKIP: %s was not built (no nvcc, or a sanitizer build)\n", argv[1]);
    return 0;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  TEST_ASSERT(lib != NULL, "dlopen %s: %s", argv[1], dlerror());
  sc_backend_entry_t entry = (sc_backend_entry_t)dlsym(lib, SC_BACKEND_CUDA_ENTRY);
  TEST_ASSERT(entry != NULL, "no %s in %s", SC_BACKEND_CUDA_ENTRY, argv[1]);
  sc_backend_services_t other = services;
  other.size -= sizeof(void *);
  TEST_ASSERT(entry(&other) == NULL, "services of another size were accepted");
  other = services;
  other.abi ^= 1; /* a library whose shared layouts differ */
  TEST_ASSERT(entry(&other) == NULL, "services of another build's layouts were accepted");
  TEST_ASSERT(entry(NULL) == NULL);
  B = entry(&services);
  TEST_ASSERT(B != NULL);
  test_table();
  char why[512] = "";
  if (B->available(why, sizeof(why)) != SYMCOMM_OK)
    test_no_gpu(why);
  else
    test_gpu();
  return 0;
}
