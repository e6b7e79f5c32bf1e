/* The open family in the view: open, creat, openat, openat2.  The file is
 * opened here from its entry's pinned fd and injected into the caller with
 * SECCOMP_ADDFD_FLAG_SEND, so the kernel never resolves the caller's
 * string (runtime/vroot-sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

struct open_args
{
  int dirfd;
  uint64_t path;
  int flags;
  mode_t mode;
  uint64_t resolve;
};

#define O_PATH_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define SCOPED (RESOLVE_BENEATH | RESOLVE_IN_ROOT)
#define RESOLVE_ALL (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS                 \
                     | RESOLVE_NO_SYMLINKS | SCOPED | RESOLVE_CACHED)

/* A larger struct open_how than this one: its tail must be zeros (else
 * E2BIG, as the kernel answers; and so past a page). */
static bool
tail_nonzero (struct vr_call *c, uint64_t addr, size_t size)
{
  char tail[4096] = { 0 };
  size_t n = size - sizeof (struct open_how);
  if (size > sizeof tail)
    return true;
  if (vr_read_mem (c, addr + sizeof (struct open_how), tail, n) < 0)
    return true;
  for (size_t i = 0; i < n; i++)
    if (tail[i])
      return true;
  return false;
}

static int
decode_ (struct vr_call *c, struct open_args *a)
{
  const __u64 *g = c->req->data.args;
  struct open_how how = { 0 };
  *a = (struct open_args) { .dirfd = AT_FDCWD };
  switch (c->req->data.nr)
    {
    case SYS_open:
      a->path = g[0], a->flags = (int) g[1], a->mode = (mode_t) g[2];
      return 0;
    case SYS_creat:
      a->path = g[0], a->flags = O_CREAT | O_WRONLY | O_TRUNC;
      a->mode = (mode_t) g[1];
      return 0;
    case SYS_openat:
      a->dirfd = (int) g[0], a->path = g[1], a->flags = (int) g[2];
      a->mode = (mode_t) g[3];
      return 0;
    default:                    /* openat2 */
      if (g[3] < sizeof how)
        return -EINVAL;
      if (vr_read_mem (c, g[2], &how, sizeof how) < 0)
        return -EFAULT;
      if (how.flags >> 32 || how.mode > 07777 || (how.resolve & ~RESOLVE_ALL)
          || (how.resolve & SCOPED) == SCOPED)
        return -EINVAL;
      if (g[3] > sizeof how && tail_nonzero (c, g[2], (size_t) g[3]))
        return -E2BIG;
      /* openat2 refuses O_PATH with any other open flag (the kernel's
       * O_PATH_FLAGS); open and openat drop them. */
      if ((how.flags & O_PATH) && (how.flags & ~O_PATH_FLAGS))
        return -EINVAL;
      a->dirfd = (int) g[0], a->path = g[1], a->flags = (int) how.flags;
      a->mode = (mode_t) how.mode, a->resolve = how.resolve;
      return 0;
    }
}

static int
decode (struct vr_call *c, struct open_args *a)
{
  int r = decode_ (c, a);
  if (r == 0 && (a->flags & O_PATH))
    a->flags &= O_PATH_FLAGS;
  return r;
}

/* An open(O_PATH)'s fd |fd| (consumed) → what is injected for it
 * (vroot-opath.c); other opens' fds pass through. */
static int
as_opath (int fd, int flags)
{
  if (fd < 0 || !(flags & O_PATH))
    return fd;
  int r = vr_opath_fd (fd);
  close (fd);
  return r;
}

static bool
writes (int oflags)
{
  return (oflags & O_ACCMODE) != O_RDONLY || (oflags & O_TRUNC)
         || vr_creates (oflags);
}

/* /proc/<pid>/fd/N of a container process: a new open of the very file
 * the caller holds (what the kernel does for that magic link).  The
 * kernel checks the mount's read-only flag again at that open; the view's
 * read-only paths are no mount, so they are checked here (an fd opened
 * read-only under one was reopened for writing). */
static int64_t
open_fdref (struct vr_call *c, const struct vr_path *p, int flags)
{
  char link[64];
  int fd;
  if (p->fd_pid != c->task->tgid && !c->ctx.pid_ok (c->ctx.ud, p->fd_pid))
    return -ENOENT;
  _cleanup_fd_ int dup = vr_caller_fd (c, p->fd_pid, p->fd_num);
  if (dup < 0)
    return dup == -EBADF ? -ENOENT : dup;
  snprintf (link, sizeof link, "/proc/self/fd/%d", dup);
  /* A new open file description of something outside the view (an fd
   * inherited from the host) would be a new access to it: refused.
   * Pipes, memfds and the like have no path, and reopen as the kernel
   * does. */
  char host[PATH_MAX], vpath[PATH_MAX];
  ssize_t n = readlink (link, host, sizeof host - 1);
  if (n < 0)
    return -errno;
  host[n] = '\0';
  if (host[0] == '/' && !cm_startswith (host, "/memfd:")
      && vr_host_to_virtual (c->s->v, host, vpath) < 0)
    return -EACCES;
  int r = writes (flags) ? vr_fd_readonly (c, dup) : 0;
  if (r < 0)
    return r;
  /* A named FIFO's reopen waits for its peer as any open of it: not on
   * this loop (an anonymous pipe's never waits). */
  struct stat st;
  if (vr_fifo_may_wait (flags) && host[0] == '/' && fstat (dup, &st) == 0
      && S_ISFIFO (st.st_mode))
    return vr_fifo_wait (c, cm_steal_fd (&dup), flags, -1);
  fd = open (link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* The fast path (runtime/vroot-fast.c): the parent pinned in one openat2,
 * the last name opened under it without following a symlink.  VR_SLOW
 * when the walk must answer: a relative path at a dirfd, O_PATH that
 * would follow a last symlink, a write into a read-only path (the walk
 * says ENOENT or EROFS in its order), a symlink anywhere. */
static int64_t
fast_open (struct vr_call *c, const struct open_args *a, const char *path)
{
  struct vr_plain p;
  bool owned;
  int fd, r;
  if ((path[0] != '/' && a->dirfd != AT_FDCWD) || (a->resolve & SCOPED))
    return VR_SLOW;
  if ((r = vr_plain (c->s->v, c->task->cwd, path, &p)) != 0)
    return r < 0 ? r : VR_SLOW;
  if (p.ro && writes (a->flags))
    return VR_SLOW;
  int dfd = vr_plain_parent (&c->s->dcache, vr_cred_tag (), &p, &owned);
  if (dfd < 0)
    return dfd == -ELOOP ? VR_SLOW : dfd;
  /* A FIFO's open may wait for its peer, and must not on this loop: the
   * object's type is known only once open (its fstat is the device
   * check's), so the open is made O_NONBLOCK and the flag cleared after
   * on anything else (vroot-fifo.c). */
  bool nb = vr_fifo_may_wait (a->flags);
  mode_t type;
  struct open_how how = {
    .flags = (uint64_t) (a->flags | O_NOFOLLOW | O_CLOEXEC
                         | (nb ? O_NONBLOCK : 0)),
    .mode = vr_creates (a->flags) ? a->mode & ~vr_umask (c) & 07777 : 0,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  fd = (int) syscall (SYS_openat2, dfd, p.name, &how, sizeof how);
  fd = fd < 0 ? -errno : fd;
  if (owned)
    close (dfd);
  /* ENOENT is the answer (a last symlink exists); any other error may
   * come from a last symlink not followed (ELOOP, ENOTDIR for
   * O_DIRECTORY, ...): unless the caller asked for O_NOFOLLOW, the walk
   * says. */
  /* ENXIO: a FIFO without a reader (or a socket, a device without its
   * driver): the walk knows the type before it opens. */
  if (fd < 0)
    return fd == -ENOENT || ((a->flags & O_NOFOLLOW) && fd != -ENXIO)
           ? fd : VR_SLOW;
  if ((r = vr_devnode_type (p.ent, fd, a->flags, &type)) < 0)
    {
      close (fd);
      return r;
    }
  /* A reader: it counts already, and stays until the waiting open does. */
  if (nb && type == S_IFIFO && (a->flags & O_ACCMODE) == O_RDONLY)
    return vr_fifo_wait (c, fd, a->flags, fcntl (fd, F_DUPFD_CLOEXEC, 0));
  if (nb && fcntl (fd, F_SETFL, a->flags) < 0)
    {
      r = -errno;
      close (fd);
      return r;
    }
  /* O_PATH opens a last symlink itself (ELOOP here): the walk follows
   * it unless the caller asked not to. */
  fd = as_opath (fd, a->flags);
  if (fd == -ELOOP && !(a->flags & O_NOFOLLOW))
    return VR_SLOW;
  if (fd < 0)
    return fd;
  int64_t ret = vr_inject (c, fd, a->flags & O_CLOEXEC);
  close (fd);
  return ret;
}

/* A FIFO the walk found, opened on a thread that may wait for its peer
 * (vroot-fifo.c) from an O_PATH fd of it.  A FIFO's open writes nothing
 * to its file system: the kernel allows it under a read-only mount. */
static int64_t
fifo_open (struct vr_call *c, const struct vr_path *p, int flags)
{
  int src = vr_open (p, O_PATH, 0);
  if (src < 0)
    return src;
  return vr_fifo_wait (c, src, flags, -1);
}

int64_t
vr_do_open (struct vr_call *c)
{
  char path[PATH_MAX];
  struct open_args a;
  struct vr_path p;
  int rflags = 0, fd, r;

  if ((r = decode (c, &a)) < 0 || (r = vr_read_path (c, a.path, path)) < 0)
    return r;
  int64_t fast = fast_open (c, &a, path);
  if (fast != VR_SLOW)
    return fast;
  /* RESOLVE_* that only narrow what may be crossed are honoured by
   * refusing what they refuse; BENEATH/IN_ROOT keep the answer under the
   * caller's dirfd (vroot-beneath.c). */
  if ((a.resolve & RESOLVE_NO_SYMLINKS) || (a.flags & O_NOFOLLOW))
    rflags |= VR_NOFOLLOW;
  if (a.flags & O_CREAT)
    rflags |= VR_CREATE;
  r = a.resolve & SCOPED
          ? vr_resolve_scoped (c, a.dirfd, path, rflags, a.resolve, &p)
          : vr_resolve_at (c, a.dirfd, path, rflags, &p);
  if (r < 0)
    return r;
  if (p.ent == NULL)
    {
      if (a.resolve & (RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS))
        return -ELOOP;
      int64_t f = open_fdref (c, &p, a.flags);
      if (f == VR_ANSWERED)
        return f;
      fd = (int) f;
    }
  else if (p.type == S_IFLNK && !(a.flags & O_PATH))
    return -ELOOP;              /* O_NOFOLLOW on a symlink */
  else if ((a.flags & O_CREAT) && (a.flags & O_EXCL) && !p.missing)
    return -EEXIST;
  else if (p.type == S_IFIFO && vr_fifo_may_wait (a.flags))
    return fifo_open (c, &p, a.flags);
  else if (!(a.flags & O_PATH) && (r = vr_devtty_is (&p)) != 0)
    return r < 0 ? r : vr_devtty_open (c, a.flags);
  else
    fd = vr_open (&p, a.flags, vr_creates (a.flags)
                  ? a.mode & ~vr_umask (c) & 07777 : 0);
  if (fd >= 0 && p.ent && (r = vr_devnode_check (p.ent, fd, a.flags)) < 0)
    {
      close (fd);
      return r;
    }
  /* O_PATH: a read open of the object (vroot-opath.c), which a /proc
   * maps, mount table or socket table must then be drawn for like any
   * read open. */
  int rd = (a.flags & O_PATH) ? O_RDONLY : a.flags;
  if ((fd = as_opath (fd, a.flags)) >= 0 && p.ent)
    fd = vr_procmounts_serve (c, &p, rd, fd);
  if (fd >= 0 && p.ent)
    fd = vr_procnet_serve (c, &p, rd, fd);
  if (fd >= 0)
    {
      int maps = vr_procmaps_wanted (&p, rd);
      if (maps != VR_MAPS_NO)
        {
          int copy = vr_procmaps_copy (c, fd, maps);
          close (fd);
          fd = copy;
        }
    }
  if (fd < 0)
    return fd;
  int64_t ret = vr_inject (c, fd, a.flags & O_CLOEXEC);
  close (fd);
  return ret;
}
