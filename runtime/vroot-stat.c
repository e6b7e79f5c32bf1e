/* The read-only path calls in the view: the stat family, access, readlink,
 * statfs, and the virtual cwd (getcwd, chdir, fchdir).  Results are
 * computed here on pinned fds and written into the caller's buffers with
 * the kernel's own struct layouts (runtime/vroot-sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

/* |addr|'s string; "" for NULL (AT_EMPTY_PATH may take it). */
static int
read_path (struct vr_call *c, uint64_t addr, char path[PATH_MAX])
{
  if (addr == 0)
    return path[0] = '\0', 0;
  return vr_read_path (c, addr, path);
}

/* The object |path| at |dirfd| names, as (fd, name, AT_EMPTY_PATH?):
 * "" with AT_EMPTY_PATH is the dirfd itself, /proc/<pid>/fd/N the
 * caller's file, anything else a walk of the view. */
static int
object (struct vr_call *c, int dirfd, char path[PATH_MAX], int atflags,
        char name[NAME_MAX + 1], int *empty)
{
  struct vr_path p;
  int r;

  if (path[0] == '\0')
    {
      if (!(atflags & AT_EMPTY_PATH))
        return -ENOENT;
      if (dirfd != AT_FDCWD)
        {
          name[0] = '\0', *empty = AT_EMPTY_PATH;
          return vr_caller_fd (c, c->task->tgid, dirfd);
        }
      snprintf (path, PATH_MAX, ".");
    }
  r = vr_resolve_at (c, dirfd, path,
                     (atflags & AT_SYMLINK_NOFOLLOW) ? VR_NOFOLLOW : 0, &p);
  if (r < 0)
    return r;
  if (p.ent == NULL)
    {
      if (p.fd_pid != c->task->tgid && !c->ctx.pid_ok (c->ctx.ud, p.fd_pid))
        return -ENOENT;
      name[0] = '\0', *empty = AT_EMPTY_PATH;
      return vr_caller_fd (c, p.fd_pid, p.fd_num);
    }
  return vr_at (c, &p, name, empty);
}

/* The stat family's fast path (runtime/vroot-fast.c): the parent pinned
 * in one openat2, the last name looked at under it without following it.
 * 0 with |*fd| (owned when |*owned|); 1: the walk must answer. */
static int
fast_object (struct vr_call *c, int dirfd, const char *path, int *fd,
             bool *owned, const char **name, struct vr_plain *p)
{
  int r;
  if (path[0] != '/' && dirfd != AT_FDCWD)
    return 1;
  if ((r = vr_plain (c->s->v, c->task->cwd, path, p)) != 0)
    return r;
  *fd = vr_plain_parent (&c->s->dcache, vr_cred_tag (), p, owned);
  if (*fd < 0)
    return *fd == -ELOOP ? 1 : *fd;
  *name = p->name;
  return 0;
}

/* The kernel's struct for (|fd|, |name|) written into the caller.  1,
 * writing nothing, when it is a symlink and |follow|: the walk must
 * follow it. */
static int64_t
stat_into (struct vr_call *c, int fd, const char *name, int empty, int fl,
           bool follow)
{
  const __u64 *g = c->req->data.args;
  int nr = c->req->data.nr;
  uint64_t buf = nr == SYS_newfstatat ? g[2] : nr == SYS_statx ? g[4] : g[1];
  if (nr == SYS_statx)
    {
      struct statx sx;
      if (statx (fd, name, AT_SYMLINK_NOFOLLOW | empty
                 | (fl & AT_STATX_SYNC_TYPE), (unsigned) g[3], &sx) < 0)
        return -errno;
      if (follow && S_ISLNK (sx.stx_mode))
        return 1;
      return vr_write_mem (c, buf, &sx, sizeof sx);
    }
  struct stat st;
  if (fstatat (fd, name, &st, AT_SYMLINK_NOFOLLOW | empty) < 0)
    return -errno;
  if (follow && S_ISLNK (st.st_mode))
    return 1;
  return vr_write_mem (c, buf, &st, sizeof st);
}

int64_t
vr_do_stat (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  char name[NAME_MAX + 1], path[PATH_MAX];
  int dirfd = AT_FDCWD, fl = 0, empty;
  uint64_t addr = g[0];

  switch (c->req->data.nr)
    {
    case SYS_lstat:
      fl = AT_SYMLINK_NOFOLLOW;
      break;
    case SYS_newfstatat:
      dirfd = (int) g[0], addr = g[1], fl = (int) g[3];
      break;
    case SYS_statx:
      dirfd = (int) g[0], addr = g[1], fl = (int) g[2];
      break;
    default:
      break;
    }
  bool follow = !(fl & AT_SYMLINK_NOFOLLOW), owned = false;
  int64_t r = read_path (c, addr, path);
  if (r < 0)
    return r;
  if (path[0] != '\0')
    {
      struct vr_plain p;
      const char *n = NULL;
      int pfd = -1;
      r = fast_object (c, dirfd, path, &pfd, &owned, &n, &p);
      if (r < 0)
        return r;
      if (r == 0)
        {
          r = stat_into (c, pfd, n, 0, fl, follow);
          if (owned)
            close (pfd);
          /* ENOENT is the answer (the walk would find no more); 1, or
           * another error, may be a symlink's: the walk says. */
          if (r == 0 || r == -ENOENT || r == -EFAULT)
            return r;
        }
    }
  _cleanup_fd_ int fd = object (c, dirfd, path, fl, name, &empty);
  if (fd < 0)
    return fd;
  r = stat_into (c, fd, name, empty, fl, false);
  return r;
}

int64_t
vr_do_access (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  char name[NAME_MAX + 1];
  int dirfd = AT_FDCWD, mode = (int) g[1], fl = 0, empty;
  uint64_t path = g[0];
  int sw = 0;
  if (c->req->data.nr != SYS_access)
    {
      dirfd = (int) g[0], path = g[1], mode = (int) g[2];
      if (c->req->data.nr == SYS_faccessat2)
        fl = (int) g[3];
    }
  char buf[PATH_MAX];
  int r = read_path (c, path, buf);
  if (r < 0)
    return r;
  /* access(2) checks with the real ids, the walk included: the caller's,
   * set on this thread, then checked as effective ones (the supervisor's
   * own real ids are not the caller's). */
  if (!(fl & AT_EACCESS))
    {
      vr_cred_leave ();
      if ((sw = vr_cred_enter (c->tid, true)) < 0)
        return sw;
    }
  _cleanup_fd_ int fd = object (c, dirfd, buf, fl, name, &empty);
  if (fd < 0)
    return fd;
  if (syscall (SYS_faccessat2, fd, name, mode, AT_SYMLINK_NOFOLLOW | empty
               | (fl & AT_EACCESS) | (sw > 0 ? AT_EACCESS : 0)) < 0)
    return -errno;
  return 0;
}

/* readlink of a magic link of /proc/<pid>/: drawn, never the host's. */
static int
proc_link (struct vr_call *c, const struct vr_path *p, char out[PATH_MAX])
{
  const char *rel = p->rel, *sep = strchr (rel, '/');
  if (p->ent->kind == VR_PROC && strcmp (rel, "self") == 0)
    return snprintf (out, PATH_MAX, "%d", (int) c->ctx.tgid), 0;
  if (p->ent->kind == VR_PROC && strcmp (rel, "thread-self") == 0)
    return snprintf (out, PATH_MAX, "%d/task/%d", (int) c->ctx.tgid,
                     (int) c->ctx.tid), 0;
  if (p->ent->kind != VR_PROC || sep == NULL || rel[0] < '0' || rel[0] > '9')
    return 1;
  return c->ctx.magic (c->ctx.ud, (pid_t) atoi (rel), sep + 1, out);
}

int64_t
vr_do_readlink (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  bool at = c->req->data.nr == SYS_readlinkat;
  int dirfd = at ? (int) g[0] : AT_FDCWD, r;
  uint64_t buf = at ? g[2] : g[1];
  int64_t size = (int64_t) (at ? g[3] : g[2]);
  char path[PATH_MAX], target[PATH_MAX], name[NAME_MAX + 1];
  struct vr_path p;
  ssize_t n;

  if (size <= 0)
    return -EINVAL;
  if ((r = vr_read_path (c, at ? g[1] : g[0], path)) < 0
      || (r = vr_resolve_at (c, dirfd, path, VR_NOFOLLOW, &p)) < 0)
    return r;
  if (p.type != S_IFLNK)
    return -EINVAL;
  if ((r = proc_link (c, &p, target)) < 0)
    return r;
  if (r == 0)
    n = (ssize_t) strlen (target);
  else
    {
      _cleanup_fd_ int dfd = vr_open_parent (c->s->v, &p, name);
      if (dfd < 0)
        return dfd;
      if ((n = readlinkat (dfd, name, target, sizeof target)) < 0)
        return -errno;
    }
  if (n > size)
    n = size;
  r = vr_write_mem (c, buf, target, (size_t) n);
  return r < 0 ? r : n;
}

int64_t
vr_do_statfs (struct vr_call *c)
{
  char name[NAME_MAX + 1];
  struct statfs sf;
  char path[PATH_MAX];
  int empty, r = read_path (c, c->req->data.args[0], path);
  if (r < 0)
    return r;
  _cleanup_fd_ int dfd = object (c, AT_FDCWD, path, 0, name, &empty);
  if (dfd < 0)
    return dfd;
  _cleanup_fd_ int fd = empty ? -1 : openat (dfd, name, O_PATH | O_NOFOLLOW
                                             | O_CLOEXEC);
  if (fstatfs (empty ? dfd : fd, &sf) < 0)
    return -errno;
  return vr_write_mem (c, c->req->data.args[1], &sf, sizeof sf);
}

static int
set_cwd (struct vr_call *c, const char *vpath)
{
  free (c->task->cwd);
  c->task->cwd = xstrdup (vpath);
  return 0;
}

static int64_t
do_chdir (struct vr_call *c)
{
  char path[PATH_MAX], name[NAME_MAX + 1];
  struct vr_path p;
  int r, empty;
  if ((r = vr_read_path (c, c->req->data.args[0], path)) < 0
      || (r = vr_resolve_at (c, AT_FDCWD, path, 0, &p)) < 0)
    return r;
  if (p.ent == NULL)
    return -EACCES;
  if (p.type != S_IFDIR)
    return -ENOTDIR;
  _cleanup_fd_ int fd = vr_at (c, &p, name, &empty);
  if (fd < 0)
    return fd;
  if (syscall (SYS_faccessat2, fd, name, X_OK, AT_SYMLINK_NOFOLLOW | empty) < 0)
    return -errno;
  return set_cwd (c, p.vpath);
}

static int64_t
do_fchdir (struct vr_call *c)
{
  char vpath[PATH_MAX];
  int r;
  if ((r = vr_caller_dir (c, (int) c->req->data.args[0], vpath)) < 0)
    return r;
  return set_cwd (c, vpath);
}

int64_t
vr_do_cwd (struct vr_call *c)
{
  size_t len = strlen (c->task->cwd) + 1;
  int r;
  if (c->req->data.nr == SYS_chdir)
    return do_chdir (c);
  if (c->req->data.nr == SYS_fchdir)
    return do_fchdir (c);
  if (c->req->data.args[1] < len)
    return -ERANGE;
  r = vr_write_mem (c, c->req->data.args[0], c->task->cwd, len);
  return r < 0 ? r : (int64_t) len;
}
