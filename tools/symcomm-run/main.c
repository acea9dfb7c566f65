/* symcomm-run: starts N local ranks of a program, grouped into simulated hosts, and
 * supervises them. This file: the command line, the order of start-up, the exit
 * status. See launcher.h for the other pieces. */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Far more than one machine can usefully run; a typo such as -n 10000000 should be an
 * error, not a fork storm. */
#define LAUNCHER_MAX_RANKS 4096
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

#define USAGE_LINE \
  "usage: " LAUNCHER_NAME " -n N [--hosts H [--netns]] [--timeout S] [--tag-output] [--] PROGRAM [ARGS...]\n"

static const char usage_text[] =
    USAGE_LINE
    "\n"
    "Starts N ranks of PROGRAM on this machine, grouped into H simulated hosts, and\n"
    "supervises them: if a rank fails, the others are stopped.\n"
    "\n"
    "options:\n"
    "  -n N            number of ranks to start (1.." STRINGIFY(LAUNCHER_MAX_RANKS) ")\n"
    "  --hosts H       split the ranks into H simulated hosts (1..N) of contiguous\n"
    "                  ranks: host h holds ranks [h*N/H, (h+1)*N/H). Without it, all\n"
    "                  ranks are on this one real host.\n"
    "  --netns         with --hosts: each simulated host H gets its own network\n"
    "                  namespace (" NETNS_NAME_PREFIX "TAG-hH, TAG random per job) and address\n"
    "                  a.b.c.(2+H) on its interface " NETNS_RANK_IFNAME_PREFIX "H, one end of a veth pair\n"
    "                  whose other end is a port of a bridge (a.b.c.1) in symcomm-run's\n"
    "                  namespace; a.b.c.0/24 is private and overlaps no address or\n"
    "                  route of this machine; up to " STRINGIFY(NETNS_MAX_HOSTS) " hosts. Traffic between\n"
    "                  hosts, the root's included, then crosses a real TCP/IP stack,\n"
    "                  and `ip link set " NETNS_RANK_IFNAME_PREFIX "H down` inside one is a network failure.\n"
    "                  All of it is removed when symcomm-run exits (after a SIGKILL of\n"
    "                  symcomm-run, by the next --netns job). Needs root (CAP_NET_ADMIN\n"
    "                  and CAP_SYS_ADMIN) and ip(8) from iproute2: without them\n"
    "                  symcomm-run exits 2 before starting anything.\n"
    "  --timeout S     stop the job if it still runs after S seconds (decimals allowed);\n"
    "                  symcomm-run then exits 124\n"
    "  --tag-output    prefix every line a rank writes to stdout or stderr with \"[rank] \",\n"
    "                  keeping lines whole; otherwise ranks write to them directly\n"
    "  -h, --help      print this help and exit\n"
    "\n"
    "environment of each rank (everything else is inherited unchanged):\n"
    "  SYMCOMM_RANK          rank, 0..N-1\n"
    "  SYMCOMM_WORLD_SIZE    N\n"
    "  SYMCOMM_LOCAL_RANK    rank within its host\n"
    "  SYMCOMM_LOCAL_SIZE    number of ranks on its host\n"
    "  SYMCOMM_HOSTID        index of its simulated host (only with --hosts)\n"
    "  SYMCOMM_ADDR          127.0.0.1:PORT, the job's root (bootstrap) address; with\n"
    "                        --netns the bridge's address a.b.c.1:PORT\n"
    "  SYMCOMM_SOCKET_IFNAME with --hosts, unless already set: the interface the library\n"
    "                        listens on: lo, or with --netns the host's " NETNS_RANK_IFNAME_PREFIX "H\n"
    "  SYMCOMM_ROOT_FD       rank 0 only: a descriptor already listening on that port,\n"
    "                        on which rank 0 serves the root\n"
    "  SYMCOMM_JOB_KEY       a random secret of this job (a new one for every job,\n"
    "                        whatever the environment held): it keeps jobs on one\n"
    "                        machine apart and strangers out of the job\n"
    "Rank 0 reads symcomm-run's stdin unless it is a terminal; the other ranks read\n"
    "/dev/null.\n"
    "\n"
    "supervision:\n"
    "  Each rank runs in its own process group and dies with symcomm-run. When a rank\n"
    "  exits non-zero or is killed, the others get SIGTERM, then SIGKILL after 3 s, and\n"
    "  symcomm-run exits with that rank's status (128+signal if it was killed).\n"
    "  SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to every\n"
    "  rank; the first four also stop the job (exit 128+signal). A second SIGINT kills\n"
    "  the ranks at once.\n"
    "\n"
    "exit status: 0 if every rank exited 0; the first failing rank's status; 124 on\n"
    "timeout; 127 if PROGRAM cannot be executed; 2 for a usage error, or for --netns\n"
    "without root or ip(8); 1 if setting up --netns (or another step of symcomm-run)\n"
    "failed.\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, LAUNCHER_NAME ": ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n" USAGE_LINE "(" LAUNCHER_NAME " --help describes the options)\n");
  return LAUNCHER_EXIT_USAGE;
}

static bool parse_int(const char *text, long min, long max, int *out) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
    return false;
  *out = (int)value;
  return true;
}

static bool parse_seconds(const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value <= 0 ||
      value > 1e9)
    return false;
  *out = value;
  return true;
}

/* Returns -1 when the options are good, else the exit status (usage error, --help). */
static int parse_options(int argc, char **argv, launcher_options_t *opts) {
  enum { OPT_HOSTS = 256, OPT_TIMEOUT, OPT_TAG_OUTPUT, OPT_NETNS };
  static const struct option long_options[] = {
      {"hosts", required_argument, NULL, OPT_HOSTS},
      {"timeout", required_argument, NULL, OPT_TIMEOUT},
      {"tag-output", no_argument, NULL, OPT_TAG_OUTPUT},
      {"netns", no_argument, NULL, OPT_NETNS},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *hosts_text = NULL;
  bool have_n = false;
  memset(opts, 0, sizeof(*opts));
  opterr = 0; /* our messages, and the usage after them */
  /* '+': stop at the program, so that its own options are left alone. */
  for (;;) {
    int opt = getopt_long(argc, argv, "+:hn:", long_options, NULL);
    if (opt == -1)
      break;
    switch (opt) {
    case 'h':
      fputs(usage_text, stdout);
      return 0;
    case 'n':
      if (!parse_int(optarg, 1, LAUNCHER_MAX_RANKS, &opts->world_size))
        return usage_error("-n wants a number of ranks from 1 to " STRINGIFY(LAUNCHER_MAX_RANKS) ", not '%s'", optarg);
      have_n = true;
      break;
    case OPT_HOSTS:
      hosts_text = optarg;
      break;
    case OPT_TIMEOUT:
      if (!parse_seconds(optarg, &opts->timeout_s))
        return usage_error("--timeout wants a positive number of seconds, not '%s'", optarg);
      break;
    case OPT_TAG_OUTPUT:
      opts->tag_output = true;
      break;
    case OPT_NETNS:
      opts->netns = true;
      break;
    case ':':
      return usage_error("option '%s' needs a value", argv[optind - 1]);
    default:
      return usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (!have_n)
    return usage_error("%s", "-n N (the number of ranks) is required");
  if (hosts_text != NULL && !parse_int(hosts_text, 1, opts->world_size, &opts->num_hosts)) {
    char why[64];
    snprintf(why, sizeof(why), "--hosts wants 1..%d (at most -n), not '%%s'", opts->world_size);
    return usage_error(why, hosts_text);
  }
  if (opts->netns && opts->num_hosts == 0)
    return usage_error("%s", "--netns needs --hosts H (the namespaces are the simulated hosts)");
  if (opts->netns && opts->num_hosts > NETNS_MAX_HOSTS)
    return usage_error("--netns supports up to " STRINGIFY(NETNS_MAX_HOSTS)
                       " hosts (one /24), not %s", hosts_text);
  if (optind >= argc)
    return usage_error("%s", "no program to run");
  opts->argv = argv + optind;
  return -1;
}

/* With fd 0, 1 or 2 closed, a pipe or socket could land on it and be clobbered by the
 * dup2s in the children. */
static int ensure_std_fds_open(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
      continue;
    /* The lowest free descriptor: this one, as the lower ones are open by now. */
    if (open("/dev/null", O_RDWR) < 0)
      return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  launcher_options_t opts;
  int status = parse_options(argc, argv, &opts);
  if (status >= 0)
    return status;

  launcher_signals_t sigs = {.signal_fd = -1};
  rank_proc_t *procs = NULL;
  launcher_job_t job = {.root_fd = -1, .root_host = "127.0.0.1"};
  launcher_netns_t netns = {.lock_fd = -1};
  int started = 0;
  status = LAUNCHER_EXIT_INTERNAL;
  if (ensure_std_fds_open() != 0) {
    fprintf(stderr, LAUNCHER_NAME ": cannot open /dev/null: %s\n", strerror(errno));
    goto cleanup;
  }
  /* Signals first: one that arrives while ranks are starting waits in the signalfd. */
  if (signals_setup(&sigs) != 0)
    goto cleanup;
  if (job_key_make(job.key) != 0)
    goto cleanup;
  if (opts.netns) {
    status = netns_setup(&netns, opts.num_hosts);
    if (status != 0)
      goto cleanup;
    status = LAUNCHER_EXIT_INTERNAL;
    job.netns = &netns;
    /* Every namespace reaches the bridge, so the root traffic crosses the veths too. */
    netns_address(&netns, -1, job.root_host, sizeof(job.root_host));
  }
  job.root_fd = root_socket_open(job.root_host, &job.root_port);
  if (job.root_fd < 0)
    goto cleanup;
  procs = calloc((size_t)opts.world_size, sizeof(*procs));
  if (procs == NULL) {
    fprintf(stderr, LAUNCHER_NAME ": out of memory\n");
    goto cleanup;
  }
  for (int r = 0; r < opts.world_size; r++) {
    procs[r].out.fd = -1;
    procs[r].err.fd = -1;
  }
  for (; started < opts.world_size; started++)
    if (spawn_rank(&opts, &job, started, &sigs.saved_mask, &procs[started]) != 0)
      break;
  /* Rank 0 has its own copy; ours would only keep the port open after rank 0 is gone. */
  close(job.root_fd);
  job.root_fd = -1;
  status = supervise(&opts, procs, started, &sigs);

cleanup:
  if (job.root_fd >= 0)
    close(job.root_fd);
  free(procs);
  /* After every rank is reaped: nothing of the job uses the namespaces any more. */
  netns_teardown(&netns);
  signals_close(&sigs);
  return status;
}
