/* Starting one rank: fork, then in the child its own process group, the parent-death
 * signal, its stdio, its environment (the contract with the library's launcher
 * detection), and exec. symcomm-run is single-threaded, so the child may use
 * setenv and stdio between fork and exec. */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

rank_place_t rank_place(const launcher_options_t *opts, int rank) {
  rank_place_t place = {.rank = rank, .host = 0, .local_rank = rank,
                        .local_size = opts->world_size};
  if (opts->num_hosts <= 0)
    return place;
  /* Host h holds ranks [h*N/H, (h+1)*N/H): contiguous blocks, sizes differing by at
   * most one, every host non-empty since H <= N. */
  long long n = opts->world_size, hosts = opts->num_hosts;
  for (long long h = 0; h < hosts; h++) {
    long long first = h * n / hosts, end = (h + 1) * n / hosts;
    if (rank >= first && rank < end) {
      place.host = (int)h;
      place.local_rank = (int)(rank - first);
      place.local_size = (int)(end - first);
      break;
    }
  }
  return place;
}

static int set_env_int(const char *name, long long value) {
  char text[32];
  snprintf(text, sizeof(text), "%lld", value);
  return setenv(name, text, 1);
}

/* Everything the library reads; variables that only make sense for some ranks are
 * removed otherwise, so that a job started from inside another job's rank does not
 * inherit the outer job's values. */
static int set_rank_environment(const launcher_options_t *opts, const launcher_job_t *job,
                                int rank) {
  rank_place_t place = rank_place(opts, rank);
  char addr[64];
  snprintf(addr, sizeof(addr), "%s:%d", job->root_host, job->root_port);
  /* Always this job's own key: one inherited from an outer job is not ours. */
  if (setenv("SYMCOMM_ADDR", addr, 1) != 0 || setenv("SYMCOMM_JOB_KEY", job->key, 1) != 0 ||
      set_env_int("SYMCOMM_RANK", rank) != 0 ||
      set_env_int("SYMCOMM_WORLD_SIZE", opts->world_size) != 0 ||
      set_env_int("SYMCOMM_LOCAL_RANK", place.local_rank) != 0 ||
      set_env_int("SYMCOMM_LOCAL_SIZE", place.local_size) != 0)
    return -1;
  if (opts->num_hosts > 0) {
    if (set_env_int("SYMCOMM_HOSTID", place.host) != 0)
      return -1;
  } else if (unsetenv("SYMCOMM_HOSTID") != 0) {
    return -1;
  }
  /* The interface the library listens on: the host's own end of its veth pair, or
   * loopback for simulated hosts that share this machine's stack. One the user chose
   * wins. */
  if (opts->num_hosts > 0 && getenv("SYMCOMM_SOCKET_IFNAME") == NULL) {
    char ifname[32] = "lo";
    if (job->netns != NULL)
      netns_rank_ifname(place.host, ifname, sizeof(ifname));
    if (setenv("SYMCOMM_SOCKET_IFNAME", ifname, 1) != 0)
      return -1;
  }
  if (rank == 0) {
    if (set_env_int("SYMCOMM_ROOT_FD", job->root_fd) != 0)
      return -1;
  } else if (unsetenv("SYMCOMM_ROOT_FD") != 0) {
    return -1;
  }
  return 0;
}

/* stdin: a rank lives in its own process group, so reading the terminal would stop it
 * with SIGTTIN; and several ranks reading one stream would split it arbitrarily. Rank 0
 * inherits stdin unless it is a terminal; every other rank reads /dev/null. */
static int setup_stdin(int rank) {
  if (rank == 0 && !isatty(STDIN_FILENO))
    return 0;
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int rc = dup2(fd, STDIN_FILENO) < 0 ? -1 : 0;
  close(fd);
  return rc;
}

static void child_fail(const char *what) {
  fprintf(stderr, LAUNCHER_NAME ": cannot start rank: %s: %s\n", what, strerror(errno));
  _exit(LAUNCHER_EXIT_EXEC);
}

static __attribute__((noreturn)) void run_child(const launcher_options_t *opts,
                                                const launcher_job_t *job, int rank,
                                                const sigset_t *child_mask, pid_t launcher,
                                                int out_fd, int err_fd) {
  /* Its own group, so that stopping the rank also reaches whatever it started. */
  if (setpgid(0, 0) != 0)
    child_fail("setpgid");
  /* If symcomm-run dies (even by SIGKILL) the rank must not run on alone. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    child_fail("prctl(PR_SET_PDEATHSIG)");
  if (getppid() != launcher)
    _exit(LAUNCHER_EXIT_INTERNAL); /* it died before the line above took effect */

  if (out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0))
    child_fail("dup2");
  if (setup_stdin(rank) != 0)
    child_fail("stdin from /dev/null");
  if (rank == 0) {
    int flags = fcntl(job->root_fd, F_GETFD);
    if (flags < 0 || fcntl(job->root_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0)
      child_fail("root socket");
  }
  if (set_rank_environment(opts, job, rank) != 0)
    child_fail("setenv");
  /* The root socket (rank 0's) stays in symcomm-run's namespace: sockets keep the
   * namespace they were made in. */
  if (job->netns != NULL && netns_enter(job->netns, rank_place(opts, rank).host) != 0)
    child_fail("setns into its host's network namespace");
  /* Signals that arrived for the group since fork are pending, not lost: they are
   * delivered here, with the dispositions symcomm-run inherited. */
  if (sigprocmask(SIG_SETMASK, child_mask, NULL) != 0)
    child_fail("sigprocmask");

  execvp(opts->argv[0], opts->argv);
  fprintf(stderr, LAUNCHER_NAME ": cannot execute '%s': %s\n", opts->argv[0], strerror(errno));
  _exit(LAUNCHER_EXIT_EXEC);
}

int spawn_rank(const launcher_options_t *opts, const launcher_job_t *job, int rank,
               const sigset_t *child_mask, rank_proc_t *proc) {
  int child_out = -1, child_err = -1;
  int rc = -1;
  proc->pid = 0;
  proc->running = false;
  if (opts->tag_output) {
    if (output_stream_open(&proc->out, STDOUT_FILENO, &child_out) != 0 ||
        output_stream_open(&proc->err, STDERR_FILENO, &child_err) != 0) {
      fprintf(stderr, LAUNCHER_NAME ": cannot start rank %d: pipe: %s\n", rank,
              strerror(errno));
      goto cleanup;
    }
  }
  /* Flushed now so that the child's copy of the buffers is empty. */
  fflush(stdout);
  fflush(stderr);
  pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, LAUNCHER_NAME ": cannot start rank %d: fork: %s\n", rank, strerror(errno));
    goto cleanup;
  }
  if (pid == 0)
    run_child(opts, job, rank, child_mask, launcher, child_out, child_err);
  /* Set the group from this side too, so that a signal sent to it right away reaches
   * the rank even before the child gets to run. EACCES: the child already exec'd,
   * having set its group itself. */
  if (setpgid(pid, pid) != 0 && errno != EACCES && errno != ESRCH)
    fprintf(stderr, LAUNCHER_NAME ": setpgid(rank %d): %s\n", rank, strerror(errno));
  proc->pid = pid;
  proc->running = true;
  rc = 0;

cleanup:
  if (child_out >= 0)
    close(child_out);
  if (child_err >= 0)
    close(child_err);
  if (rc != 0) {
    output_stream_close(&proc->out, rank);
    output_stream_close(&proc->err, rank);
  }
  return rc;
}
