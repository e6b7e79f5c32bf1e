/* The path xattr calls in the view (get/set/list/remove, their l* forms
 * and the *xattrat calls of Linux 6.13, by a dirfd and a relative path or
 * AT_EMPTY_PATH on the fd itself): the object is resolved in the view and pinned O_PATH|O_NOFOLLOW,
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

#ifndef SYS_setxattrat          /* Linux 6.13; the same on every arch */
#define SYS_setxattrat 463
#define SYS_getxattrat 464
#define SYS_listxattrat 465
#define SYS_removexattrat 466
#endif

/* The *xattrat calls' value argument (linux/xattr.h, 6.13). */
struct vr_xattr_args
{
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

enum op { GET, SET, LIST, REMOVE };

/* One xattr call, whichever spelling: the object (dirfd, path, at-flags)
 * and the operation's arguments. */
struct xop
{
  enum op op;
  int dirfd, atflags;
  uint64_t path, name, value;
  size_t size;
  int flags;
};

static int
decode_at (struct vr_call *c, struct xop *x)
{
  const __u64 *g = c->req->data.args;
  struct vr_xattr_args a = { 0 };
  int nr = c->req->data.nr, r;
  x->dirfd = (int) g[0], x->path = g[1], x->atflags = (int) g[2];
  if (x->atflags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
    return -EINVAL;
  if (nr == SYS_listxattrat)
    {
      x->op = LIST, x->value = g[3], x->size = (size_t) g[4];
      return 0;
    }
  x->name = g[3];
  if (nr == SYS_removexattrat)
    {
      x->op = REMOVE;
      return 0;
    }
  if (g[5] < sizeof a)          /* XATTR_ARGS_SIZE_VER0 */
    return -EINVAL;
  if ((r = vr_read_mem (c, g[4], &a, sizeof a)) < 0)
    return r;
  x->op = nr == SYS_getxattrat ? GET : SET;
  x->value = a.value, x->size = a.size, x->flags = (int) a.flags;
  if (x->op == GET && a.flags)
    return -EINVAL;
  return 0;
}

static int
decode (struct vr_call *c, struct xop *x)
{
  const __u64 *g = c->req->data.args;
  int nr = c->req->data.nr;
  if (nr == SYS_setxattrat || nr == SYS_getxattrat || nr == SYS_listxattrat
      || nr == SYS_removexattrat)
    return decode_at (c, x);
  x->dirfd = AT_FDCWD, x->path = g[0];
  x->atflags = (nr == SYS_lgetxattr || nr == SYS_lsetxattr
                || nr == SYS_llistxattr || nr == SYS_lremovexattr)
                   ? AT_SYMLINK_NOFOLLOW : 0;
  switch (nr)
    {
    case SYS_listxattr: case SYS_llistxattr:
      x->op = LIST, x->value = g[1], x->size = (size_t) g[2];
      return 0;
    case SYS_getxattr: case SYS_lgetxattr:
      x->op = GET, x->name = g[1], x->value = g[2], x->size = (size_t) g[3];
      return 0;
    case SYS_removexattr: case SYS_lremovexattr:
      x->op = REMOVE, x->name = g[1];
      return 0;
    default:                    /* setxattr, lsetxattr */
      x->op = SET, x->name = g[1], x->value = g[2], x->size = (size_t) g[3];
      x->flags = (int) g[4];
      return 0;
    }
}

/* An O_PATH pin of the object (O_NOFOLLOW with AT_SYMLINK_NOFOLLOW), or
 * with AT_EMPTY_PATH and "" the caller's dirfd itself; |proc| names it. */
static int
pin (struct vr_call *c, const struct xop *x, char proc[64])
{
  bool w = x->op == SET || x->op == REMOVE;
  char path[PATH_MAX];
  struct vr_path p;
  int fd, r;
  if ((r = vr_read_path (c, x->path, path)) < 0)
    return r;
  if (path[0] == '\0' && (x->atflags & AT_EMPTY_PATH) && x->dirfd != AT_FDCWD)
    {
      if ((fd = vr_caller_fd (c, c->task->tgid, x->dirfd)) < 0)
        return fd;
      if (w && (r = vr_fd_writable (c, fd)) < 0)
        {
          close (fd);
          return r;
        }
      snprintf (proc, 64, "/proc/self/fd/%d", fd);
      return fd;
    }
  if (path[0] == '\0' && (x->atflags & AT_EMPTY_PATH))
    snprintf (path, sizeof path, ".");
  if ((r = vr_resolve_at (c, x->dirfd, path, (x->atflags & AT_SYMLINK_NOFOLLOW)
                          ? VR_NOFOLLOW : 0, &p)) < 0)
    return r;
  if (p.ent == NULL)
    return -EACCES;
  if (w && vr_readonly (&p))
    return -EROFS;
  if ((fd = vr_open (&p, O_PATH, 0)) < 0)
    return fd;
  if (w && vr_host_node (fd))
    {
      close (fd);
      return -EPERM;
    }
  snprintf (proc, 64, "/proc/self/fd/%d", fd);
  return fd;
}

/* The value or list, read into the supervisor and copied out. */
static int64_t
get (struct vr_call *c, const struct xop *x, const char *proc)
{
  size_t size = x->size > XATTR_MAX ? XATTR_MAX : x->size;
  char name[PATH_MAX];
  ssize_t n;
  int r;
  if (x->op == GET && (r = vr_read_path (c, x->name, name)) < 0)
    return r;
  _cleanup_free_ char *buf = xmalloc (size ? size : 1);
  n = x->op == LIST ? listxattr (proc, buf, size)
                    : getxattr (proc, name, buf, size);
  if (n < 0)
    return -errno;
  if (size && n > 0 && (r = vr_write_mem (c, x->value, buf, (size_t) n)) < 0)
    return r;
  return n;
}

int64_t
vr_do_xattr (struct vr_call *c)
{
  struct xop x = { 0 };
  char proc[64], name[PATH_MAX];
  int r = decode (c, &x);
  if (r < 0)
    return r;
  _cleanup_fd_ int fd = pin (c, &x, proc);
  if (fd < 0)
    return fd;
  if (x.op == GET || x.op == LIST)
    return get (c, &x, proc);
  if ((r = vr_read_path (c, x.name, name)) < 0)
    return r;
  if (x.op == REMOVE)
    return removexattr (proc, name) < 0 ? -errno : 0;
  if (x.size > XATTR_MAX)
    return -E2BIG;
  _cleanup_free_ char *val = xmalloc (x.size ? x.size : 1);
  if (x.size && (r = vr_read_mem (c, x.value, val, x.size)) < 0)
    return r;
  return setxattr (proc, name, val, x.size, x.flags) < 0 ? -errno : 0;
}
