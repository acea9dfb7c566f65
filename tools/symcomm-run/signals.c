/* Signals reach symcomm-run's event loop through a signalfd, so the loop sleeps in
 * poll() and never busy-waits, and no work happens in a signal handler. Each rank
 * gets back the signal mask symcomm-run started with before it execs. */
#include "launcher.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

bool signal_is_forwarded(int sig) {
  for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
    if (forwarded_signals[i] == sig)
      return true;
  return false;
}

const char *signal_name(int sig) {
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  case SIGQUIT: return "SIGQUIT";
  case SIGUSR1: return "SIGUSR1";
  case SIGUSR2: return "SIGUSR2";
  case SIGKILL: return "SIGKILL";
  default: return "a signal";
  }
}

bool signal_stops_job(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

static bool signal_ignored_at_start(int sig) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0)
    return false;
  return old.sa_handler == SIG_IGN;
}

int signals_setup(launcher_signals_t *sigs) {
  sigs->signal_fd = -1;
  sigemptyset(&sigs->caught);
  /* A signal ignored when we started was ignored on purpose (nohup, a background job
   * of a script): the ranks inherit it ignored, and we do not catch it either. */
  for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
    if (!signal_ignored_at_start(forwarded_signals[i]))
      sigaddset(&sigs->caught, forwarded_signals[i]);
  sigaddset(&sigs->caught, SIGCHLD);

  /* An inherited SIGCHLD=SIG_IGN would make the kernel reap the ranks for us and
   * take their exit statuses with it. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (sigaction(SIGCHLD, &dfl, NULL) != 0) {
    fprintf(stderr, LAUNCHER_NAME ": sigaction(SIGCHLD): %s\n", strerror(errno));
    return -1;
  }

  /* SIGPIPE is blocked rather than ignored so that the ranks do not inherit an
   * ignored SIGPIPE; a write to a closed stdout then fails with EPIPE instead of
   * killing symcomm-run (and with it, through the parent-death signal, every rank). */
  sigset_t block = sigs->caught;
  sigaddset(&block, SIGPIPE);
  if (sigprocmask(SIG_BLOCK, &block, &sigs->saved_mask) != 0) {
    fprintf(stderr, LAUNCHER_NAME ": sigprocmask: %s\n", strerror(errno));
    return -1;
  }
  sigs->signal_fd = signalfd(-1, &sigs->caught, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigs->signal_fd < 0) {
    fprintf(stderr, LAUNCHER_NAME ": signalfd: %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

void signals_close(launcher_signals_t *sigs) {
  if (sigs->signal_fd >= 0)
    close(sigs->signal_fd);
  sigs->signal_fd = -1;
}
