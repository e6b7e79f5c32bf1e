/* getdents64 of the view's /proc: the host's /proc lists every host pid;
 * the view shows only the container's (those that open: vroot-resolve.c
 * refuses the others).  Any other directory is the fd's own business: the
 * call CONTINUEs, which is safe for an fd-based call (no path to re-read). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

struct dent
{
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

static bool
is_proc_root (const struct vroot *v, int fd)
{
  struct stat a, b;
  if (fstat (fd, &a) < 0)
    return false;
  for (size_t i = 0; i < v->n; i++)
    if (v->e[i].kind == VR_PROC && fstat (v->e[i].fd, &b) == 0
        && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return true;
  return false;
}

/* Keeps the entries of |buf| (|n| bytes) the caller may see; returns the
 * new length. */
static size_t
filter (struct vr_call *c, char *buf, size_t n)
{
  size_t in = 0, out = 0;
  while (in < n)
    {
      struct dent *d = (struct dent *) (buf + in);
      unsigned short len = d->reclen;
      bool keep = true;
      if (len == 0 || in + len > n)
        break;
      if (vr_all_digits (d->name))
        {
          pid_t pid = (pid_t) atoi (d->name);
          keep = pid == c->task->tgid || c->ctx.pid_ok (c->ctx.ud, pid);
        }
      if (keep)
        {
          memmove (buf + out, buf + in, len);
          out += len;
        }
      in += len;
    }
  return out;
}

int64_t
vr_do_getdents (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  size_t count = g[2] > (1 << 20) ? (1 << 20) : (size_t) g[2];
  _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, (int) g[0]);
  _cleanup_free_ char *buf = NULL;
  if (fd < 0)
    return fd;
  if (!is_proc_root (c->s->v, fd))
    return VR_CONTINUE;
  buf = xmalloc (count ? count : 1);
  for (;;)                      /* a batch of only foreign pids is not the end */
    {
      long n = syscall (SYS_getdents64, fd, buf, count);
      size_t k;
      if (n <= 0)
        return n < 0 ? -errno : 0;
      if ((k = filter (c, buf, (size_t) n)) > 0)
        {
          int r = vr_write_mem (c, g[1], buf, k);
          return r < 0 ? r : (int64_t) k;
        }
    }
}
