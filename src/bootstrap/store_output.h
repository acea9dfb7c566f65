/* What the root has yet to send on a connection: a queue of reference-counted
 * byte blocks. A gather's result is built once and queued on every rank's
 * connection, so the root holds one copy of it, not one per rank. Used by the
 * server's single thread only, so counts are plain integers. */
#ifndef SC_BOOTSTRAP_STORE_OUTPUT_H
#define SC_BOOTSTRAP_STORE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sc_store_blob {
  int refs;
  size_t len;
  char data[];
} sc_store_blob_t;

/* A new block of len bytes with one reference, or NULL. */
sc_store_blob_t *sc_store_blob_new(size_t len);
sc_store_blob_t *sc_store_blob_ref(sc_store_blob_t *blob);
void sc_store_blob_unref(sc_store_blob_t *blob);

typedef struct sc_store_segment {
  struct sc_store_segment *next;
  sc_store_blob_t *blob;
  size_t sent;
} sc_store_segment_t;

typedef struct sc_store_output {
  sc_store_segment_t *head, *tail;
} sc_store_output_t;

/* Queues blob (taking a new reference); false when out of memory. */
bool sc_store_output_push(sc_store_output_t *out, sc_store_blob_t *blob);
bool sc_store_output_pending(const sc_store_output_t *out);
/* Sends what the socket takes: 1 when all is sent, 0 when it would block, -1
 * when the peer is gone. */
int sc_store_output_send(sc_store_output_t *out, int fd);
void sc_store_output_clear(sc_store_output_t *out);

#endif
