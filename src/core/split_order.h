/* Who goes where in a split, as a pure function of every rank's color and key. */
#ifndef SC_CORE_SPLIT_ORDER_H
#define SC_CORE_SPLIT_ORDER_H

typedef struct sc_split_member {
  int key;
  int parent_rank;
} sc_split_member_t;

/* The parent ranks whose color is `color`, in the new communicator's order:
 * by key, then by parent rank. Returns how many; members holds nranks. */
int sc_split_order(const int *colors, const int *keys, int nranks, int color,
                   sc_split_member_t *members);

#endif
