/* What a --netns job makes is visible to the whole machine (namespace names in
 * /run/netns, the bridge and veth ports in the launcher's namespace), and a
 * symcomm-run killed by SIGKILL cannot remove it. So each job holds an flock on
 * NETNS_LOCK_DIR/<tag>.lock while its objects exist: the kernel drops the lock when
 * the process dies however it dies, and the next job's setup removes the objects of
 * every tag whose lock it can take. A pid in a name could not tell a dead job from
 * a live one in another PID namespace, or from a reused pid; the lock can. */
#include "launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define NETNS_RUN_DIR "/run/netns"
#define SETUP_LOCK NETNS_LOCK_DIR "/setup.lock"
#define LOCK_SUFFIX ".lock"

typedef struct {
  char *text;
  size_t len;
  size_t cap;
  bool failed;
} script_t;

static void script_add(script_t *s, const char *verb, const char *name) {
  size_t need = strlen(verb) + strlen(name) + 3;
  if (s->failed)
    return;
  if (s->len + need > s->cap) {
    size_t cap = (s->cap ? s->cap * 2 : 1024) + need;
    char *grown = realloc(s->text, cap);
    if (grown == NULL) {
      s->failed = true;
      return;
    }
    s->text = grown;
    s->cap = cap;
  }
  s->len += (size_t)snprintf(s->text + s->len, s->cap - s->len, "%s %s\n", verb, name);
}

static bool is_job_namespace(const char *name, const char *tag) {
  char prefix[NETNS_NAME_MAX];
  snprintf(prefix, sizeof(prefix), NETNS_NAME_PREFIX "%s-h", tag);
  return strncmp(name, prefix, strlen(prefix)) == 0;
}

static bool is_job_interface(const char *name, const char *tag) {
  char bridge[IF_NAMESIZE], port_prefix[IF_NAMESIZE];
  netns_bridge_name(tag, bridge, sizeof(bridge));
  snprintf(port_prefix, sizeof(port_prefix), "sc%s-", tag);
  return strcmp(name, bridge) == 0 || strncmp(name, port_prefix, strlen(port_prefix)) == 0;
}

/* Adds "verb name" for each of the tag's objects; the ports before the bridge, the
 * bridge before the namespaces. Returns how many were added. */
static int list_tag_objects(const char *tag, script_t *script) {
  int found = 0;
  struct if_nameindex *ifs = if_nameindex();
  for (int pass = 0; pass < 2 && ifs != NULL; pass++) {
    char bridge[IF_NAMESIZE];
    netns_bridge_name(tag, bridge, sizeof(bridge));
    for (struct if_nameindex *i = ifs; i->if_index != 0; i++) {
      bool is_bridge = strcmp(i->if_name, bridge) == 0;
      if (is_job_interface(i->if_name, tag) && is_bridge == (pass == 1)) {
        script_add(script, "link del", i->if_name);
        found++;
      }
    }
  }
  if (ifs != NULL)
    if_freenameindex(ifs);
  DIR *dir = opendir(NETNS_RUN_DIR);
  for (struct dirent *e; dir != NULL && (e = readdir(dir)) != NULL;) {
    if (is_job_namespace(e->d_name, tag)) {
      script_add(script, "netns del", e->d_name);
      found++;
    }
  }
  if (dir != NULL)
    closedir(dir);
  return found;
}

int netns_remove_tag(const char *ip_path, const char *tag, bool loud) {
  script_t script = {0};
  if (list_tag_objects(tag, &script) > 0 && !script.failed)
    netns_run_ip(ip_path, -1, script.text, true, true);
  free(script.text);
  script = (script_t){0};
  int left = list_tag_objects(tag, &script);
  if (left > 0 && loud) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: %d of the job's network objects could not be "
            "removed; as root:\n", left);
    for (char *line = script.failed ? NULL : script.text; line != NULL && *line != '\0';) {
      char *end = strchr(line, '\n');
      fprintf(stderr, "  ip %.*s\n", (int)(end ? end - line : (long)strlen(line)), line);
      line = end ? end + 1 : NULL;
    }
  }
  free(script.text);
  return left;
}

int netns_lock_setups(void) {
  if (mkdir(NETNS_LOCK_DIR, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: cannot create %s: %s\n", NETNS_LOCK_DIR,
            strerror(errno));
    return -1;
  }
  int fd = open(SETUP_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: cannot open %s: %s\n", SETUP_LOCK, strerror(errno));
    return -1;
  }
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      fprintf(stderr, LAUNCHER_NAME ": --netns: flock(%s): %s\n", SETUP_LOCK, strerror(errno));
      close(fd);
      return -1;
    }
  }
  return fd;
}

/* "<tag>.lock" with a tag of NETNS_TAG_CHARS hex digits; tag gets the tag. */
static bool parse_lock_name(const char *name, char *tag) {
  size_t len = strlen(name);
  if (len != NETNS_TAG_CHARS + strlen(LOCK_SUFFIX) || strcmp(name + NETNS_TAG_CHARS, LOCK_SUFFIX) != 0)
    return false;
  for (int i = 0; i < NETNS_TAG_CHARS; i++)
    if (!strchr("0123456789abcdef", name[i]))
      return false;
  memcpy(tag, name, NETNS_TAG_CHARS);
  tag[NETNS_TAG_CHARS] = '\0';
  return true;
}

void netns_remove_dead_jobs(const char *ip_path) {
  DIR *dir = opendir(NETNS_LOCK_DIR);
  if (dir == NULL)
    return;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    char tag[NETNS_TAG_CHARS + 1];
    if (!parse_lock_name(e->d_name, tag))
      continue;
    int fd = openat(dirfd(dir), e->d_name, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) { /* its job is gone */
      if (netns_remove_tag(ip_path, tag, false) == 0)
        unlinkat(dirfd(dir), e->d_name, 0);
    }
    close(fd);
  }
  closedir(dir);
}

int netns_lock_job(char *tag) {
  for (int attempt = 0; attempt < 16; attempt++) {
    unsigned char bytes[NETNS_TAG_CHARS / 2];
    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
      fprintf(stderr, LAUNCHER_NAME ": --netns: getrandom: %s\n", strerror(errno));
      return -1;
    }
    for (size_t i = 0; i < sizeof(bytes); i++)
      snprintf(tag + 2 * i, 3, "%02x", bytes[i]);
    char path[sizeof(NETNS_LOCK_DIR) + NETNS_TAG_CHARS + sizeof(LOCK_SUFFIX) + 1];
    snprintf(path, sizeof(path), NETNS_LOCK_DIR "/%s" LOCK_SUFFIX, tag);
    /* Setups are serialized, so no sweep can take this lock between open and flock. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST)
      continue;
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
      fprintf(stderr, LAUNCHER_NAME ": --netns: cannot make the lock %s: %s\n", path,
              strerror(errno));
      if (fd >= 0) {
        unlink(path);
        close(fd);
      }
      return -1;
    }
    dprintf(fd, "symcomm-run pid %d\n", (int)getpid()); /* for a person looking */
    return fd;
  }
  fprintf(stderr, LAUNCHER_NAME ": --netns: no free job tag in %s\n", NETNS_LOCK_DIR);
  return -1;
}

void netns_unlock_job(const char *tag, int lock_fd) {
  char path[sizeof(NETNS_LOCK_DIR) + NETNS_TAG_CHARS + sizeof(LOCK_SUFFIX) + 1];
  snprintf(path, sizeof(path), NETNS_LOCK_DIR "/%s" LOCK_SUFFIX, tag);
  unlink(path);
  close(lock_fd);
}
