/* The job's secret. Every rank gets it in SYMCOMM_JOB_KEY, from which the
 * library derives the job's session ids and socket names: another job on this
 * machine never has the same ones, and a process outside the job (another
 * user cannot read a rank's environment) cannot guess them to disturb it. */
#include "launcher.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int job_key_make(char *key) {
  unsigned char bytes[LAUNCHER_JOB_KEY_CHARS / 2];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      fprintf(stderr, LAUNCHER_NAME ": cannot make the job's key: getrandom: %s\n",
              strerror(errno));
      return -1;
    }
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof(bytes); i++)
    snprintf(key + 2 * i, 3, "%02x", bytes[i]);
  return 0;
}
