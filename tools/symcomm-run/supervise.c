/* The event loop: symcomm-run sleeps in poll() on the signalfd (SIGCHLD and the
 * forwarded signals) and the ranks' output pipes, with the timeout or the grace
 * period as its only timer, until every rank is reaped.
 *
 * Stopping the job (a rank failed, --timeout passed, or a stopping signal came) is
 * one sequence: signal every running rank's process group (SIGTERM, or the signal we
 * were sent), wait up to LAUNCHER_GRACE_SECONDS, SIGKILL the groups still running,
 * reap everything, and finally SIGKILL every rank's group once more for anything the
 * ranks left behind. The first cause decides the exit status. */
#include "launcher.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const launcher_options_t *opts;
  rank_proc_t *procs;
  int started;           /* procs[0..started) were started */
  int running;           /* of those, not yet reaped */
  int exit_status;       /* -1 until the first failure or stop decides it */
  bool stopping;         /* the stop sequence has begun */
  bool killed;           /* the survivors were sent SIGKILL */
  double job_deadline;   /* --timeout, monotonic seconds; 0 for none */
  double grace_deadline; /* when stopping, the time to SIGKILL survivors */
  int stop_signal;       /* the signal that began the stop, 0 if none did */
} job_t;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "0-3,5,7-9": the running ranks, cut short with "..." if the list is long. */
static void format_running_ranks(const job_t *job, char *text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int r = 0; r < job->started; r++) {
    if (!job->procs[r].running)
      continue;
    int last = r;
    while (last + 1 < job->started && job->procs[last + 1].running)
      last++;
    char piece[32];
    if (last == r)
      snprintf(piece, sizeof(piece), "%s%d", used ? "," : "", r);
    else
      snprintf(piece, sizeof(piece), "%s%d-%d", used ? "," : "", r, last);
    size_t len = strlen(piece);
    if (used + len + 4 >= size) {
      snprintf(text + used, size - used, ",...");
      return;
    }
    memcpy(text + used, piece, len + 1);
    used += len;
    r = last;
  }
}

static const char *plural(int n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

static void signal_running_groups(job_t *job, int sig) {
  for (int r = 0; r < job->started; r++) {
    rank_proc_t *proc = &job->procs[r];
    if (proc->running && kill(-proc->pid, sig) != 0 && errno != ESRCH)
      fprintf(stderr, LAUNCHER_NAME ": kill(rank %d, %s): %s\n", r, signal_name(sig),
              strerror(errno));
  }
}

/* Begins the stop sequence; `sig` (0 for none) goes to every running rank's group. */
static void begin_stop(job_t *job, int sig) {
  job->stopping = true;
  job->grace_deadline = now_seconds() + LAUNCHER_GRACE_SECONDS;
  if (sig != 0)
    signal_running_groups(job, sig);
}

static void kill_survivors(job_t *job) {
  signal_running_groups(job, SIGKILL);
  job->killed = true;
}

static int status_as_exit_code(int wait_status) {
  if (WIFEXITED(wait_status))
    return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status))
    return 128 + WTERMSIG(wait_status);
  return LAUNCHER_EXIT_INTERNAL;
}

static void report_failure(job_t *job, int rank) {
  const rank_proc_t *proc = &job->procs[rank];
  char how[160];
  if (WIFSIGNALED(proc->wait_status)) {
    int sig = WTERMSIG(proc->wait_status);
    snprintf(how, sizeof(how), "was killed by signal %d (%s)%s", sig, strsignal(sig),
             WCOREDUMP(proc->wait_status) ? ", core dumped" : "");
  } else {
    snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(proc->wait_status));
  }
  if (job->running == 0)
    fprintf(stderr, LAUNCHER_NAME ": rank %d (pid %d) %s\n", rank, (int)proc->pid, how);
  else if (job->running == 1)
    fprintf(stderr, LAUNCHER_NAME ": rank %d (pid %d) %s; stopping the other rank\n", rank,
            (int)proc->pid, how);
  else
    fprintf(stderr, LAUNCHER_NAME ": rank %d (pid %d) %s; stopping the other %d ranks\n", rank,
            (int)proc->pid, how, job->running);
}

/* The rest of a reaped rank's output is in its pipes already; what a process it left
 * behind writes later is not waited for. */
static void finish_output(job_t *job, int rank) {
  rank_proc_t *proc = &job->procs[rank];
  output_stream_pump(&proc->out, rank);
  output_stream_pump(&proc->err, rank);
  output_stream_close(&proc->out, rank);
  output_stream_close(&proc->err, rank);
}

static int rank_of_pid(const job_t *job, pid_t pid) {
  for (int r = 0; r < job->started; r++)
    if (job->procs[r].pid == pid)
      return r;
  return -1;
}

static void reap_children(job_t *job) {
  for (;;) {
    int wait_status;
    pid_t pid = waitpid(-1, &wait_status, WNOHANG);
    if (pid == 0)
      return;
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      if (errno != ECHILD)
        fprintf(stderr, LAUNCHER_NAME ": waitpid: %s\n", strerror(errno));
      return;
    }
    int rank = rank_of_pid(job, pid);
    if (rank < 0 || !job->procs[rank].running)
      continue;
    rank_proc_t *proc = &job->procs[rank];
    proc->running = false;
    proc->wait_status = wait_status;
    job->running--;
    finish_output(job, rank);
    bool failed = !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0;
    if (failed && job->exit_status < 0) {
      job->exit_status = status_as_exit_code(wait_status);
      report_failure(job, rank);
      if (!job->stopping)
        begin_stop(job, SIGTERM);
    }
  }
}

static void on_stopping_signal(job_t *job, int sig) {
  char ranks[256];
  format_running_ranks(job, ranks, sizeof(ranks));
  if (job->stopping) {
    /* A second interrupt means "now": do not wait out the grace period. */
    if (!job->killed && job->running > 0) {
      fprintf(stderr, LAUNCHER_NAME ": received %s while stopping; killing the %d running %s "
              "(%s)\n", signal_name(sig), job->running,
              plural(job->running, "rank", "ranks"), ranks);
      kill_survivors(job);
    }
    return;
  }
  fprintf(stderr, LAUNCHER_NAME ": received %s; forwarding it to the %d running %s (%s) and "
          "stopping %s\n", signal_name(sig), job->running, plural(job->running, "rank", "ranks"),
          ranks, plural(job->running, "it", "them"));
  if (job->exit_status < 0)
    job->exit_status = 128 + sig;
  job->stop_signal = sig;
  begin_stop(job, sig);
}

static void read_signals(job_t *job, int signal_fd) {
  for (;;) {
    struct signalfd_siginfo info;
    ssize_t n = read(signal_fd, &info, sizeof(info));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return;
    if (n != (ssize_t)sizeof(info)) {
      fprintf(stderr, LAUNCHER_NAME ": reading signalfd: %s\n",
              n < 0 ? strerror(errno) : "short read");
      return;
    }
    int sig = (int)info.ssi_signo;
    if (sig == SIGCHLD)
      reap_children(job);
    else if (signal_stops_job(sig))
      on_stopping_signal(job, sig);
    else if (signal_is_forwarded(sig))
      signal_running_groups(job, sig);
  }
}

static void check_deadlines(job_t *job) {
  double now = now_seconds();
  char ranks[256];
  if (!job->stopping && job->job_deadline > 0 && now >= job->job_deadline) {
    format_running_ranks(job, ranks, sizeof(ranks));
    fprintf(stderr, LAUNCHER_NAME ": timed out after %g s with %d of %d %s still running (%s); "
            "stopping %s\n", job->opts->timeout_s, job->running, job->opts->world_size,
            plural(job->opts->world_size, "rank", "ranks"), ranks,
            plural(job->running, "it", "them"));
    if (job->exit_status < 0)
      job->exit_status = LAUNCHER_EXIT_TIMEOUT;
    begin_stop(job, SIGTERM);
  } else if (job->stopping && !job->killed && now >= job->grace_deadline) {
    format_running_ranks(job, ranks, sizeof(ranks));
    fprintf(stderr, LAUNCHER_NAME ": %d %s still running %g s after %s (%s); killing %s\n",
            job->running, plural(job->running, "rank", "ranks"), LAUNCHER_GRACE_SECONDS,
            signal_name(job->stop_signal != 0 ? job->stop_signal : SIGTERM), ranks,
            plural(job->running, "it", "them"));
    kill_survivors(job);
  }
}

/* Milliseconds until the next deadline, rounded up so that poll never returns just
 * before it and makes us spin; -1 for none. */
static int poll_timeout_ms(const job_t *job) {
  double deadline = 0;
  if (job->stopping && !job->killed)
    deadline = job->grace_deadline;
  else if (!job->stopping && job->job_deadline > 0)
    deadline = job->job_deadline;
  if (deadline <= 0)
    return -1;
  double left_ms = (deadline - now_seconds()) * 1000.0;
  if (left_ms <= 0)
    return 0;
  if (left_ms > 1e9)
    return 1000000000;
  return (int)left_ms + 1;
}

/* pollfd slots: the signalfd, then stdout and stderr of each rank. */
static int build_pollfds(const job_t *job, int signal_fd, struct pollfd *fds, int *slot_rank) {
  int n = 0;
  fds[n].fd = signal_fd;
  fds[n].events = POLLIN;
  slot_rank[n++] = -1;
  for (int r = 0; r < job->started; r++) {
    const rank_proc_t *proc = &job->procs[r];
    if (proc->out.fd >= 0) {
      fds[n].fd = proc->out.fd;
      fds[n].events = POLLIN;
      slot_rank[n++] = r;
    }
    if (proc->err.fd >= 0) {
      fds[n].fd = proc->err.fd;
      fds[n].events = POLLIN;
      slot_rank[n++] = r;
    }
  }
  return n;
}

int supervise(const launcher_options_t *opts, rank_proc_t *procs, int started,
              launcher_signals_t *sigs) {
  job_t job = {.opts = opts, .procs = procs, .started = started, .running = started,
               .exit_status = -1};
  struct pollfd *fds = calloc((size_t)started * 2 + 1, sizeof(*fds));
  int *slot_rank = calloc((size_t)started * 2 + 1, sizeof(*slot_rank));
  if (fds == NULL || slot_rank == NULL) {
    fprintf(stderr, LAUNCHER_NAME ": out of memory\n");
    job.exit_status = LAUNCHER_EXIT_INTERNAL;
    /* Without the loop nothing can wait for the ranks: kill them and reap below. */
    kill_survivors(&job);
    job.stopping = true;
    goto cleanup;
  }
  if (opts->timeout_s > 0)
    job.job_deadline = now_seconds() + opts->timeout_s;
  if (started < opts->world_size) {
    if (started > 0)
      fprintf(stderr, LAUNCHER_NAME ": stopping the %d %s already started\n", started,
              plural(started, "rank", "ranks"));
    job.exit_status = LAUNCHER_EXIT_INTERNAL;
    begin_stop(&job, SIGTERM);
  }

  while (job.running > 0) {
    int nfds = build_pollfds(&job, sigs->signal_fd, fds, slot_rank);
    int ready = poll(fds, (nfds_t)nfds, poll_timeout_ms(&job));
    if (ready < 0 && errno != EINTR) {
      fprintf(stderr, LAUNCHER_NAME ": poll: %s\n", strerror(errno));
      if (job.exit_status < 0)
        job.exit_status = LAUNCHER_EXIT_INTERNAL;
      if (!job.killed)
        kill_survivors(&job);
      job.stopping = true;
      break;
    }
    for (int i = 1; ready > 0 && i < nfds; i++) {
      if (fds[i].revents == 0)
        continue;
      rank_proc_t *proc = &procs[slot_rank[i]];
      output_stream_t *stream = fds[i].fd == proc->out.fd ? &proc->out : &proc->err;
      output_stream_pump(stream, slot_rank[i]);
    }
    /* Signals after output, so that a rank's last lines come before the news of its end. */
    if (ready > 0 && fds[0].revents != 0)
      read_signals(&job, sigs->signal_fd);
    check_deadlines(&job);
  }

cleanup:
  /* Only reached with job.running > 0 when the loop could not run: those were sent
   * SIGKILL, so a blocking wait returns promptly. */
  while (job.running > 0) {
    int wait_status;
    pid_t pid = waitpid(-1, &wait_status, 0);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid < 0)
      break;
    int rank = rank_of_pid(&job, pid);
    if (rank >= 0 && procs[rank].running) {
      procs[rank].running = false;
      job.running--;
    }
  }
  for (int r = 0; r < started; r++) {
    finish_output(&job, r);
    /* Whatever a rank left behind in its group goes with the job. The group id cannot
     * have been reused while any member lived; ESRCH when none is left. */
    if (job.stopping && procs[r].pid > 0)
      kill(-procs[r].pid, SIGKILL);
  }
  free(fds);
  free(slot_rank);
  return job.exit_status < 0 ? 0 : job.exit_status;
}
