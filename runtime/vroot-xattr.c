/* The path xattr calls in the view (get/set/list/remove and their l*
 * forms): the object is resolved in the view and pinned O_PATH|O_NOFOLLOW,
 * then reached through /proc/self/fd/N, whose magic link lands on the
 * pinned inode itself (a symlink for the l* forms), never on a path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define XATTR_MAX (64 * 1024)   /* the kernel's XATTR_SIZE_MAX */

static bool
nofollow (int nr)
{
  return nr == SYS_lgetxattr || nr == SYS_lsetxattr || nr == SYS_llistxattr
         || nr == SYS_lremovexattr;
}

static bool
writes (int nr)
{
  return nr == SYS_setxattr || nr == SYS_lsetxattr || nr == SYS_removexattr
         || nr == SYS_lremovexattr;
}

static int
pin (struct vr_call *c, char proc[64])
{
  int nr = c->req->data.nr, fd, r;
  char path[PATH_MAX];
  struct vr_path p;
  if ((r = vr_read_path (c, c->req->data.args[0], path)) < 0
      || (r = vr_resolve_at (c, AT_FDCWD, path, nofollow (nr) ? VR_NOFOLLOW : 0,
                             &p)) < 0)
    return r;
  if (p.ent == NULL)
    return -EACCES;
  if (writes (nr) && vr_readonly (&p))
    return -EROFS;
  if ((fd = vr_open (&p, O_PATH, 0)) < 0)
    return fd;
  if (writes (nr) && vr_host_node (fd))
    {
      close (fd);
      return -EPERM;
    }
  snprintf (proc, 64, "/proc/self/fd/%d", fd);
  return fd;
}

/* The value or list, read into the supervisor and copied out. */
static int64_t
get (struct vr_call *c, const char *proc, bool list)
{
  const __u64 *g = c->req->data.args;
  size_t size = (size_t) (list ? g[2] : g[3]);
  uint64_t out = list ? g[1] : g[2];
  char name[PATH_MAX];
  ssize_t n;
  int r;
  if (size > XATTR_MAX)
    size = XATTR_MAX;
  if (!list && (r = vr_read_path (c, g[1], name)) < 0)
    return r;
  _cleanup_free_ char *buf = xmalloc (size ? size : 1);
  n = list ? listxattr (proc, buf, size) : getxattr (proc, name, buf, size);
  if (n < 0)
    return -errno;
  if (size && n > 0 && (r = vr_write_mem (c, out, buf, (size_t) n)) < 0)
    return r;
  return n;
}

int64_t
vr_do_xattr (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  int nr = c->req->data.nr, r;
  char proc[64], name[PATH_MAX];
  _cleanup_fd_ int fd = pin (c, proc);
  if (fd < 0)
    return fd;
  switch (nr)
    {
    case SYS_listxattr: case SYS_llistxattr:
      return get (c, proc, true);
    case SYS_getxattr: case SYS_lgetxattr:
      return get (c, proc, false);
    case SYS_removexattr: case SYS_lremovexattr:
      if ((r = vr_read_path (c, g[1], name)) < 0)
        return r;
      return removexattr (proc, name) < 0 ? -errno : 0;
    default:                    /* setxattr, lsetxattr */
      {
        size_t size = (size_t) g[3];
        if (size > XATTR_MAX)
          return -E2BIG;
        _cleanup_free_ char *val = xmalloc (size ? size : 1);
        if ((r = vr_read_path (c, g[1], name)) < 0
            || (size && (r = vr_read_mem (c, g[2], val, size)) < 0))
          return r;
        r = setxattr (proc, name, val, size, (int) g[4]);
        return r < 0 ? -errno : 0;
      }
    }
}
