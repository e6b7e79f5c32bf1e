/* A process and its descendants, from /proc: how ps, kill --all and
 * delete find every process of a container that has no cgroup to list
 * them (a namespace-less one: its init is a subreaper, so orphans stay
 * under it; its exec'd processes are forked under it). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

size_t
rt_proc_descendants (pid_t root, pid_t **out)
{
  pid_t *pid = NULL, *par = NULL;
  size_t n = 0, cap = 0, found = 0;
  DIR *d = opendir ("/proc");
  struct dirent *de;
  *out = NULL;
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
          pid = xrealloc (pid, cap * sizeof *pid);
          par = xrealloc (par, cap * sizeof *par);
        }
      pid[n] = (pid_t) v;
      par[n++] = pp;
    }
  closedir (d);
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
  free (pid);
  free (par);
  *out = r;
  return found;
}
