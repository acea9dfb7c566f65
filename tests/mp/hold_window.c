/* A rank that takes memory (a window, a send/recv ring in use) and then
 * holds it: for tests that kill ranks. Prints "ready <rank> <pid>". */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

int main(void) {
  symcomm_comm_t comm;
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  int rank, size;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 4 << 20, &win));
  memset(symcomm_window_local(win), 1, 4 << 20);
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  static char buf[1 << 20];
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(buf, sizeof(buf), SYMCOMM_UINT8, (rank + 1) % size, comm, stream));
  TEST_OK(symcomm_recv(buf, sizeof(buf), SYMCOMM_UINT8, (rank + size - 1) % size, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  printf("ready %d %d\n", rank, (int)getpid());
  fflush(stdout);
  sleep(60);
  return 0;
}
