/* symcomm-run: the pieces of the local launcher and what they share.
 *
 *   main.c        options, usage text, the exit status
 *   root_socket.c the job's root listening socket (inherited by rank 0)
 *   job_key.c     the job's random secret (SYMCOMM_JOB_KEY of every rank)
 *   signals.c     which signals are caught and how they reach the event loop
 *   spawn.c       starting one rank: process group, parent-death signal, environment, exec
 *   supervise.c   the event loop: reaping, failures, timeout, forwarding, stopping
 *   tag_output.c  --tag-output: reassembling ranks' lines and prefixing them
 *   netns.c       --netns: a network namespace per simulated host, on a bridge
 *   netns_ip.c    running `ip -batch` in a namespace, for netns.c
 *   netns_subnet.c  a private /24 that no address or route of this machine touches
 *   netns_leftovers.c  per-job lock files; removing what a killed job left behind
 *
 * The launcher needs nothing from libsymcomm: it only sets the environment that the
 * library's launcher detection reads. */
#ifndef SYMCOMM_RUN_LAUNCHER_H
#define SYMCOMM_RUN_LAUNCHER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAUNCHER_NAME "symcomm-run"

/* Seconds between the first SIGTERM (or forwarded signal) and the SIGKILL of survivors. */
#define LAUNCHER_GRACE_SECONDS 3.0

/* Exit statuses of symcomm-run itself (a failing rank's status is passed through). */
enum {
  LAUNCHER_EXIT_INTERNAL = 1, /* a system call failed in the launcher */
  LAUNCHER_EXIT_USAGE = 2, /* also --netns without the privileges it needs */
  LAUNCHER_EXIT_TIMEOUT = 124, /* as timeout(1) */
  LAUNCHER_EXIT_EXEC = 127,    /* as a shell that cannot run a command */
};

typedef struct {
  int world_size;       /* -n */
  int num_hosts;        /* --hosts; 0 when not given (one real host) */
  double timeout_s;     /* --timeout; 0 when not given */
  bool tag_output;      /* --tag-output */
  bool netns;           /* --netns (needs num_hosts > 0) */
  char *const *argv;    /* the program and its arguments, NULL-terminated */
} launcher_options_t;

/* Hex digits of the job's key: 128 random bits. */
#define LAUNCHER_JOB_KEY_CHARS 32

/* --netns: each simulated host h is the network namespace NETNS_NAME_PREFIX<tag>-h<h>,
 * holding one end of a veth pair (NETNS_RANK_IFNAME_PREFIX<h>, address subnet.(2+h));
 * the other end (sc<tag>-<h>) is a port of the bridge scbr-<tag> (address subnet.1)
 * in symcomm-run's own namespace. The tag is random and /run/symcomm-run/<tag>.lock,
 * locked while the job lives, tells a live job's objects from a dead one's. */
#define NETNS_MAX_HOSTS 253 /* addresses .2 to .254 of the /24 */
#define NETNS_TAG_CHARS 6
#define NETNS_NAME_PREFIX "symcomm-"
#define NETNS_RANK_IFNAME_PREFIX "sc-h"
#define NETNS_LOCK_DIR "/run/symcomm-run"
#define NETNS_NAME_MAX 64

typedef struct {
  bool active;          /* made, and not yet torn down */
  char tag[NETNS_TAG_CHARS + 1];
  int hosts;
  uint32_t subnet;      /* a.b.c.0 of the /24, host byte order */
  int lock_fd;          /* this job's lock, held until teardown; -1 if none */
  int *ns_fds;          /* host -> its namespace (close-on-exec), -1 if not opened */
  char ip_path[256];    /* the ip(8) that is run */
} launcher_netns_t;

/* What every rank of the job is given besides its place. */
typedef struct {
  int root_fd;   /* listening, inherited by rank 0 */
  int root_port;
  char root_host[16];  /* dotted IPv4 the root listens on: 127.0.0.1, or the bridge's */
  char key[LAUNCHER_JOB_KEY_CHARS + 1];
  const launcher_netns_t *netns;  /* NULL without --netns */
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

/* A TCP socket listening on IPv4 address `host` (dotted) on an ephemeral port,
 * close-on-exec; its port goes to *port. Returns the fd, or -1 after printing why. */
int root_socket_open(const char *host, int *port);

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

/* --- netns.c --- */

/* Makes a namespace per host, the bridge and the veth pairs (see above), first
 * removing what killed jobs left. Returns 0; else, with nothing of it left behind and
 * the reason printed, the exit status: LAUNCHER_EXIT_USAGE without the privileges
 * or the ip command it needs, LAUNCHER_EXIT_INTERNAL when making them failed. */
int netns_setup(launcher_netns_t *ns, int hosts);
/* Removes everything netns_setup made (also after a partial setup); says so if
 * something could not be removed. Safe to call when nothing was made. */
void netns_teardown(launcher_netns_t *ns);
/* Dotted address of host `host` (-1: the bridge) in the job's /24. */
void netns_address(const launcher_netns_t *ns, int host, char *text, size_t size);
void netns_rank_ifname(int host, char *name, size_t size);
/* For a rank's child: joins host `host`'s namespace. Returns 0, or -1 with errno. */
int netns_enter(const launcher_netns_t *ns, int host);

/* Names of the job's objects, from its tag. */
void netns_name(const char *tag, int host, char *name, size_t size);
void netns_bridge_name(const char *tag, char *name, size_t size);
void netns_port_name(const char *tag, int host, char *name, size_t size);

/* --- netns_ip.c --- */

/* Runs `ip -batch -` fed `script`, inside namespace `ns_fd` (-1: symcomm-run's own);
 * keep_going adds -force (go on after a failing line); quiet sends ip's output to
 * /dev/null, else to symcomm-run's stderr. Returns ip's exit status, or -1 when it
 * could not be run (after printing why). */
int netns_run_ip(const char *ip_path, int ns_fd, const char *script, bool keep_going,
                 bool quiet);

/* --- netns_subnet.c --- */

/* A private a.b.c.0/24 (host byte order) that overlaps no IPv4 address or route of
 * this network namespace. Returns 0, or -1 after printing why. */
int netns_pick_subnet(uint32_t *subnet);

/* --- netns_leftovers.c --- */

/* Takes the lock that serializes the setups of jobs on this machine (they pick free
 * subnets and sweep leftovers). Returns its fd (close to release), or -1 after
 * printing why. */
int netns_lock_setups(void);
/* Removes the objects (namespaces, bridge, veths) of every job whose lock file is no
 * longer locked: a job that was killed before it could clean up. */
void netns_remove_dead_jobs(const char *ip_path);
/* Picks a fresh tag and creates and locks its lock file. Returns the fd, or -1 after
 * printing why. */
int netns_lock_job(char *tag);
/* Removes the namespaces, bridge and veths named by `tag`, whatever their number.
 * Returns how many could not be removed (their names printed when loud). */
int netns_remove_tag(const char *ip_path, const char *tag, bool loud);
void netns_unlock_job(const char *tag, int lock_fd);

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
