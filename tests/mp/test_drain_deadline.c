/* Waits for queued work at window free and destroy end at the communicator's
 * timeout (under symcomm-run, any backend; SYMCOMM_TIMEOUT long, 30 s):
 * a communicator "short" (config timeout 1 s) queues a signal on stream S,
 * then communicator "long" (SYMCOMM_TIMEOUT) holds S with a wait for a slot
 * nobody signals yet. symcomm_window_free and symcomm_comm_destroy of
 * "short" each stop waiting after about 1 s, with a WARN naming the stream
 * (the suite checks the log), not after long's 30 s; what that work may use
 * is kept, so when the slot is then signalled S finishes, "long" still
 * gives right results, and everything ends cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_device.h"
#include "test_util.h"

#define COUNT 1024
#define SHORT_MS 1000

static double timed_ms(double t0) { return (test_now() - t0) * 1000.0; }

int main(void) {
  symcomm_comm_t world, brief;
  int rank, size;
  tdev_init_job(&world, &rank, &size, false);
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  config.timeout_ms = SHORT_MS;
  config.name = "short";
  TEST_OK(symcomm_init_from_env(&brief, &config));

  symcomm_window_t wl, ws;
  TEST_OK(symcomm_window_alloc(world, 4096, &wl));
  TEST_OK(symcomm_window_alloc(brief, 4096, &ws));
  symcomm_stream_t s, s2;
  TEST_OK(symcomm_stream_create(world, &s));
  TEST_OK(symcomm_stream_create(world, &s2));
  TEST_OK(symcomm_signal(ws, rank, 0, 1, SYMCOMM_SIGNAL_SET, s));        /* short's work on S */
  TEST_OK(symcomm_wait_signal(wl, 0, SYMCOMM_CMP_GE, 1, s));             /* long's, holding S */

  double t0 = test_now();
  TEST_OK(symcomm_window_free(ws));
  double free_ms = timed_ms(t0);
  t0 = test_now();
  TEST_OK(symcomm_comm_destroy(brief));
  double destroy_ms = timed_ms(t0);
  printf("rank %d: window free waited %.0f ms, destroy %.0f ms (timeout %d ms)\n", rank, free_ms,
         destroy_ms, SHORT_MS);
  TEST_ASSERT(free_ms >= SHORT_MS * 0.9 && free_ms < SHORT_MS + 4000, "window free took %.0f ms",
              free_ms);
  TEST_ASSERT(destroy_ms >= SHORT_MS * 0.9 && destroy_ms < SHORT_MS + 4000, "destroy took %.0f ms",
              destroy_ms);

  /* Release S; the long communicator was never disturbed. */
  TEST_OK(symcomm_signal(wl, rank, 0, 1, SYMCOMM_SIGNAL_SET, s2));
  TEST_OK(symcomm_stream_synchronize(s2));
  TEST_OK(symcomm_stream_synchronize(s));
  int32_t *h = malloc(COUNT * sizeof(int32_t)), *buf = tdev_alloc(COUNT * sizeof(int32_t));
  TEST_ASSERT(h != NULL);
  for (int i = 0; i < COUNT; i++)
    h[i] = (rank + 1) * 100 + i;
  tdev_upload(buf, h, COUNT * sizeof(int32_t));
  TEST_OK(symcomm_allreduce(buf, buf, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, world, s));
  TEST_OK(symcomm_stream_synchronize(s));
  tdev_download(h, buf, COUNT * sizeof(int32_t));
  for (int i = 0; i < COUNT; i++) {
    int32_t want = 100 * size * (size + 1) / 2 + size * i;
    TEST_ASSERT(h[i] == want, "element %d is %d, not %d", i, h[i], want);
  }
  symcomm_result_t err = SYMCOMM_ERR_INTERNAL;
  TEST_OK(symcomm_comm_get_async_error(world, &err));
  TEST_ASSERT(err == SYMCOMM_OK, "%s", symcomm_last_error(world));
  free(h);
  tdev_free(buf);
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_stream_destroy(s));
  TEST_OK(symcomm_window_free(wl));
  TEST_OK(symcomm_comm_destroy(world));
  if (rank == 0)
    printf("test_drain_deadline: all passed\n");
  return 0;
}
