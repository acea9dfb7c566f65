#include "core/split_order.h"

#include <stdlib.h>

static int sc_split_member_compare(const void *a, const void *b) {
  const sc_split_member_t *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->parent_rank < y->parent_rank ? -1 : (x->parent_rank > y->parent_rank);
}

int sc_split_order(const int *colors, const int *keys, int nranks, int color,
                   sc_split_member_t *members) {
  int n = 0;
  for (int r = 0; r < nranks; r++)
    if (colors[r] == color)
      members[n++] = (sc_split_member_t){.key = keys[r], .parent_rank = r};
  qsort(members, (size_t)n, sizeof(*members), sc_split_member_compare);
  return n;
}
