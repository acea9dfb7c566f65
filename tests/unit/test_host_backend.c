/* The simulated-GPU backend's device and memory: the ops table, exportable
 * memory (memfd) exported, imported here and in a forked child, sizes rounded
 * to the granularity, a too-small import refused; and SYMCOMM_BACKEND. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "test_util.h"
#include "util/error.h"

static const sc_backend_ops_t *B = &sc_backend_host;

static void test_table(void) {
  TEST_ASSERT(B->size == sizeof(sc_backend_ops_t));
  TEST_ASSERT(strcmp(B->name, "host") == 0);
  /* Every entry is filled. */
  void (*const *fn)(void) =
      (void (*const *)(void))((const char *)B + offsetof(sc_backend_ops_t, device_open));
  size_t n = (sizeof(sc_backend_ops_t) - offsetof(sc_backend_ops_t, device_open)) / sizeof(*fn);
  for (size_t i = 0; i < n; i++)
    TEST_ASSERT(fn[i] != NULL, "entry %zu of the host ops table is NULL", i);
}

/* The memfd behind an fd, as /proc shows it: "/memfd:symcomm-<pid>-<n> (deleted)". */
static void expect_memfd_name(int fd) {
  char path[64], target[256];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  TEST_ASSERT(n > 0);
  target[n] = '\0';
  char want[64];
  snprintf(want, sizeof(want), "/memfd:symcomm-%d-", (int)getpid());
  TEST_ASSERT(strncmp(target, want, strlen(want)) == 0, "fd %d is %s", fd, target);
  TEST_ASSERT((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "exported fds are close-on-exec");
}

static void test_memory(sc_device_t *dev) {
  size_t gran = B->granularity(dev);
  TEST_ASSERT(gran >= 4096 && (gran & (gran - 1)) == 0, "granularity %zu", gran);

  sc_devmem_t *mem = NULL;
  TEST_OK(B->mem_alloc(dev, 100, &mem));
  TEST_ASSERT(B->mem_size(mem) == gran, "100 bytes round up to %zu, got %zu", gran,
              B->mem_size(mem));
  sc_devmem_t *big = NULL;
  TEST_OK(B->mem_alloc(dev, 3 * gran + 1, &big));
  TEST_ASSERT(B->mem_size(big) == 4 * gran);
  sc_devmem_t *none = NULL;
  TEST_EXPECT_RESULT(B->mem_alloc(dev, 0, &none), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(none == NULL);

  /* Fresh memory reads as zeros. */
  uint64_t *p = B->mem_ptr(mem);
  for (size_t i = 0; i < gran / sizeof(uint64_t); i++)
    TEST_ASSERT(p[i] == 0);

  /* Export, import: one memory seen through two mappings. */
  int fd = -1;
  TEST_OK(B->mem_export(mem, &fd));
  expect_memfd_name(fd);
  sc_devmem_t *peer = NULL;
  TEST_OK(B->mem_import(dev, fd, 100, &peer));
  uint64_t *q = B->mem_ptr(peer);
  TEST_ASSERT(q != p && B->mem_size(peer) == gran);
  p[3] = 0x1234;
  TEST_ASSERT(q[3] == 0x1234);
  q[7] = 77;
  TEST_ASSERT(p[7] == 77);
  /* The importer's mapping outlives the fd it was made from. */
  close(fd);
  p[8] = 88;
  TEST_ASSERT(q[8] == 88);
  TEST_EXPECT_RESULT(B->mem_export(peer, &fd), SYMCOMM_ERR_INVALID_USAGE);

  /* Too small, not a file, no fd: errors with a sentence. */
  TEST_OK(B->mem_export(mem, &fd));
  sc_devmem_t *bad = NULL;
  TEST_EXPECT_RESULT(B->mem_import(dev, fd, gran + 1, &bad), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "holds only"), "%s", sc_error_last());
  TEST_ASSERT(bad == NULL, "no output on failure");
  TEST_EXPECT_RESULT(B->mem_import(dev, -1, 100, &bad), SYMCOMM_ERR_INVALID_ARGUMENT);
  int pipefd[2];
  TEST_ASSERT(pipe(pipefd) == 0);
  TEST_EXPECT_RESULT(B->mem_import(dev, pipefd[0], 100, &bad), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "not exported device memory"), "%s", sc_error_last());
  close(pipefd[0]);
  close(pipefd[1]);

  /* A forked child imports the fd it inherited and writes; the parent sees it. */
  pid_t child = fork();
  TEST_ASSERT(child >= 0);
  if (child == 0) {
    sc_device_t *cdev = NULL;
    TEST_OK(B->device_open(1, &cdev));
    sc_devmem_t *cm = NULL;
    TEST_OK(B->mem_import(cdev, fd, gran, &cm));
    uint64_t *c = B->mem_ptr(cm);
    TEST_ASSERT(c[3] == 0x1234, "the child sees the parent's writes");
    c[10] = (uint64_t)getpid();
    B->mem_free(cm);
    B->device_close(cdev);
    _exit(0);
  }
  int status = 0;
  TEST_ASSERT(waitpid(child, &status, 0) == child);
  TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  TEST_ASSERT(p[10] == (uint64_t)child, "the parent sees the child's write");
  close(fd);

  /* Sparse: a large allocation costs nothing until touched. */
  sc_devmem_t *huge = NULL;
  TEST_OK(B->mem_alloc(dev, (size_t)8 << 30, &huge));
  TEST_ASSERT(B->mem_size(huge) == (size_t)8 << 30);
  ((char *)B->mem_ptr(huge))[((size_t)8 << 30) - 1] = 1;
  B->mem_free(huge);

  B->mem_free(peer);
  B->mem_free(mem);
  B->mem_free(big);
}

static void test_host_memory(sc_device_t *dev) {
  void *h = NULL;
  TEST_OK(B->host_alloc(dev, 1000, &h));
  TEST_ASSERT(((uintptr_t)h & 63) == 0, "host memory is cache-line aligned");
  for (int i = 0; i < 1000; i++)
    TEST_ASSERT(((unsigned char *)h)[i] == 0);
  B->host_free(dev, h);
}

static void expect_backend(const char *value, symcomm_result_t expected, const char *needle) {
  if (value != NULL)
    setenv("SYMCOMM_BACKEND", value, 1);
  else
    unsetenv("SYMCOMM_BACKEND");
  const sc_backend_ops_t *ops = NULL;
  TEST_EXPECT_RESULT(sc_backend_select(NULL, &ops), expected);
  if (expected == SYMCOMM_OK)
    TEST_ASSERT(ops == &sc_backend_host, "%s", value ? value : "(unset)");
  else
    TEST_ASSERT(ops == NULL && test_contains(sc_error_last(), needle), "%s: %s", value,
                sc_error_last());
}

int main(void) {
  test_table();
  sc_device_t *dev = NULL;
  TEST_EXPECT_RESULT(B->device_open(-1, &dev), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_OK(B->device_open(5, &dev)); /* any index: every simulated device is this host's memory */
  test_memory(dev);
  test_host_memory(dev);
  B->device_close(dev);

  expect_backend(NULL, SYMCOMM_OK, NULL);
  expect_backend("", SYMCOMM_OK, NULL);
  expect_backend("auto", SYMCOMM_OK, NULL);
  expect_backend("host", SYMCOMM_OK, NULL);
  expect_backend("HOST", SYMCOMM_OK, NULL);
  /* This program (libsymcomm.a) has no libsymcomm_cuda.so beside it. */
  expect_backend("cuda", SYMCOMM_ERR_UNSUPPORTED,
                 "SYMCOMM_BACKEND=cuda: the CUDA backend cannot run here: libsymcomm_cuda.so missing");

  expect_backend("gpu", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_BACKEND='gpu'");

  /* A communicator's config.backend wins over the environment, and its
   * sentences name it. */
  setenv("SYMCOMM_BACKEND", "cuda", 1);
  const sc_backend_ops_t *ops = NULL;
  TEST_OK(sc_backend_select("host", &ops));
  TEST_ASSERT(ops == &sc_backend_host, "config.backend host over SYMCOMM_BACKEND=cuda");
  setenv("SYMCOMM_BACKEND", "host", 1);
  ops = NULL;
  TEST_EXPECT_RESULT(sc_backend_select("cuda", &ops), SYMCOMM_ERR_UNSUPPORTED);
  TEST_ASSERT(ops == NULL && test_contains(sc_error_last(), "config.backend=cuda: the CUDA backend"),
              "%s", sc_error_last());
  unsetenv("SYMCOMM_BACKEND");
  printf("test_host_backend: all passed\n");
  return 0;
}
