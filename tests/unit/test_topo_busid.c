/* PCI bus ids: text <-> number (NCCL's convention) and PCI domains. */
#include "topo_test_util.h"

static void expect_parse(const char *text, int64_t expected, const char *canonical) {
  int64_t busid = -1;
  TEST_OK(sc_busid_parse(text, &busid));
  TEST_ASSERT(busid == expected, "'%s' -> 0x%llx, expected 0x%llx", text, (long long)busid,
              (long long)expected);
  char back[32];
  sc_busid_format(busid, back, sizeof(back));
  TEST_ASSERT(strcmp(back, canonical) == 0, "0x%llx formats as '%s', expected '%s'",
              (long long)busid, back, canonical);
}

static void expect_bad(const char *text) {
  int64_t busid = 42;
  sc_error_clear();
  TEST_EXPECT_RESULT(sc_busid_parse(text, &busid), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(busid == 42, "output written on failure for '%s'", text ? text : "(null)");
  TEST_ASSERT(test_contains(sc_error_last(), "bad PCI bus id"), "sentence: %s", sc_error_last());
  if (text != NULL)
    TEST_ASSERT(test_contains(sc_error_last(), text), "sentence names the text: %s",
                sc_error_last());
}

static void test_parse(void) {
  /* The hex digits read as one number, as NCCL's busIdToInt64 does. */
  expect_parse("0000:07:00.0", 0x7000, "0000:07:00.0");
  expect_parse("0000:01:00.0", 0x1000, "0000:01:00.0");
  expect_parse("0100:01:00.0", 0x10001000, "0100:01:00.0");
  expect_parse("0100:08:00.0", 0x10008000, "0100:08:00.0");
  expect_parse("0000:c1:00.0", 0xc1000, "0000:c1:00.0");
  expect_parse("0000:AB:1F.7", 0xab1f7, "0000:ab:1f.7");    /* case-insensitive, printed lower */
  expect_parse("07:00.0", 0x7000, "0000:07:00.0");          /* no domain = domain 0 */
  expect_parse("00000000:07:00.0", 0x7000, "0000:07:00.0"); /* nvidia-smi's 8-digit domain */
  expect_parse("0001:00:00.0", 0x100000, "0001:00:00.0");   /* Azure's per-GPU domains */
  expect_parse("c3a4:00:00.0", 0xc3a400000LL, "c3a4:00:00.0");
  /* NCCL's collapsed NVSwitch target: a 7-digit domain. */
  expect_parse("fffffff:ff:ff.0", 0xfffffffffff0LL, "fffffff:ff:ff.0");
}

static void test_errors(void) {
  expect_bad(NULL);
  expect_bad("");
  expect_bad("0000:07:00");        /* no function */
  expect_bad("0000:7:00.0");       /* one-digit bus */
  expect_bad("0000:07:0.0");       /* one-digit device */
  expect_bad("0000:07:00.00");     /* two-digit function */
  expect_bad("0000:07:00.0 ");     /* trailing text */
  expect_bad(" 0000:07:00.0");     /* leading space */
  expect_bad("000000000:07:00.0"); /* nine domain digits */
  expect_bad("0000:0g:00.0");
  expect_bad("0000:07.00.0");
  expect_bad("0000:07:00:0");
  expect_bad("0000::07:00.0");
  expect_bad(":07:00.0");
  expect_bad("0000:00:07:00.0");
  expect_bad("fffffff:ffff:ff"); /* older NCCL's switch target: not a bus id */
  expect_bad("GPU0");
  int64_t busid;
  TEST_OK(sc_busid_parse("0000:07:00.0", &busid));
  TEST_EXPECT_RESULT(sc_busid_parse("0000:07:00.0", NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
}

static void test_round_trip(void) {
  /* Every bus, device and function value survives number -> text -> number. */
  for (int domain = 0; domain <= 0x300; domain += 0x100) {
    for (int bus = 0; bus < 256; bus += 17) {
      for (int dev = 0; dev < 32; dev += 7) {
        for (int fn = 0; fn < 8; fn += 3) {
          int64_t id = ((int64_t)domain << 20) | (bus << 12) | (dev << 4) | fn;
          char text[32];
          sc_busid_format(id, text, sizeof(text));
          TEST_ASSERT(strlen(text) == 12, "'%s'", text);
          int64_t back;
          TEST_OK(sc_busid_parse(text, &back));
          TEST_ASSERT(back == id, "'%s' -> 0x%llx, expected 0x%llx", text, (long long)back,
                      (long long)id);
        }
      }
    }
  }
  /* A short buffer gets a truncated, terminated string. */
  char small[5];
  sc_busid_format(0x7000, small, sizeof(small));
  TEST_ASSERT(strcmp(small, "0000") == 0, "'%s'", small);
  sc_busid_format(0x7000, NULL, 0); /* no crash */
}

static void test_domain(void) {
  int64_t id;
  TEST_OK(sc_busid_parse("0100:07:00.0", &id));
  TEST_ASSERT(sc_busid_domain(id) == 0x100);
  TEST_ASSERT(sc_busid_domain(0x7000) == 0);
  TEST_ASSERT(sc_busid_with_domain(0x7000, 0x100) == 0x10007000);
  TEST_ASSERT(sc_busid_with_domain(id, 0) == 0x7000);
  TEST_ASSERT(sc_busid_with_domain(0xab1f7, 0x201) == 0x201ab1f7LL);
  char text[32];
  sc_busid_format(sc_busid_with_domain(0xab1f7, 0x201), text, sizeof(text));
  TEST_ASSERT(strcmp(text, "0201:ab:1f.7") == 0, "'%s'", text);
}

int main(void) {
  test_parse();
  test_errors();
  test_round_trip();
  test_domain();
  printf("test_topo_busid: OK\n");
  return 0;
}
