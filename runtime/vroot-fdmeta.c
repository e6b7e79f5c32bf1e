/* Metadata through an fd: fchmod, fchown, fsetxattr, fremovexattr (and
 * futimens, which is utimensat with no path: vroot-write.c).  They name
 * no path, but a read-only entry of the view is read-only only in the
 * supervisor (the host mount is writable) and Landlock has no right for
 * metadata: left to the kernel, an fd the view opened read-only on a
 * read-only bind changed the file's mode, owner and xattrs.  So the
 * object of the caller's fd is found in the view — refused (EROFS) under
 * a read-only entry or path, EPERM for a host device node — and the call
 * is done here on the dup (pidfd_getfd), in the caller's credentials
 * (vroot-cred.c): a sibling thread that dup2s another file onto the fd
 * number after the check changes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define XATTR_MAX (64 * 1024)   /* the kernel's XATTR_SIZE_MAX */

int
vr_fd_writable (struct vr_call *c, int dup)
{
  return vr_host_node (dup) ? -EPERM : vr_fd_readonly (c, dup);
}

int
vr_fd_readonly (struct vr_call *c, int dup)
{
  char host[PATH_MAX], vpath[PATH_MAX];
  struct vr_path p;
  int r;
  if ((r = vr_fd_host_path (dup, host)) < 0)
    return r;
  /* The copy of a file the caller may not read (vroot-exec.c): a chmod
   * of it would make it readable. */
  if (cm_startswith (host, "/memfd:" VR_EXEC_ONLY_MEMFD))
    return -EPERM;
  /* No path (a pipe, a memfd) or outside the view (an fd the container
   * inherited): nothing of the view to keep read-only. */
  if (host[0] != '/' || vr_host_to_virtual (c->s->v, host, vpath) < 0)
    return 0;
  if (vr_entry_for (c->s->v, vpath)->ro)
    return -EROFS;
  if (vr_resolve (c->s->v, &c->ctx, "/", vpath, VR_NOFOLLOW, &p) == 0
      && p.ent && vr_readonly (&p))
    return -EROFS;
  return 0;
}

int64_t
vr_do_fdmeta (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  char name[PATH_MAX];
  int r;
  _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, (int) g[0]);
  if (fd < 0)
    return fd;
  if ((r = vr_fd_writable (c, fd)) < 0)
    return r;
  switch (c->req->data.nr)
    {
    case SYS_fchmod:
      return fchmod (fd, (mode_t) g[1] & 07777) < 0 ? -errno : 0;
    case SYS_fchown:
      return fchown (fd, (uid_t) g[1], (gid_t) g[2]) < 0 ? -errno : 0;
    case SYS_fremovexattr:
      if ((r = vr_read_path (c, g[1], name)) < 0)
        return r;
      return fremovexattr (fd, name) < 0 ? -errno : 0;
    default:                    /* fsetxattr */
      {
        size_t size = (size_t) g[3];
        if (size > XATTR_MAX)
          return -E2BIG;
        _cleanup_free_ char *val = xmalloc (size ? size : 1);
        if ((r = vr_read_path (c, g[1], name)) < 0
            || (size && (r = vr_read_mem (c, g[2], val, size)) < 0))
          return r;
        r = fsetxattr (fd, name, val, size, (int) g[4]);
        return r < 0 ? -errno : 0;
      }
    }
}
