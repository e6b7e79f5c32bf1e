/* File locks: criu-lite does not save them (docs/checkpoint.md), so a
 * process holding one fails the checkpoint, naming the fd, rather than
 * coming back without it — another process could then take the lock the
 * restored one believes it holds.  /proc/PID/fdinfo/N lists, as "lock:"
 * lines, the flock, POSIX (record) and OFD locks and the leases held
 * through that open file (fs/locks.c, show_fd_locks). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int
fd_lock (struct cl_dump *d, int fd, struct cm_err **err)
{
  char path[64], *l;
  _cleanup_free_ char *info = NULL;
  struct cm_err *e = NULL;

  snprintf (path, sizeof path, "%d/fdinfo/%d", d->pid, fd);
  if (cm_read_file_at (cl_proc_dir (), path, 1 << 16, &info, NULL, &e) < 0)
    {
      int en = e->errno_;
      cm_err_free (&e);
      if (en == ENOENT)
        return 0;  /* closed meanwhile */
      return cm_err_set (err, en, "read `%s`", path);
    }
  l = strstr (info, "\nlock:");
  if (l == NULL)
    return 0;
  /* "lock:\t1: FLOCK  ADVISORY  WRITE 1234 00:3d:2 0 EOF": from the kind */
  l += strlen ("\nlock:");
  l += strspn (l, " \t0123456789:");
  l[strcspn (l, "\n")] = '\0';
  return cm_err_set (err, 0, "fd %d holds a file lock (%s), which criu-lite "
                     "cannot save or restore", fd, l);
}

int
cl_dump_locks (struct cl_dump *d, struct cm_err **err)
{
  const struct cl_fd *f = (const void *) d->fds.p;
  size_t n = d->fds.len / sizeof *f;
  for (size_t i = 0; i < n; i++)
    if (fd_lock (d, f[i].fd, err) < 0)
      return -1;
  return 0;
}
