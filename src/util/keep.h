/* Memory kept on purpose for the life of the process: what device work that
 * symcomm gave up waiting for may still read or write (a communicator, a
 * window). It is never freed, and stays reachable from here so that a leak
 * checker does not report it as lost. */
#ifndef SC_UTIL_KEEP_H
#define SC_UTIL_KEEP_H

/* Keeps p (and whatever it points to) for good. */
void sc_keep(void *p);

#endif
