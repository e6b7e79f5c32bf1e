/* The credentials of the container's threads, kept between their calls
 * (docs/nsless.md "Whose rights").  A root runtime's supervisor acts in
 * each calling thread's credentials (vroot-cred.c), which it reads from
 * /proc/<tid>/status; the kernel formats the whole file for each read,
 * ≈ 10 µs, more than the rest of a serviced stat.  So they are read once
 * per thread and kept, on two facts of the kernel:
 *
 * - A thread's credentials change only by its own system calls: the
 *   set*id family, setgroups, capset (capset on another task is refused
 *   since Linux 2.6.25), unshare and setns of a user namespace, and exec,
 *   which recomputes them.  prctl's PR_SET_KEEPCAPS, PR_SET_SECUREBITS,
 *   PR_CAPBSET_DROP and PR_CAP_AMBIENT change only what a later setuid or
 *   exec does (keep-caps, securebits, bounding and ambient sets), none of
 *   which is read here.  Those calls are trapped (vr_cred_syscalls) and
 *   mark the thread's credentials stale before the kernel runs them: the
 *   thread is blocked in that call, so its next call, after the change,
 *   reads them again.  exec marks the whole thread group's.  The umask,
 *   read from the same file for the calls that create, is kept with them:
 *   umask(2) is trapped too and marks every kept thread's (threads, and
 *   processes cloned with CLONE_FS, share one).
 *
 * - A tid is reused once its thread is gone: each thread kept holds a
 *   pidfd for that very thread (PIDFD_THREAD, Linux 6.9), made before its
 *   status is read and checked after, and sent signal 0 at each lookup.
 *   The caller is blocked in its notification, so alive and holding its
 *   tid; a pidfd whose thread still exists then names that same thread.
 *   ≈ 0.6–0.7 µs here under load, as a poll of the pidfd (the listener
 *   loop makes no poll).
 *
 * The one exception is an exec by a thread other than the leader: it
 * takes the leader's tid (de_thread's exchange_tids), so the leader's
 * pidfd then names the exec'd thread.  Until that exec is known done (the
 * exec'ing thread's own pidfd names no task: the old leader, which got its
 * pid, has been released) or failed (a call from the exec'ing thread's own
 * tid), the leader's tid is read at every call, never kept.
 *
 * Bounded: VR_THREADS threads (their pidfds), fewer where the fd limit
 * is low (an eighth of it: the handlers' own fds come first), the least
 * recently used forgotten first; VR_EXECS execs pending, beyond which nothing is kept
 * any more (read at every call, as on a kernel without PIDFD_THREAD).
 * Only the main loop calls this (as vroot-cred.c's switch). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-thread.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define VR_THREADS 128
#define VR_EXECS 8

const int vr_cred_syscalls[] = {
  SYS_setuid, SYS_setgid, SYS_setreuid, SYS_setregid, SYS_setresuid,
  SYS_setresgid, SYS_setfsuid, SYS_setfsgid, SYS_setgroups, SYS_capset,
  SYS_unshare, SYS_setns, SYS_umask, -1,
};

const struct rt_notify_deny vr_denied_calls[] = {
  { SYS_clone, CLONE_NEWUSER, EPERM },
  { SYS_unshare, CLONE_NEWUSER, EPERM },
  { SYS_clone3, 0, ENOSYS },    /* libc falls back to clone */
  { SYS_setns, 0, EPERM },      /* no namespace of the container to join */
};
const size_t vr_denied_calls_len = ARRAY_SIZE (vr_denied_calls);

struct thread
{
  pid_t tid;                    /* 0: a free slot */
  int pidfd;
  bool fresh;                   /* no credential call since the read */
  uint64_t used;
  struct vr_status st;
};

static struct thread th[VR_THREADS];
static struct
{
  pid_t tgid, tid;
  int pidfd;
} execs[VR_EXECS];
static size_t nexecs;
static uint64_t tick;
static int keep;                /* 0: not probed, 1: kept, -1: never kept */
static size_t nth = VR_THREADS; /* slots used: th[0..nth) */
static struct vr_status scratch;

bool
vr_cred_syscall (int nr)
{
  for (size_t i = 0; vr_cred_syscalls[i] >= 0; i++)
    if (vr_cred_syscalls[i] == nr)
      return true;
  return false;
}

static int
pidfd_thread (pid_t tid)
{
  return (int) syscall (SYS_pidfd_open, tid, PIDFD_THREAD);
}

/* Once: a kernel without PIDFD_THREAD keeps nothing. */
static void
probe (void)
{
  struct rlimit rl;
  if (keep != 0)
    return;
  int fd = pidfd_thread ((pid_t) syscall (SYS_gettid));
  keep = fd >= 0 ? 1 : -1;
  if (fd >= 0)
    close (fd);
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 8 < nth)
    nth = (size_t) (rl.rlim_cur / 8);
  if (nth == 0)
    keep = -1;
}

/* Signal 0 to the pidfd's thread: ESRCH once it is released (its tid
 * free for reuse), else it exists (EPERM: it exists, and the credentials
 * the supervisor's thread holds may not signal it).  1: exists, 0: gone,
 * -1: not known (a kept thread is read again; a pending exec stays). */
static int
exists (int pidfd)
{
  if (syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0
      || errno == EPERM)
    return 1;
  return errno == ESRCH ? 0 : -1;
}

static bool
gone (int pidfd)
{
  return exists (pidfd) != 1;
}

static void
drop (struct thread *t)
{
  close (t->pidfd);
  *t = (struct thread) { 0 };
}

static void
keep_none (void)
{
  for (size_t i = 0; i < nth; i++)
    if (th[i].tid)
      drop (&th[i]);
  for (size_t i = 0; i < nexecs; i++)
    close (execs[i].pidfd);
  nexecs = 0;
  keep = -1;
}

static void
exec_done (size_t i)
{
  close (execs[i].pidfd);
  execs[i] = execs[--nexecs];
}

/* A non-leader's exec of |tgid| may not have taken the leader's tid yet. */
static bool
exec_pending (pid_t tgid)
{
  bool r = false;
  for (size_t i = nexecs; i-- > 0;)
    if (execs[i].tgid == tgid)
      {
        if (exists (execs[i].pidfd) == 0)
          exec_done (i);
        else
          r = true;
      }
  return r;
}

/* A call from the exec'ing thread's own tid, its pidfd alive: the exec
 * failed (had it passed, the tid would be the leader's). */
static void
exec_failed (pid_t tid)
{
  for (size_t i = nexecs; i-- > 0;)
    if (execs[i].tid == tid && !gone (execs[i].pidfd))
      exec_done (i);
}

static struct thread *
find (pid_t tid)
{
  for (size_t i = 0; i < nth; i++)
    if (th[i].tid == tid)
      return &th[i];
  return NULL;
}

/* A slot for |tid| with a pidfd opened before its status is read (the
 * read is then checked to be of that thread); NULL: not kept. */
static struct thread *
take (pid_t tid)
{
  struct thread *t = &th[0];
  for (size_t i = 0; i < nth && t->tid; i++)
    if (!th[i].tid || th[i].used < t->used)
      t = &th[i];
  if (t->tid)
    drop (t);
  if ((t->pidfd = pidfd_thread (tid)) < 0)
    return NULL;
  t->tid = tid;
  return t;
}

/* /proc/<tid>/status.  The last file read stays open and is read again
 * from offset 0 (the kernel writes it anew each time); it holds the
 * thread it was opened for, so a reused tid reads as an error. */
static ssize_t
read_status (pid_t tid, char *buf, size_t max)
{
  static int fd = -1;
  static pid_t fd_tid;
  char path[64];
  ssize_t n;
  if (fd >= 0 && fd_tid == tid && (n = pread (fd, buf, max, 0)) > 0)
    return n;
  if (fd >= 0)
    close (fd);
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  fd_tid = tid;
  return fd < 0 ? -1 : pread (fd, buf, max, 0);
}

static const char *
field (const char *buf, const char *key)
{
  const char *p = strstr (buf, key);
  return p ? p + strlen (key) : NULL;
}

static int
load (pid_t tid, struct vr_status *s)
{
  char buf[4096];
  unsigned long long eff, prm;
  long tgid;
  ssize_t n = read_status (tid, buf, sizeof buf - 1);
  const char *pt, *pu, *pg, *pgr, *pe, *pp, *pm;
  if (n <= 0)
    return -ESRCH;
  buf[n] = '\0';
  if (!(pt = field (buf, "\nTgid:")) || !(pu = field (buf, "\nUid:"))
      || !(pg = field (buf, "\nGid:")) || !(pgr = field (buf, "\nGroups:"))
      || !(pe = field (buf, "\nCapEff:")) || !(pp = field (buf, "\nCapPrm:"))
      || sscanf (pt, "%ld", &tgid) != 1
      || sscanf (pu, "%lu %lu %lu %lu", &s->uid[0], &s->uid[1], &s->uid[2],
                 &s->uid[3]) != 4
      || sscanf (pg, "%lu %lu %lu %lu", &s->gid[0], &s->gid[1], &s->gid[2],
                 &s->gid[3]) != 4
      || sscanf (pe, "%llx", &eff) != 1 || sscanf (pp, "%llx", &prm) != 1)
    return -ESRCH;
  s->tgid = (pid_t) tgid;
  if (!(pm = field (buf, "\nUmask:")) || sscanf (pm, "%lo", &s->umask) != 1)
    s->umask = -1;
  s->eff = eff, s->prm = prm;
  s->ngroups = 0;
  for (char *e; *pgr != '\n' && *pgr; pgr = e)
    {
      unsigned long x = strtoul (pgr, &e, 10);
      if (e == pgr)
        break;
      if (s->ngroups == VR_NGROUPS)
        return -EPERM;
      s->groups[s->ngroups++] = (gid_t) x;
    }
  return 0;
}

int
vr_thread_status (pid_t tid, const struct vr_status **out)
{
  struct thread *t;
  int r;
  probe ();
  *out = &scratch;
  if (keep < 0)
    return load (tid, &scratch);
  if (nexecs)
    exec_failed (tid);
  if ((t = find (tid)) && gone (t->pidfd))
    drop (t), t = NULL;
  if (t && t->fresh && !(tid == t->st.tgid && exec_pending (tid)))
    {
      t->used = ++tick;
      *out = &t->st;
      return 0;
    }
  if (!t)
    t = take (tid);
  if ((r = load (tid, &scratch)) < 0 || !t)
    return r;
  /* Read while the pidfd's thread held the tid: that thread's. */
  if (gone (t->pidfd))
    {
      drop (t);
      return r;
    }
  t->st = scratch;
  t->fresh = !(tid == scratch.tgid && exec_pending (tid));
  t->used = ++tick;
  *out = &t->st;
  return 0;
}

pid_t
vr_thread_tgid (pid_t tid)
{
  struct thread *t = find (tid);
  return t && exists (t->pidfd) == 1 ? t->st.tgid : -1;
}

void
vr_thread_changes (pid_t tid, int nr)
{
  struct thread *t = find (tid);
  if (nr == SYS_umask)
    for (size_t i = 0; i < VR_THREADS; i++)
      th[i].fresh = false;
  else if (t)
    t->fresh = false;
}

long
vr_thread_umask (pid_t tid)
{
  struct thread *t = find (tid);
  if (!t || !t->fresh || exists (t->pidfd) != 1
      || (tid == t->st.tgid && exec_pending (tid)))
    return -1;
  return t->st.umask;
}

void
vr_thread_exec (pid_t tid, pid_t tgid)
{
  int fd;
  for (size_t i = 0; i < VR_THREADS; i++)
    if (th[i].tid && th[i].st.tgid == tgid)
      th[i].fresh = false;
  if (tid == tgid || keep <= 0)
    return;
  if (nexecs == VR_EXECS || (fd = pidfd_thread (tid)) < 0)
    {
      keep_none ();             /* cannot tell when the tid moves */
      return;
    }
  execs[nexecs++] = (typeof (execs[0])) { tgid, tid, fd };
}
