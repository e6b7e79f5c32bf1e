/* A process and its descendants, from /proc: how ps, kill --all and
 * delete find every process of a container that has no cgroup to list
 * them (a namespace-less one: its init is a subreaper, so orphans stay
 * under it; its exec'd processes are forked under it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

/* The parent of |pid| from /proc/PID/stat (field 4, after the last ')'
 * of comm); -1 when gone or a zombie. */
static pid_t
ppid_of (pid_t pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
    return -1;
  return (pid_t) strtol (p + 4, NULL, 10);
}

/* Every live process of /proc with its parent: *pid and *par malloc'd. */
static size_t
snapshot (pid_t **pid, pid_t **par)
{
  size_t n = 0, cap = 0;
  DIR *d = opendir ("/proc");
  struct dirent *de;
  *pid = *par = NULL;
  if (d == NULL)
    return 0;
  while ((de = readdir (d)) != NULL)
    {
      char *end;
      long v = strtol (de->d_name, &end, 10);
      pid_t pp;
      if (*end || v <= 0 || (pp = ppid_of ((pid_t) v)) < 0)
        continue;
      if (n == cap)
        {
          cap = cap ? cap * 2 : 256;
          *pid = xrealloc (*pid, cap * sizeof **pid);
          *par = xrealloc (*par, cap * sizeof **par);
        }
      (*pid)[n] = (pid_t) v;
      (*par)[n++] = pp;
    }
  closedir (d);
  return n;
}

size_t
rt_proc_descendants (pid_t root, pid_t **out)
{
  _cleanup_free_ pid_t *pid = NULL;
  _cleanup_free_ pid_t *par = NULL;
  size_t n = snapshot (&pid, &par), found = 0;
  /* Breadth first: out[0..found) are known descendants; each pass adds
   * the children of out[k]. */
  pid_t *r = xcalloc (n + 1, sizeof *r);
  for (size_t k = 0; k <= found; k++)
    {
      pid_t of = k == 0 ? root : r[k - 1];
      for (size_t i = 0; i < n; i++)
        if (par[i] == of && pid[i] != root)
          r[found++] = pid[i];
      if (k == found)
        break;
    }
  *out = r;
  return found;
}

static bool
pidfd_alive (int fd)
{
  return syscall (SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0;
}

/* A pidfd of |pid| when it is, now, a child of the process of |pfd| (pid
 * |parent|); -1 otherwise.  The order is what makes it safe: a pidfd
 * names one process for good, but a number read from /proc names
 * whichever process has it at the read.  So the pidfd is opened first,
 * then the parent read, then both pidfds checked alive: a process that
 * has not been reaped keeps its pid, so a live |fd| after the read means
 * the stat read was its process's, and a live |pfd| means |parent| was
 * still that process's pid when the child named it. */
static int
child_pidfd (pid_t pid, pid_t parent, int pfd)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return -1;
  if (ppid_of (pid) != parent || !pidfd_alive (fd) || !pidfd_alive (pfd))
    {
      close (fd);
      return -1;
    }
  return fd;
}

size_t
rt_proc_tree_pidfds (pid_t root, int rootfd, const pid_t *pid,
                     const pid_t *par, size_t n, int **out)
{
  pid_t *who = xcalloc (n + 1, sizeof *who);
  int *fd = xcalloc (n + 1, sizeof *fd);
  size_t found = 0;
  /* Breadth first from |root|: a process is taken only once its pidfd
   * shows it the child of one already taken; a stale |pid|/|par| (a pid
   * reused by a host process since the snapshot) is left out. */
  for (size_t k = 0; k <= found; k++)
    {
      pid_t of = k == 0 ? root : who[k - 1];
      int ofd = k == 0 ? rootfd : fd[k - 1];
      for (size_t i = 0; i < n; i++)
        {
          int c;
          if (par[i] != of || pid[i] == root
              || (c = child_pidfd (pid[i], of, ofd)) < 0)
            continue;
          who[found] = pid[i];
          fd[found++] = c;
        }
      if (k == found)
        break;
    }
  free (who);
  *out = fd;
  return found;
}

void
rt_proc_signal_tree (pid_t root, uint64_t start_time, int sig)
{
  _cleanup_fd_ int rootfd = -1;
  _cleanup_free_ pid_t *pid = NULL;
  _cleanup_free_ pid_t *par = NULL;
  _cleanup_free_ int *fd = NULL;
  if (root <= 0)
    return;
  /* The init as for any signal: pidfd first, then its start time. */
  rootfd = (int) syscall (SYS_pidfd_open, root, 0);
  if (rootfd < 0 || !rt_proc_alive (root, start_time))
    return;
  size_t n = snapshot (&pid, &par);
  size_t nfd = rt_proc_tree_pidfds (root, rootfd, pid, par, n, &fd);
  for (size_t i = 0; i < nfd; i++)
    {
      syscall (SYS_pidfd_send_signal, fd[i], sig, NULL, 0);
      close (fd[i]);
    }
}
