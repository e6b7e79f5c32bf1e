/* The write family in the view: mkdir, unlink/rmdir, rename, symlink,
 * link, chmod, chown, truncate, utimensat, mknod.  Each is done here on
 * the fd of the parent directory the walk pinned (or on an O_PATH fd of
 * the object through /proc/self/fd), never on a host path string
 * (sandlock-notes §4.2's TOCTOU gap). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452       /* Linux 6.6; same number on every arch */
#endif

struct target
{
  struct vr_path p;
  char name[NAME_MAX + 1];
  int dfd;                      /* parent of p; owned */
};

static void
target_close (struct target *t)
{
  if (t->dfd >= 0)
    close (t->dfd);
}

/* Resolves |addr| at |dirfd| (NOFOLLOW: the last name itself) and pins
 * its parent; refuses read-only entries and mount points. */
static int
target (struct vr_call *c, int dirfd, uint64_t addr, int flags,
        struct target *t)
{
  char path[PATH_MAX];
  int r;
  t->dfd = -1;
  if ((r = vr_read_path (c, addr, path)) < 0
      || (r = vr_resolve_at (c, dirfd, path, flags, &t->p)) < 0)
    return r;
  if (t->p.ent == NULL)
    return -EACCES;
  if (vr_readonly (&t->p))
    return -EROFS;
  t->dfd = vr_open_parent (c->s->v, &t->p, t->name);
  return t->dfd < 0 ? t->dfd : 0;
}

#define CREATE (VR_CREATE | VR_NOFOLLOW)

static int64_t
do_make (struct vr_call *c, int dirfd, uint64_t addr, mode_t mode, dev_t dev,
         bool dir)
{
  _cleanup_ (target_close) struct target t = { .dfd = -1 };
  int r = target (c, dirfd, addr, CREATE, &t);
  /* A name that exists is EEXIST first, as in the kernel: `mkdir -p`
   * tries "/" and every mount point on the way, and reads EEXIST as
   * "there already". */
  if ((r == -EROFS || r == -EBUSY) && !t.p.missing)
    return -EEXIST;
  if (r < 0)
    return r;
  if (!t.p.missing)
    return -EEXIST;
  mode &= ~vr_umask (c);
  if (dir)
    r = mkdirat (t.dfd, t.name, mode & 07777);
  else if (S_ISCHR (mode) || S_ISBLK (mode))
    return -EPERM;              /* no device nodes in the view */
  else
    r = mknodat (t.dfd, t.name, mode, dev);
  return r < 0 ? -errno : 0;
}

static int64_t
do_unlink (struct vr_call *c, int dirfd, uint64_t addr, int flags)
{
  _cleanup_ (target_close) struct target t = { .dfd = -1 };
  int r = target (c, dirfd, addr, VR_NOFOLLOW, &t);
  if (r < 0)
    return r;
  return unlinkat (t.dfd, t.name, flags & AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* True when a masked or read-only path, or a mount point, lies strictly
 * under |vpath|.  Those are names in the view, not mounts: a rename of a
 * directory above one would carry the object out from under its name
 * (a namespaced container's mount moves with the directory). */
static bool
holds_marks (const struct vroot *v, const char *vpath)
{
  size_t n = strlen (vpath);
  const char *const *lists[] = { (const char *const *) v->masked,
                                 (const char *const *) v->readonly };
  size_t lens[] = { v->nmasked, v->nreadonly };
  bool root = n == 1;
  for (size_t l = 0; l < 2; l++)
    for (size_t i = 0; i < lens[l]; i++)
      if (root || (strncmp (lists[l][i], vpath, n) == 0 && lists[l][i][n] == '/'))
        return true;
  for (size_t i = 1; i < v->n; i++)
    if (root || (strncmp (v->e[i].dest, vpath, n) == 0 && v->e[i].dest[n] == '/'))
      return true;
  return false;
}

static int64_t
do_rename (struct vr_call *c, int od, uint64_t oa, int nd, uint64_t na,
           unsigned flags)
{
  _cleanup_ (target_close) struct target o = { .dfd = -1 };
  _cleanup_ (target_close) struct target n = { .dfd = -1 };
  int r = target (c, od, oa, VR_NOFOLLOW, &o);
  if (r < 0 || (r = target (c, nd, na, CREATE, &n)) < 0)
    return r;
  if (o.p.ent != n.p.ent)
    return -EXDEV;
  if (holds_marks (c->s->v, o.p.vpath) || holds_marks (c->s->v, n.p.vpath))
    return -EBUSY;
  r = (int) syscall (SYS_renameat2, o.dfd, o.name, n.dfd, n.name, flags);
  return r < 0 ? -errno : 0;
}

static int64_t
do_symlink (struct vr_call *c, uint64_t ta, int nd, uint64_t na)
{
  char text[PATH_MAX];
  _cleanup_ (target_close) struct target n = { .dfd = -1 };
  int r = vr_read_path (c, ta, text);
  /* The text is stored as written: it is resolved in the view on use. */
  if (r < 0 || (r = target (c, nd, na, CREATE, &n)) < 0)
    return r;
  if (!n.p.missing)
    return -EEXIST;
  return symlinkat (text, n.dfd, n.name) < 0 ? -errno : 0;
}

/* 1 when |addr| is "" and |atflags| has AT_EMPTY_PATH with a real
 * dirfd: the call acts on that fd itself (an open(O_PATH) in the view
 * injects a real fd of the object: vroot-opath.c); 0 for a path; -errno.
 * The path is read again by the walk: a swap in between is a path
 * resolved in the view, or ENOENT. */
static int
empty_path (struct vr_call *c, int dirfd, uint64_t addr, int atflags)
{
  char path[PATH_MAX];
  int r;
  if (!(atflags & AT_EMPTY_PATH) || dirfd == AT_FDCWD)
    return 0;
  if ((r = vr_read_path (c, addr, path)) < 0)
    return r;
  return path[0] == '\0';
}

/* linkat(fd, "", dir, name, AT_EMPTY_PATH): the file of the caller's fd,
 * when it is of the view and of the target's entry, linked through
 * /proc/self/fd/<dup> (AT_SYMLINK_FOLLOW, which the kernel allows any
 * caller — its AT_EMPTY_PATH wants the opener's credentials, and every
 * fd of the view was opened here).  An O_TMPFILE file links; an unlinked
 * one is ENOENT (the kernel's). */
static int64_t
link_fd (struct vr_call *c, int od, int nd, uint64_t na)
{
  char host[PATH_MAX], vpath[PATH_MAX], proc[64];
  _cleanup_ (target_close) struct target n = { .dfd = -1 };
  _cleanup_fd_ int dup = vr_caller_fd (c, c->task->tgid, od);
  int r;
  if (dup < 0)
    return dup;
  if ((r = target (c, nd, na, CREATE, &n)) < 0)
    return r;
  if (!n.p.missing)
    return -EEXIST;
  if ((r = vr_fd_host_path (dup, host)) < 0)
    return r;
  if (host[0] != '/' || vr_host_to_virtual (c->s->v, host, vpath) < 0)
    return -EACCES;             /* not of the view: never linked into it */
  if (vr_entry_for (c->s->v, vpath) != n.p.ent)
    return -EXDEV;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", dup);
  r = linkat (AT_FDCWD, proc, n.dfd, n.name, AT_SYMLINK_FOLLOW);
  return r < 0 ? -errno : 0;
}

static int64_t
do_link (struct vr_call *c, int od, uint64_t oa, int nd, uint64_t na,
         int flags)
{
  _cleanup_ (target_close) struct target o = { .dfd = -1 };
  _cleanup_ (target_close) struct target n = { .dfd = -1 };
  int r = empty_path (c, od, oa, flags);
  if (r != 0)
    return r < 0 ? r : link_fd (c, od, nd, na);
  r = target (c, od, oa, (flags & AT_SYMLINK_FOLLOW) ? 0 : VR_NOFOLLOW, &o);
  if (r < 0 || (r = target (c, nd, na, CREATE, &n)) < 0)
    return r;
  if (!n.p.missing)
    return -EEXIST;
  if (o.p.ent != n.p.ent)
    return -EXDEV;
  return linkat (o.dfd, o.name, n.dfd, n.name, 0) < 0 ? -errno : 0;
}

/* chmod, chown, utimensat, truncate act on the object: an O_PATH fd of it
 * (O_NOFOLLOW: a symlink swapped in is the symlink, not its target). */
static int
object_fd (struct vr_call *c, int dirfd, uint64_t addr, int flags, int oflags)
{
  char path[PATH_MAX];
  struct vr_path p;
  int r;
  if ((r = vr_read_path (c, addr, path)) < 0
      || (r = vr_resolve_at (c, dirfd, path, flags, &p)) < 0)
    return r;
  if (p.ent == NULL)
    return -EACCES;
  if (vr_readonly (&p))
    return -EROFS;
  r = vr_open (&p, oflags, 0);
  if (r >= 0 && vr_host_node (r))
    {
      close (r);
      return -EPERM;
    }
  return r;
}

/* The caller's fd itself, for "" with AT_EMPTY_PATH: a dup, checked as
 * fchmod and fchown are (vroot-fdmeta.c). */
static int
empty_fd (struct vr_call *c, int dirfd)
{
  int fd = vr_caller_fd (c, c->task->tgid, dirfd), r;
  if (fd >= 0 && (r = vr_fd_writable (c, fd)) < 0)
    {
      close (fd);
      return r;
    }
  return fd;
}

static int64_t
do_attr (struct vr_call *c, int dirfd, uint64_t addr, int atflags)
{
  const __u64 *g = c->req->data.args;
  int nr = c->req->data.nr, r, vf = (atflags & AT_SYMLINK_NOFOLLOW) ? VR_NOFOLLOW : 0;
  char proc[64];
  struct timespec ts[2];

  if (nr == SYS_utimensat && addr == 0)
    {                           /* futimens(dirfd) */
      _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, dirfd);
      if (fd < 0)
        return fd;
      if ((r = vr_fd_writable (c, fd)) < 0)
        return r;
      if (g[2] && (r = vr_read_mem (c, g[2], ts, sizeof ts)) < 0)
        return r;
      return futimens (fd, g[2] ? ts : NULL) < 0 ? -errno : 0;
    }
  if (nr == SYS_truncate)
    {
      _cleanup_fd_ int fd = object_fd (c, dirfd, addr, 0, O_WRONLY);
      if (fd < 0)
        return fd;
      return ftruncate (fd, (off_t) g[1]) < 0 ? -errno : 0;
    }
  if ((r = empty_path (c, dirfd, addr, atflags)) < 0)
    return r;
  _cleanup_fd_ int fd = r ? empty_fd (c, dirfd)
                          : object_fd (c, dirfd, addr, vf, O_PATH);
  if (fd < 0)
    return fd;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  switch (nr)
    {
    case SYS_chmod:
      return chmod (proc, (mode_t) g[1] & 07777) < 0 ? -errno : 0;
    case SYS_fchmodat: case SYS_fchmodat2:
      return chmod (proc, (mode_t) g[2] & 07777) < 0 ? -errno : 0;
    case SYS_chown: case SYS_lchown:
      r = fchownat (fd, "", (uid_t) g[1], (gid_t) g[2], AT_EMPTY_PATH);
      return r < 0 ? -errno : 0;
    case SYS_fchownat:
      r = fchownat (fd, "", (uid_t) g[2], (gid_t) g[3], AT_EMPTY_PATH);
      return r < 0 ? -errno : 0;
    default:                    /* utimensat */
      if (g[2] && (r = vr_read_mem (c, g[2], ts, sizeof ts)) < 0)
        return r;
      return utimensat (AT_FDCWD, proc, g[2] ? ts : NULL, 0) < 0 ? -errno : 0;
    }
}

int64_t
vr_do_write (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  const int F = AT_FDCWD;
  switch (c->req->data.nr)
    {
    case SYS_mkdir: return do_make (c, F, g[0], (mode_t) g[1], 0, true);
    case SYS_mkdirat: return do_make (c, (int) g[0], g[1], (mode_t) g[2], 0, true);
    case SYS_mknod: return do_make (c, F, g[0], (mode_t) g[1], (dev_t) g[2], false);
    case SYS_mknodat:
      return do_make (c, (int) g[0], g[1], (mode_t) g[2], (dev_t) g[3], false);
    case SYS_unlink: return do_unlink (c, F, g[0], 0);
    case SYS_rmdir: return do_unlink (c, F, g[0], AT_REMOVEDIR);
    case SYS_unlinkat: return do_unlink (c, (int) g[0], g[1], (int) g[2]);
    case SYS_rename: return do_rename (c, F, g[0], F, g[1], 0);
    case SYS_renameat: return do_rename (c, (int) g[0], g[1], (int) g[2], g[3], 0);
    case SYS_renameat2:
      return do_rename (c, (int) g[0], g[1], (int) g[2], g[3], (unsigned) g[4]);
    case SYS_symlink: return do_symlink (c, g[0], F, g[1]);
    case SYS_symlinkat: return do_symlink (c, g[0], (int) g[1], g[2]);
    case SYS_link: return do_link (c, F, g[0], F, g[1], 0);
    case SYS_linkat:
      return do_link (c, (int) g[0], g[1], (int) g[2], g[3], (int) g[4]);
    case SYS_chmod: case SYS_chown: case SYS_truncate:
      return do_attr (c, F, g[0], 0);
    case SYS_lchown: return do_attr (c, F, g[0], AT_SYMLINK_NOFOLLOW);
    case SYS_fchmodat: return do_attr (c, (int) g[0], g[1], 0);
    case SYS_fchmodat2: return do_attr (c, (int) g[0], g[1], (int) g[3]);
    case SYS_fchownat: return do_attr (c, (int) g[0], g[1], (int) g[4]);
    case SYS_utimensat: return do_attr (c, (int) g[0], g[1], (int) g[3]);
    default:
      return -ENOSYS;
    }
}
