/* A handle on an existing container: its init (pinned by pid and start
 * time) and its cgroup when it has one.  What oci/ does to a created
 * container — signal, freeze, list, measure, update, wait for, destroy —
 * goes through here, so oci/ never sees the cgroup code. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/util.h"
#include "internal.h"
#include "runtime.h"

struct rt_handle
{
  pid_t pid;                    /* 0: no init to speak of */
  uint64_t start_time;
  struct rt_cgroup *cg;         /* NULL: no cgroup */
};

int
rt_handle_open (pid_t pid, uint64_t start_time, const char *cgroup_path,
                struct rt_handle **out, struct cm_err **err)
{
  struct rt_handle *h = xcalloc (1, sizeof *h);
  h->pid = pid;
  h->start_time = start_time;
  if (cgroup_path && rt_cgroup_open (cgroup_path, &h->cg, err) < 0)
    {
      free (h);
      return -1;
    }
  *out = h;
  return 0;
}

bool
rt_handle_has_cgroup (const struct rt_handle *h)
{
  return h->cg != NULL;
}

int
rt_handle_cgroup_path (const char *cgroups_path, const char *id,
                       bool systemd, char **path, struct cm_err **err)
{
  struct rt_cgroup_opts co = { .cgroups_path = cgroups_path, .id = id,
                               .systemd = systemd };
  return rt_cgroup_resolve (&co, path, err);
}

/* No cgroup: the init's descendants (a namespace-less init is a
 * subreaper, and exec'd processes are forked under it), signalled through
 * pidfds before the init, which is what keeps orphans under it; each
 * checked to descend from the init after its pidfd is open (proc-tree.c). */
static void
signal_descendants (const struct rt_handle *h, int sig)
{
  rt_proc_signal_tree (h->pid, h->start_time, sig);
}

int
rt_handle_kill (struct rt_handle *h, int sig, bool all, struct cm_err **err)
{
  if (all && h->cg)
    return rt_cgroup_kill (h->cg, sig, err);
  if (all)
    signal_descendants (h, sig);
  if (rt_proc_signal (h->pid, h->start_time, sig) == 0)
    return 0;
  return cm_err_set (err, errno, "signal process %d", (int) h->pid);
}

static int
need_cgroup (const struct rt_handle *h, struct cm_err **err)
{
  return h->cg ? 0 : cm_err_set (err, ENOENT, "the container has no cgroup");
}

int
rt_handle_freeze (struct rt_handle *h, bool frozen, struct cm_err **err)
{
  if (need_cgroup (h, err) < 0)
    return -1;
  return rt_cgroup_freeze (h->cg, frozen, err);
}

int
rt_handle_is_frozen (struct rt_handle *h, struct cm_err **err)
{
  if (need_cgroup (h, err) < 0)
    return -1;
  return rt_cgroup_is_frozen (h->cg, err);
}

int
rt_handle_pids (struct rt_handle *h, pid_t **pids, size_t *n,
                struct cm_err **err)
{
  if (h->cg)
    return rt_cgroup_pids (h->cg, pids, n, err);
  /* No cgroup: the init and its descendants. */
  *pids = NULL;
  *n = 0;
  if (h->pid > 0 && rt_proc_alive (h->pid, h->start_time))
    {
      pid_t *d = NULL;
      size_t nd = rt_proc_descendants (h->pid, &d);
      *pids = xmalloc ((nd + 1) * sizeof **pids);
      (*pids)[(*n)++] = h->pid;
      memcpy (*pids + 1, d, nd * sizeof *d);
      *n += nd;
      free (d);
    }
  return 0;
}

int
rt_handle_stats (struct rt_handle *h, struct rt_cgroup_stats *st,
                 struct cm_err **err)
{
  if (need_cgroup (h, err) < 0)
    return -1;
  return rt_cgroup_stats (h->cg, st, err);
}

int
rt_handle_update (struct rt_handle *h, const struct rt_resources *r,
                  struct cm_err **err)
{
  if (need_cgroup (h, err) < 0)
    return -1;
  return rt_cgroup_update (h->cg, r, err);
}

/* Waits, at most |timeout_ms|, for a process that is not our child to go
 * away: a pidfd becomes readable when it exits — no polling loop. */
static int
wait_init (const struct rt_handle *h, int timeout_ms, struct cm_err **err)
{
  _cleanup_fd_ int fd = -1;
  struct pollfd p;
  int r;
  if (h->pid <= 0)
    return 0;
  fd = (int) syscall (SYS_pidfd_open, h->pid, 0);
  /* The pid may have been reused between our check and pidfd_open. */
  if (fd < 0 || !rt_proc_alive (h->pid, h->start_time))
    return 0;
  p.fd = fd;
  p.events = POLLIN;
  while ((r = poll (&p, 1, timeout_ms)) < 0 && errno == EINTR)
    ;
  if (r == 0)
    return cm_err_set (err, ETIMEDOUT, "process %d still running after "
                       "SIGKILL", (int) h->pid);
  return 0;
}

static long
ms_since (const struct timespec *t0)
{
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1000L
         + (t1.tv_nsec - t0->tv_nsec) / 1000000L;
}

int
rt_handle_wait (struct rt_handle *h, int timeout_ms, struct cm_err **err)
{
  struct timespec t0;
  long left;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (wait_init (h, timeout_ms, err) < 0)
    {
      struct cm_err *e = NULL;
      /* Name every process of the cgroup, not only init. */
      if (h->cg && rt_cgroup_wait_empty (h->cg, 0, &e) < 0)
        {
          cm_err_free (err);
          *err = cm_steal_ptr (&e);
        }
      return -1;
    }
  if (h->cg == NULL)
    return 0;
  left = timeout_ms - ms_since (&t0);
  /* Killed processes leave the cgroup a moment after the signal. */
  return rt_cgroup_wait_empty (h->cg, left > 0 ? (int) left : 0, err);
}

static void
kill_all (struct rt_handle *h)
{
  struct cm_err *e = NULL;
  if (h->cg == NULL)
    signal_descendants (h, SIGKILL);
  rt_proc_signal (h->pid, h->start_time, SIGKILL);
  /* Without a pid namespace, other processes outlive init: the cgroup
   * names them all.  A frozen cgroup must be thawed for SIGKILL to land;
   * only the container's own freezer is ours to thaw. */
  if (h->cg == NULL)
    return;
  if (rt_cgroup_is_frozen (h->cg, &e) == 1)
    rt_cgroup_freeze (h->cg, false, &e);
  cm_err_free (&e);
  rt_cgroup_kill (h->cg, SIGKILL, &e);
  cm_err_free (&e);
}

/* A task can still be leaving, or a straggler forked at exit still be
 * there, when the first rmdir runs: EBUSY then means kill what is left,
 * wait (bounded) for the cgroup to empty, and remove every hierarchy's
 * directory again, as runc retries its rmdir. */
static int
remove_cgroup (struct rt_cgroup *cg, int timeout_ms, struct cm_err **err)
{
  struct cm_err *e = NULL;
  if (rt_cgroup_destroy (cg, &e) == 0)
    return 0;
  if (e->errno_ != EBUSY)
    {
      *err = cm_steal_ptr (&e);
      return -1;
    }
  cm_err_free (&e);
  rt_cgroup_kill (cg, SIGKILL, &e);
  cm_err_free (&e);
  if (rt_cgroup_wait_empty (cg, timeout_ms, err) < 0)
    return -1;
  return rt_cgroup_destroy (cg, err);
}

int
rt_handle_destroy (struct rt_handle *h, int timeout_ms, struct cm_err **err)
{
  kill_all (h);
  if (rt_handle_wait (h, timeout_ms, err) < 0)
    return -1;
  return h->cg ? remove_cgroup (h->cg, timeout_ms, err) : 0;
}

void
rt_handle_free (struct rt_handle *h)
{
  if (h == NULL)
    return;
  rt_cgroup_free (h->cg);
  free (h);
}
