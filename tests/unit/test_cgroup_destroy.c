/* runtime/cgroup.c on this host's real cgroups (root only): kill and the
 * wait for the cgroup to empty reach a process that is in the container's
 * cgroup of one v1 hierarchy only (else that rmdir fails with EBUSY); the
 * bounded wait for a process that cannot die (frozen) times out and names
 * its pid. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/cgroup.h"
#include "tap.h"

static pid_t
sleeper (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      pause ();
      _exit (0);
    }
  return pid;
}

static struct rt_cgroup *
make (const char *path, pid_t pid)
{
  struct rt_cgroup_opts o = { .cgroups_path = path, .id = "unit" };
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  if (rt_cgroup_create (&o, pid, &cg, &e) < 0)
    {
      printf ("# create %s: %s\n", path, e->msg);
      cm_err_free (&e);
    }
  return cg;
}

/* Is there a directory for |path| left on any hierarchy? */
static bool
left_anywhere (const char *path)
{
  static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified",
    "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer",
    "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/devices", "/sys/fs/cgroup/blkio" };
  struct stat sb;
  for (size_t i = 0; i < ARRAY_SIZE (roots); i++)
    {
      _cleanup_free_ char *d = xasprintf ("%s%s", roots[i], path);
      if (stat (d, &sb) == 0)
        return true;
    }
  return false;
}

/* A process in the container's cgroup of one v1 hierarchy only (moved
 * there by hand) kept that directory busy: cgroup.kill and the wait read
 * the v2 tree alone. */
static void
v1_only_straggler (void)
{
  _cleanup_free_ char *path = xasprintf ("/sandlock-unit-v1only-%d",
                                         (int) getpid ());
  _cleanup_free_ char *procs = xasprintf ("/sys/fs/cgroup/pids%s/cgroup.procs",
                                          path);
  struct cm_err *e = NULL;
  struct rt_cgroup *cg = make (path, 0);
  pid_t pid;
  FILE *f;
  int st = 0, r;

  if (cg == NULL || access (procs, W_OK) < 0
      || access ("/sys/fs/cgroup/unified/cgroup.procs", F_OK) < 0)
    {
      skip ("needs a hybrid host with a v1 pids hierarchy");
      if (cg)
        rt_cgroup_destroy (cg, &e);
      cm_err_free (&e);
      rt_cgroup_free (cg);
      return;
    }
  pid = sleeper ();
  f = fopen (procs, "w");
  ok (f && fprintf (f, "%d\n", (int) pid) > 0 && fclose (f) == 0,
      "moved pid %d into `%s` only", (int) pid, procs);
  r = rt_cgroup_kill (cg, SIGKILL, &e);
  cm_err_free (&e);
  ok (r == 0 && rt_cgroup_wait_empty (cg, 3000, &e) == 0,
      "kill SIGKILL and wait_empty reach it (%s)", e ? e->msg : "no error");
  cm_err_free (&e);
  ok (rt_cgroup_destroy (cg, &e) == 0 && !left_anywhere (path),
      "destroy then removes every hierarchy's directory (%s)",
      e ? e->msg : "no error");
  kill (pid, SIGKILL);
  waitpid (pid, &st, 0);
  if (left_anywhere (path))     /* leave nothing behind on failure */
    rt_cgroup_destroy (cg, &e);
  cm_err_free (&e);
  rt_cgroup_free (cg);
}

static void
wait_names_pids (void)
{
  _cleanup_free_ char *path = xasprintf ("/sandlock-unit-wait-%d",
                                         (int) getpid ());
  struct cm_err *e = NULL;
  pid_t pid = sleeper ();
  struct rt_cgroup *cg = make (path, pid);
  _cleanup_free_ char *want = xasprintf ("pid %d", (int) pid);
  struct timespec t0, t1;

  if (cg == NULL || rt_cgroup_freeze (cg, true, &e) < 0)
    {
      cm_err_free (&e);
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      skip ("no freezable cgroup here");
      goto out;
    }
  kill (pid, SIGKILL);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (rt_cgroup_wait_empty (cg, 300, &e) < 0)
    {
      clock_gettime (CLOCK_MONOTONIC, &t1);
      ok (e->errno_ == ETIMEDOUT && strstr (e->msg, want)
          && strstr (e->msg, path),
          "a frozen, killed process: the wait times out naming `%s` and "
          "the cgroup (%s)", want, e->msg);
      ok (t1.tv_sec - t0.tv_sec < 5, "the wait is bounded");
    }
  else
    skip ("SIGKILL went through this freezer (cgroup v2 freezer)");
  cm_err_free (&e);
  rt_cgroup_freeze (cg, false, &e);
  cm_err_free (&e);
  waitpid (pid, NULL, 0);
  ok (rt_cgroup_destroy (cg, &e) == 0, "thawed, it goes and destroy "
      "succeeds");
  cm_err_free (&e);
out:
  rt_cgroup_free (cg);
}

int
main (void)
{
  if (geteuid () != 0)
    {
      printf ("1..0 # skip needs root to create cgroups\n");
      return 77;
    }
  v1_only_straggler ();
  wait_names_pids ();
  return tap_done ();
}
