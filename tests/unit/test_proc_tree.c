/* runtime/proc-tree.c: kill --all and delete without a cgroup signal the
 * init's descendants found in /proc.  A /proc scan is stale the moment it
 * is read: a descendant that exits and is reaped frees its pid, which a
 * host process can take before the signal.  The pidfds are therefore
 * taken only after checking, through the pidfd, that the process is the
 * child of one already taken.  Here the stale scan is handed in directly:
 * it names a process of the test (the "host") as the init's child. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

/* An "init" with one child; the child's pid through |*child|. */
static pid_t
init_with_child (pid_t *child)
{
  int p[2];
  if (pipe (p) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      pid_t c = sleeper ();
      (void) !write (p[1], &c, sizeof c);
      pause ();
      _exit (0);
    }
  close (p[1]);
  if (read (p[0], child, sizeof *child) != sizeof *child)
    *child = -1;
  close (p[0]);
  return pid;
}

static bool
alive (pid_t pid)
{
  return kill (pid, 0) == 0;
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
  return tap_done ();
}
