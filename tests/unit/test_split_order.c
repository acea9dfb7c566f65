/* Split ordering: by key, then by parent rank; colors select members. */
#include "core/split_order.h"
#include "symcomm.h"
#include "test_util.h"

static void expect(const int *colors, const int *keys, int n, int color, const int *want, int nwant) {
  sc_split_member_t m[16];
  int got = sc_split_order(colors, keys, n, color, m);
  TEST_ASSERT(got == nwant, "color %d: %d members, expected %d", color, got, nwant);
  for (int i = 0; i < nwant; i++)
    TEST_ASSERT(m[i].parent_rank == want[i], "color %d position %d: rank %d, expected %d", color, i,
                m[i].parent_rank, want[i]);
}

int main(void) {
  /* 2 hosts x 4: TP (color = host, key = local) and DP (color = local, key = host). */
  int host[8] = {0, 0, 0, 0, 1, 1, 1, 1}, local[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  expect(host, local, 8, 1, (int[]){4, 5, 6, 7}, 4);
  expect(local, host, 8, 2, (int[]){2, 6}, 2);
  /* Keys reverse the order; equal keys keep parent order. */
  int colors[6] = {0, 0, 0, 0, 0, 0}, keys[6] = {5, 4, 4, 3, 9, -1};
  expect(colors, keys, 6, 0, (int[]){5, 3, 1, 2, 0, 4}, 6);
  /* NOCOLOR ranks are members of nothing; an absent color has no members. */
  int c2[4] = {SYMCOMM_SPLIT_NOCOLOR, 1, SYMCOMM_SPLIT_NOCOLOR, 1}, k2[4] = {0, 0, 0, 0};
  expect(c2, k2, 4, 1, (int[]){1, 3}, 2);
  expect(c2, k2, 4, 7, NULL, 0);
  printf("test_split_order: all passed\n");
  return 0;
}
