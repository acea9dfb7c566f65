/* What the network engine puts on the wire. Fields are in the host's byte
 * order: the hosts of one job share an architecture. */
#ifndef SC_TRANSPORT_NET_NET_WIRE_H
#define SC_TRANSPORT_NET_NET_WIRE_H

#include <stdint.h>

#define SC_NET_HELLO_MAGIC 0x4f4c4c4548435353ull /* "SSCHELLO" */
#define SC_NET_CHUNK_MAGIC 0x4b4e554843435353ull /* "SSCCHUNK" */
#define SC_NET_VERSION 2 /* 2: EAGER records, the receiver's window in SIZE records */

/* The first bytes of every connection, from the rank that connects (the sender). */
typedef struct sc_net_hello {
  uint64_t magic;
  uint32_t version;
  uint32_t index; /* 0: the control connection; 1..count-1: data connections */
  uint64_t comm_id;
  uint64_t token;
  int32_t from, to;
  uint32_t count; /* connections of the pair: 1 + sockets */
  uint32_t eager_bytes; /* the largest message that goes without a grant */
  uint64_t chunk_bytes;
} sc_net_hello_t;

/* Control records. Both sides send SIZE for each message they post, in order
 * (the sender on its control connection, the receiver back on it, with its
 * window in b); the receiver sends GRANT (chunks [a, a + b) of message seq
 * may come). A message of 1 to eager_bytes bytes is never granted: the sender
 * sends EAGER in place of its SIZE, followed on the control connection by its
 * a bytes, once the receiver's SIZE records say it has posted all but fewer
 * than its window of the messages up to it (so the receiver holds at most a
 * window of such messages it has not posted yet; before its first SIZE
 * record, one). */
enum { SC_NET_REC_SIZE = 1, SC_NET_REC_GRANT = 2, SC_NET_REC_EAGER = 3 };
typedef struct sc_net_rec {
  uint32_t type;
  uint32_t reserved;
  uint64_t seq;
  uint64_t a; /* SIZE: bytes; GRANT: first chunk */
  uint64_t b; /* GRANT: how many chunks */
} sc_net_rec_t;

/* Before every chunk's bytes on a data connection. */
typedef struct sc_net_chunk_hdr {
  uint64_t magic;
  uint64_t comm_id;
  uint64_t seq;
  uint64_t chunk;
  uint64_t offset;
  uint64_t length;
} sc_net_chunk_hdr_t;

#endif
