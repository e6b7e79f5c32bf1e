/* runtime/proc-tree.c: kill --all and delete without a cgroup signal the
 * init's descendants found in /proc.  A /proc scan is stale the moment it
 * is read: a descendant that exits and is reaped frees its pid, which a
 * host process can take before the signal.  The pidfds are therefore
 * taken only after checking, through the pidfd, that the process is the
 * child of one already taken.  Here the stale scan is handed in directly:
 * it names a process of the test (the "host") as the init's child; and,
 * as root, the real race is played out: the listed child dies, a process
 * of the test is made at its pid (ns_last_pid), and the old order's
 * pidfd_open would name it. */
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/internal.h"
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

/* An "init" with one child; the child's pid through |*child|.  |reap|:
 * the init waits for the child, then pauses. */
static pid_t
init_of (pid_t *child, bool reap)
{
  int p[2];
  if (pipe (p) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      pid_t c = sleeper ();
      (void) !write (p[1], &c, sizeof c);
      if (reap)
        waitpid (c, NULL, 0);
      pause ();
      _exit (0);
    }
  close (p[1]);
  if (read (p[0], child, sizeof *child) != sizeof *child)
    *child = -1;
  close (p[0]);
  return pid;
}

static pid_t
init_with_child (pid_t *child)
{
  return init_of (child, false);
}

static bool
alive (pid_t pid)
{
  return kill (pid, 0) == 0;
}

/* A process of the test at pid |want| (a pid freed just before), made by
 * setting ns_last_pid (root only) and forking: other processes on the
 * machine fork too, so a few tries; -1 when it never lands. */
static pid_t
sleeper_at (pid_t want)
{
  for (int i = 0; i < 50; i++)
    {
      FILE *f = fopen ("/proc/sys/kernel/ns_last_pid", "w");
      if (f == NULL)
        return -1;
      fprintf (f, "%d", (int) want - 1);
      if (fclose (f) != 0)
        return -1;
      fflush (stdout);          /* the fork must not copy buffered output */
      pid_t p = sleeper ();
      if (p == want)
        return p;
      kill (p, SIGKILL);
      waitpid (p, NULL, 0);
    }
  return -1;
}

/* The real race, made deterministic: the scan lists the init's child,
 * the child exits and is reaped, a host process takes its pid, and only
 * then are the pidfds taken. */
static void
reused_pid (void)
{
  pid_t child, init = init_of (&child, true), host;
  int rootfd = (int) syscall (SYS_pidfd_open, init, 0), *fds = NULL;
  pid_t pid[] = { child }, par[] = { init };
  /* The child dies and its init reaps it, which frees its pid (the
   * pidfd of a process reaped is readable, but the number is gone: wait
   * for /proc to say so). */
  kill (child, SIGKILL);
  for (int i = 0; i < 500 && kill (child, 0) == 0; i++)
    usleep (1000);
  if ((host = sleeper_at (child)) < 0)
    {
      skip ("no process could be made at a freed pid (needs root: ns_last_pid)");
      skip ("idem");
      skip ("idem");
      kill (init, SIGKILL);
      waitpid (init, NULL, 0);
      close (rootfd);
      return;
    }
  int fd = (int) syscall (SYS_pidfd_open, child, 0);
  ok (fd >= 0, "the old order would take it: pidfd_open of the listed pid "
      "names the host process %d", (int) host);
  if (fd >= 0)
    close (fd);
  size_t n = rt_proc_tree_pidfds (init, rootfd, pid, par, 1, &fds);
  ok (n == 0, "the new order does not: its parent is not the init (%zu)", n);
  for (size_t i = 0; i < n; i++)
    close (fds[i]);
  free (fds);
  ok (alive (init), "the init still lives: the parent check refused it");
  kill (host, SIGKILL);
  waitpid (host, NULL, 0);
  kill (init, SIGKILL);
  waitpid (init, NULL, 0);
  close (rootfd);
}

int
main (void)
{
  pid_t child, init = init_with_child (&child), host = sleeper ();
  int rootfd = (int) syscall (SYS_pidfd_open, init, 0), *fds = NULL;
  ok (init > 0 && child > 0 && host > 0 && rootfd >= 0, "processes made");

  /* The scan as it would read if the init's child had exited and |host|
   * had taken a pid the scan listed under the init. */
  pid_t pid[] = { child, host }, par[] = { init, init };
  size_t n = rt_proc_tree_pidfds (init, rootfd, pid, par, 2, &fds);
  ok (n == 1, "only the real child is taken (%zu)", n);
  for (size_t i = 0; i < n; i++)
    syscall (SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0), close (fds[i]);
  free (fds);
  waitpid (init, NULL, WNOHANG);
  ok (alive (host), "the host process named by the stale scan lives");

  /* The init's parent is not its descendant either way round. */
  pid_t pid2[] = { getpid () }, par2[] = { init };
  n = rt_proc_tree_pidfds (init, rootfd, pid2, par2, 1, &fds);
  ok (n == 0, "a scan naming the runtime under the init takes nothing");
  free (fds);

  /* The whole path, from a real scan: the child dies, the host does not. */
  pid_t c2, init2 = init_with_child (&c2);
  int c2fd = (int) syscall (SYS_pidfd_open, c2, 0);
  struct pollfd pf = { .fd = c2fd, .events = POLLIN };
  rt_proc_signal_tree (init2, rt_proc_start_time (init2), SIGKILL);
  ok (poll (&pf, 1, 5000) == 1, "its child was killed");
  ok (alive (init2), "the init itself is left to the caller");
  kill (init2, SIGKILL);
  waitpid (init2, NULL, 0);
  close (c2fd);
  ok (alive (host), "the host process still lives");

  rt_proc_signal_tree (init2, 1, SIGKILL);
  ok (true, "a dead init signals nothing");
  kill (host, SIGKILL);
  kill (init, SIGKILL);
  waitpid (host, NULL, 0);
  waitpid (init, NULL, 0);
  close (rootfd);
  reused_pid ();
  return tap_done ();
}
