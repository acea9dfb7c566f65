/* The parameter table and its typed readers. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/error.h"
#include "util/param.h"

int main(void) {
  /* Every name is unique and documented. */
  for (int i = 0; i < SC_PARAM_COUNT; i++) {
    const sc_param_def_t *a = sc_param_def((sc_param_id_t)i);
    TEST_ASSERT(a->name != NULL && a->doc != NULL && a->doc[0] != '\0');
    for (int j = 0; j < i; j++)
      TEST_ASSERT(strcmp(a->name, sc_param_def((sc_param_id_t)j)->name) != 0, "%s twice", a->name);
  }
  TEST_ASSERT(sc_param_def(SC_PARAM_COUNT) == NULL);
  TEST_ASSERT(symcomm_param_count() == SC_PARAM_COUNT);

  long long v = 42;
  bool set = true;
  unsetenv("SYMCOMM_DEVICE");
  TEST_OK(sc_param_int(SC_PARAM_DEVICE, &v, &set));
  TEST_ASSERT(v == -1 && !set, "default -1, got %lld", v);
  setenv("SYMCOMM_DEVICE", "0x3", 1);
  TEST_OK(sc_param_int(SC_PARAM_DEVICE, &v, &set));
  TEST_ASSERT(v == 3 && set);
  setenv("SYMCOMM_DEVICE", "3x", 1);
  TEST_EXPECT_RESULT(sc_param_int(SC_PARAM_DEVICE, &v, &set), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "SYMCOMM_DEVICE='3x' is not an integer"));
  setenv("SYMCOMM_DEVICE", "", 1); /* empty counts as unset */
  TEST_OK(sc_param_int(SC_PARAM_DEVICE, &v, &set));
  TEST_ASSERT(v == -1 && !set);

  int64_t ms = 0;
  unsetenv("SYMCOMM_TIMEOUT");
  TEST_OK(sc_param_milliseconds(SC_PARAM_TIMEOUT, &ms));
  TEST_ASSERT(ms == 300000, "default timeout %lld ms", (long long)ms);
  setenv("SYMCOMM_TIMEOUT", "1.5", 1);
  TEST_OK(sc_param_milliseconds(SC_PARAM_TIMEOUT, &ms));
  TEST_ASSERT(ms == 1500);
  setenv("SYMCOMM_TIMEOUT", "-1", 1);
  TEST_EXPECT_RESULT(sc_param_milliseconds(SC_PARAM_TIMEOUT, &ms), SYMCOMM_ERR_INVALID_ARGUMENT);
  setenv("SYMCOMM_TIMEOUT", "soon", 1);
  TEST_EXPECT_RESULT(sc_param_milliseconds(SC_PARAM_TIMEOUT, &ms), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "SYMCOMM_TIMEOUT='soon'"));

  /* The public listing sees the current value. */
  setenv("SYMCOMM_TIMEOUT", "9", 1);
  const char *name, *type, *def, *value, *doc;
  TEST_OK(symcomm_param_info(SC_PARAM_TIMEOUT, &name, &type, &def, &value, &doc));
  TEST_ASSERT(strcmp(name, "SYMCOMM_TIMEOUT") == 0 && strcmp(value, "9") == 0);
  TEST_ASSERT(strcmp(type, "seconds") == 0 && strcmp(def, "300") == 0);
  TEST_EXPECT_RESULT(symcomm_param_info(-1, &name, NULL, NULL, NULL, NULL),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  printf("test_params: all passed\n");
  return 0;
}
