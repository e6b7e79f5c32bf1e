/* Stopping a process for capture: every thread PTRACE_SEIZEd and
 * PTRACE_INTERRUPTed (a thread created meanwhile is caught by listing
 * /proc/PID/task again until the list is stable), and let go again.  In
 * a frozen tree (criu_dump_opts.freeze) the threads are seized and
 * interrupted without waiting: they stop once thawed (cl_seize_finish). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static bool
seized (const struct cl_dump *d, pid_t tid)
{
  for (size_t i = 0; i < d->ntids; i++)
    if (d->tids[i] == tid)
      return true;
  return false;
}

/* Until thread |i| is in its ptrace stop; its registers as seized. */
static int
stop_wait (struct cl_dump *d, size_t i, struct cm_err **err)
{
  pid_t tid = d->tids[i];
  int st;
  for (;;)
    {
      if (waitpid (tid, &st, __WALL) < 0)
        {
          if (errno == EINTR)
            continue;
          return cm_err_set (err, errno, "wait for thread %d to stop", tid);
        }
      if (WIFEXITED (st) || WIFSIGNALED (st))
        return cm_err_set (err, 0, "thread %d exited while being stopped", tid);
      if (WIFSTOPPED (st) && (st >> 16) == PTRACE_EVENT_STOP)
        {
          if (ptrace (PTRACE_GETREGS, tid, NULL, &d->tr[i].orig) < 0)
            return cm_err_set (err, errno, "thread %d: read registers", tid);
          return 0;
        }
      /* A signal arrived first: leave it pending for later delivery. */
      if (ptrace (PTRACE_CONT, tid, NULL, (void *) (long) WSTOPSIG (st)) < 0)
        return cm_err_set (err, errno, "ptrace continue thread %d", tid);
    }
}

/* Seizes and interrupts |tid|; waits for its stop unless the tree is
 * frozen (it stops once thawed: cl_seize_finish). */
static int
seize_one (struct cl_dump *d, pid_t tid, bool wait, struct cm_err **err)
{
  if (ptrace (PTRACE_SEIZE, tid, NULL, (void *) PTRACE_O_TRACESYSGOOD) < 0)
    {
      if (errno == ESRCH)
        return 0;  /* exited meanwhile */
      return cm_err_set (err, errno, "ptrace seize thread %d", tid);
    }
  d->tids = xrealloc (d->tids, (d->ntids + 1) * sizeof *d->tids);
  d->tr = xrealloc (d->tr, (d->ntids + 1) * sizeof *d->tr);
  memset (&d->tr[d->ntids], 0, sizeof *d->tr);
  d->tids[d->ntids++] = tid;
  if (ptrace (PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
    return cm_err_set (err, errno, "ptrace interrupt thread %d", tid);
  return wait ? stop_wait (d, d->ntids - 1, err) : 0;
}

/* One pass over /proc/PID/task; *fresh counts threads seized this pass. */
static int
seize_pass (struct cl_dump *d, bool wait, size_t *fresh, struct cm_err **err)
{
  char path[64];
  struct dirent *e;
  DIR *dir;
  int r = 0;

  snprintf (path, sizeof path, "%d/task", d->pid);
  dir = cl_opendir (path);
  if (dir == NULL)
    return cm_err_set (err, errno, "open `%s`", path);
  *fresh = 0;
  while (r == 0 && (e = readdir (dir)) != NULL)
    {
      pid_t tid = (pid_t) atoi (e->d_name);
      if (tid <= 0 || seized (d, tid))
        continue;
      r = seize_one (d, tid, wait, err);
      (*fresh)++;
    }
  closedir (dir);
  return r;
}

/* Until a pass over /proc/PID/task finds no thread not yet seized. */
static int
seize_rest (struct cl_dump *d, struct cm_err **err)
{
  size_t fresh;
  int rounds = 0;
  do
    {
      if (seize_pass (d, true, &fresh, err) < 0)
        return -1;
      if (++rounds > 100)
        return cm_err_set (err, 0, "process %d keeps creating threads", d->pid);
    }
  while (fresh > 0);
  if (d->ntids == 0 || d->tids[0] != d->pid)
    return cm_err_set (err, ESRCH, "process %d", d->pid);
  return 0;
}

int
cl_seize (struct cl_dump *d, struct cm_err **err)
{
  if (seize_one (d, d->pid, true, err) < 0)
    return -1;
  return seize_rest (d, err);
}

int
cl_seize_frozen (struct cl_dump *d, struct cm_err **err)
{
  size_t fresh;
  if (seize_one (d, d->pid, false, err) < 0)
    return -1;
  return seize_pass (d, false, &fresh, err);
}

int
cl_seize_finish (struct cl_dump *d, struct cm_err **err)
{
  for (size_t i = 0; i < d->ntids; i++)
    if (stop_wait (d, i, err) < 0)
      return -1;
  return seize_rest (d, err);
}

/* Waits for each of the threads as it exits, in whatever order they do
 * (a thread pidfd per thread, 6.9+): the last thread of an exiting pid
 * namespace init waits in the kernel until its sibling threads — traced
 * zombies until we reap them — are gone, so waiting for a given thread
 * first could wait forever.  False when thread pidfds are not there. */
static bool
reap_threads_as_they_exit (struct cl_dump *d)
{
  size_t n = d->ntids ? d->ntids - 1 : 0, left = n;
  _cleanup_free_ struct pollfd *pf = xcalloc (n + 1, sizeof *pf);
  for (size_t i = 0; i < n; i++)
    {
      pf[i].fd = (int) syscall (SYS_pidfd_open, d->tids[i + 1], PIDFD_THREAD);
      pf[i].events = POLLIN;
      if (pf[i].fd < 0 && errno != ESRCH)
        {
          for (size_t k = 0; k < i; k++)
            if (pf[k].fd >= 0)
              close (pf[k].fd);
          return false;
        }
      if (pf[i].fd < 0)
        {
          /* exited already: nothing to wait for but its status */
          int st;
          while (waitpid (d->tids[i + 1], &st, __WALL) < 0 && errno == EINTR)
            ;
          left--;
        }
    }
  while (left > 0)
    {
      if (poll (pf, n, -1) < 0 && errno != EINTR)
        break;
      for (size_t i = 0; i < n; i++)
        {
          int st;
          pid_t r;
          if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
          r = waitpid (d->tids[i + 1], &st, __WALL | WNOHANG);
          if (r == 0 || (r > 0 && !WIFEXITED (st) && !WIFSIGNALED (st)))
            continue;
          close (pf[i].fd);
          pf[i].fd = -1;
          left--;
        }
    }
  return true;
}

/* A killed tracee stays ours until we wait for it: its real parent (a
 * pid namespace's init, exiting, waits for every child) could not reap
 * it otherwise.  Threads first, the leader last. */
static void
reap (struct cl_dump *d)
{
  size_t from = d->ntids;
  if (reap_threads_as_they_exit (d))
    from = 1;
  for (size_t i = from; i-- > 0;)
    for (;;)
      {
        int st;
        if (waitpid (d->tids[i], &st, __WALL) < 0)
          {
            if (errno == EINTR)
              continue;
            break;
          }
        if (WIFEXITED (st) || WIFSIGNALED (st))
          break;
      }
}

void
cl_release (struct cl_dump *d, bool kill_it)
{
  if (kill_it)
    {
      kill (d->pid, SIGKILL);
      reap (d);
    }
  else
    {
      cl_inject_finish (d);
      for (size_t i = 0; i < d->ntids; i++)
        ptrace (PTRACE_DETACH, d->tids[i], NULL, NULL);
      for (size_t i = 0; i < d->ntids; i++)
        if (d->tr[i].held_signal)
          syscall (SYS_tgkill, d->pid, d->tids[i], d->tr[i].held_signal);
    }
  free (d->tids);
  free (d->tr);
  d->tids = NULL;
  d->tr = NULL;
  d->ntids = 0;
}
