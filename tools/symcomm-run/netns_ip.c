/* --netns drives iproute2's ip(8) in batch mode: one process per namespace for a
 * whole list of commands. It runs as a plain child of symcomm-run, before any rank
 * starts or after every rank is reaped, so it is waited for by pid here; it keeps
 * symcomm-run's blocked signals, so that a Ctrl-C reaching the terminal's group does
 * not cut a setup or a teardown in half (symcomm-run sees that signal afterwards). */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static __attribute__((noreturn)) void run_ip_child(const char *ip_path, int ns_fd, int in_fd,
                                                   bool keep_going, bool quiet) {
  if (dup2(in_fd, STDIN_FILENO) < 0)
    _exit(LAUNCHER_EXIT_EXEC);
  int out = quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC) : STDERR_FILENO;
  if (out < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
    _exit(LAUNCHER_EXIT_EXEC);
  if (ns_fd >= 0 && setns(ns_fd, CLONE_NEWNET) != 0) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: setns: %s\n", strerror(errno));
    _exit(LAUNCHER_EXIT_EXEC);
  }
  char *const argv_force[] = {(char *)ip_path, "-force", "-batch", "-", NULL};
  char *const argv_plain[] = {(char *)ip_path, "-batch", "-", NULL};
  execv(ip_path, keep_going ? argv_force : argv_plain);
  fprintf(stderr, LAUNCHER_NAME ": --netns: cannot execute %s: %s\n", ip_path, strerror(errno));
  _exit(LAUNCHER_EXIT_EXEC);
}

static int write_all(int fd, const char *text, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    text += n;
    len -= (size_t)n;
  }
  return 0;
}

int netns_run_ip(const char *ip_path, int ns_fd, const char *script, bool keep_going,
                 bool quiet) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: pipe: %s\n", strerror(errno));
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: fork: %s\n", strerror(errno));
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return -1;
  }
  if (pid == 0)
    run_ip_child(ip_path, ns_fd, pipe_fds[0], keep_going, quiet);
  close(pipe_fds[0]);
  /* EPIPE (SIGPIPE is blocked) when ip stopped reading: its status tells why. */
  write_all(pipe_fds[1], script, strlen(script));
  close(pipe_fds[1]);
  int wait_status;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, LAUNCHER_NAME ": --netns: waitpid(ip): %s\n", strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(wait_status))
    return WEXITSTATUS(wait_status);
  return 128 + WTERMSIG(wait_status);
}
