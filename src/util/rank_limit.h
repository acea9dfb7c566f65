/* The most ranks of one communicator on one host, and so the most GPUs of one
 * host symcomm handles (every rank of a host has a device of its own). The
 * fixed-size parts of device-program arguments (barrier slots, reduction
 * sources, copies per launch), the send/recv pad's lines per peer and host
 * topologies are sized by it. Init refuses a job with more ranks on a host
 * (a split cannot add any), so nothing after it checks again. */
#ifndef SC_UTIL_RANK_LIMIT_H
#define SC_UTIL_RANK_LIMIT_H

#define SC_MAX_LOCAL_RANKS 64

#endif
