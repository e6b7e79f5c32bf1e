/* Namespace identity: whether a namespace file names the same namespace as
 * another process's (the runtime's own, or init's).  A namespace is its
 * nsfs inode, so two files name the same one when dev and ino agree. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "internal.h"

int
rt_ns_is (const struct stat *st, const char *pid, const char *name)
{
  char path[64];
  struct stat b;
  snprintf (path, sizeof path, "/proc/%s/ns/%s", pid, name);
  if (stat (path, &b) < 0)
    return -1;
  return st->st_dev == b.st_dev && st->st_ino == b.st_ino;
}

int
rt_ns_joined_fd (const struct rt_ns_fds *ns, int flag)
{
  for (size_t i = 0; i < ns->len; i++)
    if (ns->types[i] == flag)
      return ns->fds[i];
  return -1;
}
