/* One rank's init under the SYMCOMM_BACKEND and SYMCOMM_CUDA_BACKEND_PATH
 * the caller set: tests/scripts/test_backend_select.sh runs it.
 *   test_backend_select ok            init succeeds (and the comm works)
 *   test_backend_select fail NEEDLE   init fails with UNSUPPORTED, its
 *                                     sentence containing NEEDLE */
#include <string.h>

#include "test_util.h"

int main(int argc, char **argv) {
  TEST_ASSERT(argc >= 2 && (strcmp(argv[1], "ok") == 0 || (strcmp(argv[1], "fail") == 0 && argc == 3)),
              "usage: test_backend_select ok | fail NEEDLE");
  symcomm_unique_id_t id;
  TEST_OK(symcomm_get_unique_id(&id));
  symcomm_comm_t comm = NULL;
  symcomm_result_t r = symcomm_comm_init(&comm, 1, &id, 0, NULL);
  if (strcmp(argv[1], "ok") == 0) {
    TEST_ASSERT(r == SYMCOMM_OK, "init: %s (%s)", symcomm_result_string(r), symcomm_last_error(NULL));
    symcomm_stream_t s = NULL;
    TEST_OK(symcomm_stream_create(comm, &s));
    TEST_OK(symcomm_stream_synchronize(s));
    TEST_OK(symcomm_stream_destroy(s));
    TEST_OK(symcomm_comm_destroy(comm));
    printf("test_backend_select: init succeeded\n");
    return 0;
  }
  TEST_ASSERT(r == SYMCOMM_ERR_UNSUPPORTED && comm == NULL, "init: %s (%s)", symcomm_result_string(r),
              symcomm_last_error(NULL));
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), argv[2]), "sentence '%s' lacks '%s'",
              symcomm_last_error(NULL), argv[2]);
  printf("test_backend_select: init refused: %s\n", symcomm_last_error(NULL));
  return 0;
}
