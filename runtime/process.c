/* Steps that apply to one process, shared by the container's init
 * (container.c) and exec (exec.c): rlimits, scheduler and I/O priority, the
 * pty and the console socket, and the lookup of args[0]. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/util.h"
#include "caps.h"
#include "confine.h"
#include "internal.h"

static const struct
{
  const char *name;
  int res;
} rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

int
rt_proc_plan_rlimits (const struct rt_process *pr, struct rt_rlimit_plan **out,
                      size_t *out_len, struct cm_err **err)
{
  _cleanup_free_ struct rt_rlimit_plan *rl
      = xcalloc (pr->rlimits_len, sizeof *rl);
  for (size_t i = 0; i < pr->rlimits_len; i++)
    {
      const struct rt_rlimit *r = &pr->rlimits[i];
      int res = -1;
      for (size_t j = 0; j < ARRAY_SIZE (rlimit_names); j++)
        if (strcmp (r->type, rlimit_names[j].name) == 0)
          res = rlimit_names[j].res;
      if (res < 0)
        return cm_err_set (err, 0, "process.rlimits[%zu].type: unknown "
                           "\"%s\"", i, r->type);
      if (r->soft > r->hard)
        return cm_err_set (err, 0, "process.rlimits[%zu]: soft %llu is above "
                           "hard %llu for %s", i,
                           (unsigned long long) r->soft,
                           (unsigned long long) r->hard, r->type);
      rl[i] = (struct rt_rlimit_plan){ res, r->soft, r->hard, r->type };
    }
  *out = cm_steal_ptr (&rl);
  *out_len = pr->rlimits_len;
  return 0;
}

int
rt_proc_apply_rlimits (const struct rt_rlimit_plan *rl, size_t n,
                       struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    {
      const struct rt_rlimit_plan *r = &rl[i];
      struct rlimit lim = { .rlim_cur = r->soft, .rlim_max = r->hard };
      if (setrlimit (r->resource, &lim) < 0)
        return cm_err_set (err, errno, "process.rlimits: set %s to %llu:%llu",
                           r->name, (unsigned long long) r->soft,
                           (unsigned long long) r->hard);
    }
  return 0;
}

const char *
rt_proc_rlimit_name (int resource)
{
  for (size_t j = 0; j < ARRAY_SIZE (rlimit_names); j++)
    if (rlimit_names[j].res == resource)
      return rlimit_names[j].name;
  return NULL;
}

int
rt_proc_fit_rlimits (const struct rt_rlimit_plan *rl, size_t n,
                     struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    {
      struct rlimit cur;
      if (getrlimit (rl[i].resource, &cur) < 0)
        return cm_err_set (err, errno, "process.rlimits[%zu]: get %s", i,
                           rl[i].name);
      if (rl[i].hard > cur.rlim_max
          && !rt_caps_effective_has (CAP_SYS_RESOURCE))
        return cm_err_set (err, 0, "process.rlimits[%zu]: %s hard %llu "
                           "is above the container's %llu (raising it needs "
                           "CAP_SYS_RESOURCE)", i, rl[i].name,
                           (unsigned long long) rl[i].hard,
                           (unsigned long long) cur.rlim_max);
    }
  return 0;
}

/* A pty from the current /dev/ptmx, sized by process.consoleSize. */
int
rt_proc_pty (const struct rt_process *pr, int *master, int *slave,
             struct cm_err **err)
{
  _cleanup_fd_ int m = -1, s = -1;
  int unlock = 0;

  m = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0)
    return cm_err_set (err, errno, "process.terminal: open /dev/ptmx");
  if (ioctl (m, TIOCSPTLCK, &unlock) < 0)
    return cm_err_set (err, errno, "process.terminal: unlock pty");
  s = ioctl (m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0)
    return cm_err_set (err, errno, "process.terminal: open pty peer");
  if (pr->console_size_present)
    {
      struct winsize ws = { .ws_row = (unsigned short) pr->console_height,
                            .ws_col = (unsigned short) pr->console_width };
      if (ioctl (s, TIOCSWINSZ, &ws) < 0)
        return cm_err_set (err, errno, "process.consoleSize");
    }
  *master = m, *slave = s;
  m = s = -1;
  return 0;
}

/* The master to the console socket (if >= 0), the slave made stdio and
 * the controlling terminal (the caller leads a session of its own). */
int
rt_proc_pty_attach (int master, int slave, int console_fd,
                    struct cm_err **err)
{
  if (console_fd >= 0
      && cm_send_fd_str (console_fd, master, "/dev/ptmx") < 0)
    return cm_err_set (err, errno, "--console-socket: send pty master");
  if (dup2 (slave, 0) < 0 || dup2 (slave, 1) < 0 || dup2 (slave, 2) < 0)
    return cm_err_set (err, errno, "process.terminal: stdio");
  if (ioctl (0, TIOCSCTTY, 0) < 0)
    return cm_err_set (err, errno, "process.terminal: controlling terminal");
  return 0;
}

/* A pty in the container's devpts: the master goes to the console socket,
 * the slave becomes stdio and the controlling terminal. */
int
rt_proc_terminal (const struct rt_process *pr, int console_fd,
                  struct cm_err **err)
{
  _cleanup_fd_ int master = -1, slave = -1;
  if (rt_proc_pty (pr, &master, &slave, err) < 0)
    return -1;
  if (fchown (slave, pr->user.uid, pr->user.gid) < 0 && errno != EINVAL)
    return cm_err_set (err, errno, "process.terminal: chown pty");
  return rt_proc_pty_attach (master, slave, console_fd, err);
}

static const char *
env_get (char *const *env, size_t n, const char *key)
{
  size_t kl = strlen (key);
  for (size_t i = 0; i < n; i++)
    if (strncmp (env[i], key, kl) == 0 && env[i][kl] == '=')
      return env[i] + kl + 1;
  return NULL;
}

/* Looks up args[0] the way execvp would, but inside the container and
 * before `start`, so a missing binary fails `create` with the message
 * podman maps to exit 127 (and a non-executable one to 126). */
int
rt_proc_resolve_exec (const struct rt_process *pr, char **out,
                      struct cm_err **err)
{
  const char *a0 = pr->args[0];
  const char *path;
  struct stat st;

  if (strchr (a0, '/'))
    {
      if (stat (a0, &st) < 0)
        return cm_err_set (err, 0, "exec: \"%s\": %s", a0,
                           errno == ENOENT ? "no such file or directory"
                                           : strerror (errno));
      if (!S_ISREG (st.st_mode) || access (a0, X_OK) < 0)
        return cm_err_set (err, 0, "exec: \"%s\": permission denied", a0);
      *out = xstrdup (a0);
      return 0;
    }
  path = env_get (pr->env, pr->env_len, "PATH");
  if (path == NULL)
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  {
    _cleanup_free_ char *dup = xstrdup (path);
    char *save = NULL;
    bool denied = false;
    for (char *d = strtok_r (dup, ":", &save); d; d = strtok_r (NULL, ":", &save))
      {
        _cleanup_free_ char *cand = xasprintf ("%s/%s", *d ? d : ".", a0);
        if (stat (cand, &st) < 0 || S_ISDIR (st.st_mode))
          continue;
        if (access (cand, X_OK) < 0)
          {
            denied = true;
            continue;
          }
        *out = cm_steal_ptr (&cand);
        return 0;
      }
    if (denied)
      return cm_err_set (err, 0, "exec: \"%s\": permission denied", a0);
  }
  return cm_err_set (err, 0, "exec: \"%s\": executable file not found in "
                     "$PATH", a0);
}

int
rt_proc_sched (const struct rt_process *pr, struct cm_err **err)
{
  if (pr->io_priority)
    {
      int cls = 0;
      if (strcmp (pr->io_priority->class_, "IOPRIO_CLASS_RT") == 0)
        cls = 1;
      else if (strcmp (pr->io_priority->class_, "IOPRIO_CLASS_BE") == 0)
        cls = 2;
      else if (strcmp (pr->io_priority->class_, "IOPRIO_CLASS_IDLE") == 0)
        cls = 3;
      else
        return cm_err_set (err, 0, "process.ioPriority.class: unknown \"%s\"",
                           pr->io_priority->class_);
      if (syscall (SYS_ioprio_set, 1, 0,
                   (cls << 13) | (pr->io_priority->priority & 0xff)) < 0)
        return cm_err_set (err, errno, "process.ioPriority: set");
    }
  if (pr->scheduler)
    {
      static const struct { const char *n; int v; } pol[] = {
        { "SCHED_OTHER", SCHED_OTHER }, { "SCHED_FIFO", SCHED_FIFO },
        { "SCHED_RR", SCHED_RR },       { "SCHED_BATCH", SCHED_BATCH },
        { "SCHED_IDLE", SCHED_IDLE },   { "SCHED_DEADLINE", 6 },
      };
      struct
      {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
      } a = { .size = 48, .policy = 99 };
      for (size_t i = 0; i < ARRAY_SIZE (pol); i++)
        if (strcmp (pr->scheduler->policy, pol[i].n) == 0)
          a.policy = (uint32_t) pol[i].v;
      if (a.policy == 99)
        return cm_err_set (err, 0, "process.scheduler.policy: unknown \"%s\"",
                           pr->scheduler->policy);
      a.nice = pr->scheduler->nice;
      a.priority = (uint32_t) pr->scheduler->priority;
      a.runtime = pr->scheduler->runtime;
      a.deadline = pr->scheduler->deadline;
      a.period = pr->scheduler->period;
      if (syscall (SYS_sched_setattr, 0, &a, 0) < 0)
        return cm_err_set (err, errno, "process.scheduler: set %s%s",
                           pr->scheduler->policy,
                           errno == EPERM && (a.policy == SCHED_FIFO
                                              || a.policy == SCHED_RR)
                               ? " (with RT group scheduling the cgroup "
                                 "needs a realtime budget: set linux."
                                 "resources.cpu.realtimeRuntime)" : "");
    }
  return 0;
}

int
rt_connect_console (const char *path, struct cm_err **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  int fd;
  if (len >= sizeof sa.sun_path)
    return cm_err_set (err, 0, "--console-socket: path too long");
  memcpy (sa.sun_path, path, len + 1);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return cm_err_set (err, errno, "--console-socket: socket");
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (fd);
      return cm_err_set (err, e, "--console-socket: connect `%s`", path);
    }
  return fd;
}


/* A cwd reached through a magic link (/proc/self/fd/N of an inherited
 * directory, CVE-2024-21626) or a symlink to one is outside the root the
 * process sees, where Landlock does not cover metadata (chmod, chown).  The
 * kernel's getcwd names such a directory "(unreachable)/...". */
int
rt_proc_chdir (const struct rt_process *pr, struct cm_err **err)
{
  char buf[PATH_MAX];
  if (chdir (pr->cwd) < 0)
    return cm_err_set (err, errno, "process.cwd: chdir to `%s`", pr->cwd);
  if (syscall (SYS_getcwd, buf, sizeof buf) < 0)
    return cm_err_set (err, errno, "process.cwd `%s`: getcwd", pr->cwd);
  if (buf[0] != '/')
    return cm_err_set (err, 0, "process.cwd `%s`: outside the container's "
                       "root", pr->cwd);
  return 0;
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *) a - *(const int *) b;
}

void
rt_close_fds_except (int from, int *keep, size_t n)
{
  qsort (keep, n, sizeof keep[0], cmp_int);
  for (size_t i = 0; i < n; i++)
    {
      if (keep[i] < from)
        continue;
      if (keep[i] > from)
        syscall (SYS_close_range, from, keep[i] - 1, 0);
      from = keep[i] + 1;
    }
  syscall (SYS_close_range, from, ~0U, 0);
}

int
rt_proc_confine (const struct rt_confine *cf,
                 const struct rt_rlimit_plan *rl, size_t n,
                 const struct rt_caps_plan *caps, const struct rt_process *pr,
                 bool keep_user, struct cm_err **err)
{
  if ((cf && rt_confine_child_landlock (cf, err) < 0)
      || rt_proc_apply_rlimits (rl, n, err) < 0)
    return -1;
  if (!keep_user
      && rt_caps_child_apply (caps, &pr->user, pr->no_new_privileges, err) < 0)
    return -1;
  umask (pr->user.umask_present ? pr->user.umask & 0777 : 022);
  return 0;
}
