/* symcomm-run: the pieces of the local launcher and what they share.
 *
 *   main.c        options, usage text, the exit status
 *   root_socket.c the job's root listening socket (inherited by rank 0)
 *   job_key.c     the job's random secret (SYMCOMM_JOB_KEY of every rank)
 *   signals.c     which signals are caught and how they reach the event loop
 *   spawn.c       starting one rank: process group, parent-death signal, environment, exec
 *   supervise.c   the event loop: reaping, failures, timeout, forwarding, stopping
 *   tag_output.c  --tag-output: reassembling ranks' lines and prefixing them
 *
 * The launcher needs nothing from libsymcomm: it only sets the environment that the
 * library's launcher detection reads. */
#ifndef SYMCOMM_RUN_LAUNCHER_H
#define SYMCOMM_RUN_LAUNCHER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LAUNCHER_NAME "symcomm-run"

/* Seconds between the first SIGTERM (or forwarded signal) and the SIGKILL of survivors. */
#define LAUNCHER_GRACE_SECONDS 3.0

/* Exit statuses of symcomm-run itself (a failing rank's status is passed through). */
enum {
  LAUNCHER_EXIT_INTERNAL = 1, /* a system call failed in the launcher */
  LAUNCHER_EXIT_USAGE = 2,
  LAUNCHER_EXIT_TIMEOUT = 124, /* as timeout(1) */
  LAUNCHER_EXIT_EXEC = 127,    /* as a shell that cannot run a command */
};

typedef struct {
  int world_size;       /* -n */
  int num_hosts;        /* --hosts; 0 when not given (one real host) */
  double timeout_s;     /* --timeout; 0 when not given */
  bool tag_output;      /* --tag-output */
  char *const *argv;    /* the program and its arguments, NULL-terminated */
} launcher_options_t;

/* Hex digits of the job's key: 128 random bits. */
#define LAUNCHER_JOB_KEY_CHARS 32

/* What every rank of the job is given besides its place. */
typedef struct {
  int root_fd;   /* listening, inherited by rank 0 */
  int root_port;
  char key[LAUNCHER_JOB_KEY_CHARS + 1];
} launcher_job_t;

/* Where a rank sits: the simulated host and its place on it. */
typedef struct {
  int rank;
  int host;        /* index of its (simulated) host */
  int local_rank;  /* rank within the host */
  int local_size;  /* ranks on the host */
} rank_place_t;

/* One line being assembled from a rank's stdout or stderr (--tag-output). */
typedef struct {
  int fd;        /* read end of the pipe, -1 once closed */
  int dest_fd;   /* 1 or 2: where finished lines go */
  char *buf;     /* bytes of the current, unfinished line */
  size_t len;
  size_t cap;
  bool wrapped;  /* the current line was too long and part of it is already written */
} output_stream_t;

typedef struct {
  pid_t pid;        /* also its process group id; 0 if never started */
  bool running;     /* started and not yet reaped */
  int wait_status;  /* from waitpid, valid once reaped */
  output_stream_t out, err;
} rank_proc_t;

/* --- root_socket.c --- */

/* A TCP socket listening on 127.0.0.1 on an ephemeral port, close-on-exec; its port
 * goes to *port. Returns the fd, or -1 after printing why. */
int root_socket_open(int *port);

/* --- job_key.c --- */

/* Fills key (LAUNCHER_JOB_KEY_CHARS hex digits and a NUL) with random bits.
 * Returns 0, or -1 after printing why. */
int job_key_make(char *key);

/* --- signals.c --- */

typedef struct {
  sigset_t caught;      /* delivered through signal_fd: SIGCHLD and the forwarded ones */
  sigset_t saved_mask;  /* the mask symcomm-run started with, restored in each rank */
  int signal_fd;
} launcher_signals_t;

/* Blocks the forwarded signals (except those ignored when symcomm-run started: a
 * `nohup` or background job keeps ignoring them), SIGCHLD and SIGPIPE, and opens a
 * signalfd for them. Returns 0, or -1 after printing why. */
int signals_setup(launcher_signals_t *sigs);
void signals_close(launcher_signals_t *sigs);

/* Signals that are forwarded to every rank's process group. */
bool signal_is_forwarded(int sig);
/* Forwarded signals that also stop the job. */
bool signal_stops_job(int sig);
/* "SIGTERM" for the signals symcomm-run sends or forwards. */
const char *signal_name(int sig);

/* --- spawn.c --- */

rank_place_t rank_place(const launcher_options_t *opts, int rank);

/* Starts one rank in its own process group. With tag_output, proc->out/err get the
 * read ends of its stdout/stderr pipes. job->root_fd is inherited by rank 0 only.
 * Returns 0, or -1 after printing why (nothing left running for this rank). */
int spawn_rank(const launcher_options_t *opts, const launcher_job_t *job, int rank,
               const sigset_t *child_mask, rank_proc_t *proc);

/* --- tag_output.c --- */

/* Makes the pipe for one stream: *child_fd is the write end for the rank. */
int output_stream_open(output_stream_t *stream, int dest_fd, int *child_fd);
/* Reads what is available (non-blocking) and writes the finished lines, each prefixed
 * with "[rank] ". At EOF the unfinished line is written with a newline and the stream
 * closed. Returns true if the stream is still open. */
bool output_stream_pump(output_stream_t *stream, int rank);
/* Writes any unfinished line and closes the stream. */
void output_stream_close(output_stream_t *stream, int rank);

/* --- supervise.c --- */

/* Runs the event loop until every started rank is reaped; returns symcomm-run's exit
 * status. `started` ranks (procs[0..started)) are running; if started < world size,
 * starting the next rank failed and the job is stopped at once. */
int supervise(const launcher_options_t *opts, rank_proc_t *procs, int started,
              launcher_signals_t *sigs);

#endif
