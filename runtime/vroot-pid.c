/* Calls that name a process by pid (docs/nsless.md "Capabilities and the
 * host's namespaces").  Namespace-less mode makes no pid namespace even
 * where config.json lists one: a pid then reaches every host process,
 * and the kernel's own rule for the calls here is only "the same owner"
 * (sched_setaffinity, sched_setscheduler/param/attr, setpriority,
 * ioprio_set) or "the same uid and gid" (prlimit64), with no capability.
 * Landlock does not cover them (its signal scope covers kill, tkill,
 * tgkill, rt_(tg)sigqueueinfo and pidfd_send_signal; its ptrace rule
 * kcmp, get_robust_list, process_madvise, process_mrelease,
 * migrate_pages, move_pages and pidfd_getfd).
 *
 * So, with `pid` listed, the trap filter sends these calls to the
 * supervisor when they name another process (pid 0, the caller itself,
 * never traps: those stay free); the supervisor lets the kernel do the
 * call (CONTINUE) when the pid, or tid, is a process of the container,
 * and answers ESRCH otherwise, which is what the container's own pid
 * namespace would show.  setpriority and ioprio_set on a process group
 * or a uid (whose members are host processes) stay refused (EPERM) by
 * the filter itself; getpriority and ioprio_get on those are left.
 *
 * What "of the container" means: the parent chain reaches the init (a
 * subreaper: orphans stay under it), the exec server and its handlers
 * excepted (the runtime's own: vroot-xs.h), as the supervisor's /proc
 * view decides.  Each step is checked with a pidfd opened first, so a
 * number read from /proc that a reused pid gave a host process is never
 * taken for the container's (runtime/proc-tree.c).  The kernel resolves
 * the pid again when it continues the call: a container process that
 * exits and whose pid the host reuses inside that window (microseconds,
 * after a full pid wrap) is the residue CONTINUE leaves. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-pid.h"
#include "vroot-run.h"
#include "vroot-sup.h"
#include "vroot-xs.h"

/* IOPRIO_WHO_PROCESS is 1 (linux/ioprio.h); PRIO_PROCESS is 0. */
#define IOPRIO_WHO_PROCESS 1
#define TRAP(call, a) { SYS_##call, a, 0, 0 }
#define NOT_KIND(call, v) { SYS_##call, 0, v, EPERM }

/* In order: the first entry that matches decides (notify-filter.c). */
static const struct rt_notify_deny_ne pid_calls[] = {
  TRAP (sched_setaffinity, 0), TRAP (sched_getaffinity, 0),
  TRAP (sched_setscheduler, 0), TRAP (sched_getscheduler, 0),
  TRAP (sched_setparam, 0), TRAP (sched_getparam, 0),
  TRAP (sched_setattr, 0), TRAP (sched_getattr, 0),
  TRAP (sched_rr_get_interval, 0), TRAP (prlimit64, 0),
  TRAP (pidfd_open, 0),
  NOT_KIND (setpriority, PRIO_PROCESS), TRAP (setpriority, 1),
  TRAP (getpriority, 1),
  NOT_KIND (ioprio_set, IOPRIO_WHO_PROCESS), TRAP (ioprio_set, 1),
  TRAP (ioprio_get, 1),
};

const struct rt_notify_deny_ne *
vr_deny_ne_list (const struct rt_config *c, size_t *len)
{
  *len = 0;
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (strcmp (c->namespaces[i].type, "pid") == 0)
      *len = ARRAY_SIZE (pid_calls);
  return pid_calls;
}

bool
vr_pid_call (int nr)
{
  for (size_t i = 0; i < ARRAY_SIZE (pid_calls); i++)
    if (pid_calls[i].nr == nr && pid_calls[i].errno_ == 0)
      return true;
  return false;
}

/* The pid a trapped call names, or 0 when it names no process (a
 * getpriority/ioprio_get of a group or a uid). */
static pid_t
target (const struct seccomp_data *d)
{
  switch (d->nr)
    {
    case SYS_setpriority: case SYS_getpriority:
      return d->args[0] == PRIO_PROCESS ? (pid_t) d->args[1] : 0;
    case SYS_ioprio_set: case SYS_ioprio_get:
      return d->args[0] == IOPRIO_WHO_PROCESS ? (pid_t) d->args[1] : 0;
    default:
      return (pid_t) d->args[0];
    }
}

/* The process of |fd| has not been reaped (EPERM: it exists, the
 * supervisor's domain may not signal it). */
static bool
alive (int fd)
{
  return syscall (SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0
         || errno == EPERM;
}

/* A pidfd of the process whose pid |of|'s status field |key| names, when
 * that still holds once the pidfd is open and |of_fd| (-1: none) is
 * alive; -1 otherwise.  *pid: the number. */
static int
pinned (pid_t of, int of_fd, const char *key, pid_t *pid)
{
  *pid = (pid_t) vr_status_field (of, key, 10);
  if (*pid <= 0)
    return -1;
  int fd = (int) syscall (SYS_pidfd_open, *pid, 0);
  if (fd < 0)
    return -1;
  if (vr_status_field (of, key, 10) != *pid || !alive (fd)
      || (of_fd >= 0 && !alive (of_fd)))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* Whether |tid| is a thread of a process of the container whose init is
 * |init| (see the top of this file). */
static bool
of_container (pid_t init, pid_t tid)
{
  pid_t cur, below = 0, up;
  int fd = pinned (tid, -1, "Tgid:", &cur);
  for (int i = 0; fd >= 0 && i < 64; i++)
    {
      if (cur == init)
        {
          close (fd);
          return i == 0 || i > 2 || !vr_xs_is_server (below);
        }
      int pfd = cur > 1 ? pinned (cur, fd, "PPid:", &up) : -1;
      close (fd);
      fd = pfd;
      below = cur;
      cur = up;
    }
  if (fd >= 0)
    close (fd);
  return false;
}

int
vr_pid_check (pid_t init, pid_t tid, pid_t tgid, const struct seccomp_data *d)
{
  pid_t p = target (d);
  /* 0 and negative numbers name no other process: the kernel answers. */
  if (p <= 0 || p == tid || p == tgid || of_container (init, p))
    return 0;
  return -ESRCH;
}
