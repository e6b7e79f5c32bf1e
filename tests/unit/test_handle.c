/* runtime/handle.c without a cgroup (no root needed): a handle reaches
 * exactly the process it was opened on — never one that merely has its
 * pid —, lists it while it lives, waits for its exit without polling, and
 * a wait on a process that cannot die (stopped) times out naming it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
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

static struct rt_handle *
open_on (pid_t pid, uint64_t start_time)
{
  struct rt_handle *h = NULL;
  struct cm_err *e = NULL;
  if (rt_handle_open (pid, start_time, NULL, &h, &e) < 0)
    {
      printf ("# open: %s\n", e->msg);
      cm_err_free (&e);
    }
  return h;
}

static void
no_cgroup_ops (void)
{
  pid_t pid = sleeper (), *pids = NULL;
  struct rt_handle *h = open_on (pid, rt_proc_start_time (pid));
  struct rt_cgroup_stats s;
  struct cm_err *e = NULL;
  size_t n = 0;

  ok (h && !rt_handle_has_cgroup (h), "a handle opens without a cgroup");
  ok (rt_handle_pids (h, &pids, &n, &e) == 0 && n == 1 && pids[0] == pid,
      "its pids are the live init");
  free (pids);
  ok (rt_handle_stats (h, &s, &e) < 0 && e && e->errno_ == ENOENT,
      "stats without a cgroup: ENOENT (%s)", e ? e->msg : "accepted");
  cm_err_free (&e);
  ok (rt_handle_kill (h, SIGKILL, true, &e) == 0,
      "kill --all without a cgroup signals the init");
  ok (rt_handle_wait (h, 3000, &e) == 0, "the wait sees it exit");
  cm_err_free (&e);
  waitpid (pid, NULL, 0);
  pids = NULL;
  ok (rt_handle_pids (h, &pids, &n, &e) == 0 && n == 0 && pids == NULL,
      "no pids once it is gone");
  ok (rt_handle_kill (h, SIGTERM, false, &e) < 0 && e && e->errno_ == ESRCH,
      "a signal to the gone init: ESRCH");
  cm_err_free (&e);
  rt_handle_free (h);
}

static void
pid_reuse_guard (void)
{
  pid_t pid = sleeper ();
  /* The start time of another process that had this pid. */
  struct rt_handle *h = open_on (pid, rt_proc_start_time (pid) + 1);
  struct cm_err *e = NULL;

  ok (rt_handle_kill (h, SIGKILL, false, &e) < 0 && e->errno_ == ESRCH
          && rt_proc_alive (pid, rt_proc_start_time (pid)),
      "a handle never signals a process that merely has its pid");
  cm_err_free (&e);
  ok (rt_handle_destroy (h, 1000, &e) == 0
          && rt_proc_alive (pid, rt_proc_start_time (pid)),
      "nor does destroy kill it");
  cm_err_free (&e);
  rt_handle_free (h);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

static void
wait_times_out (void)
{
  pid_t pid = sleeper ();
  struct rt_handle *h = open_on (pid, rt_proc_start_time (pid));
  struct cm_err *e = NULL;
  char want[64];

  snprintf (want, sizeof want, "process %d still running", (int) pid);
  ok (rt_handle_wait (h, 200, &e) < 0 && e->errno_ == ETIMEDOUT
          && strstr (e->msg, want),
      "a bounded wait on a live process times out naming it (%s)",
      e ? e->msg : "returned");
  cm_err_free (&e);
  kill (pid, SIGSTOP);
  ok (rt_handle_destroy (h, 3000, &e) == 0, "destroy kills even a stopped "
      "init and waits for it");
  cm_err_free (&e);
  waitpid (pid, NULL, 0);
  rt_handle_free (h);
}

int
main (void)
{
  no_cgroup_ops ();
  pid_reuse_guard ();
  wait_times_out ();
  return tap_done ();
}
