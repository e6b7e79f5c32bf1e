/* The virtual root's path walk (runtime/vroot.h has the model).  Pure
 * logic over pinned fds: no host path string is ever resolved, the walk
 * state is the canonical virtual path plus an O_PATH fd of it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot.h"

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)
#define MAX_HOPS 40             /* the kernel's MAXSYMLINKS */

static int
openat2_ (int dfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
  struct open_how how = { .flags = (uint64_t) flags, .mode = mode,
                          .resolve = resolve };
  int fd = (int) syscall (SYS_openat2, dfd, path, &how, sizeof how);
  return fd < 0 ? -errno : fd;
}

static bool
is_under (const char *path, const char *dest, size_t dest_len)
{
  if (dest_len == 1)
    return path[0] == '/';
  return strncmp (path, dest, dest_len) == 0
         && (path[dest_len] == '\0' || path[dest_len] == '/');
}

const struct vr_entry *
vr_entry_for (const struct vroot *v, const char *vpath)
{
  const struct vr_entry *best = &v->e[0];
  for (size_t i = 1; i < v->n; i++)
    if (v->e[i].dest_len >= best->dest_len
        && is_under (vpath, v->e[i].dest, v->e[i].dest_len))
      best = &v->e[i];
  return best;
}

static const char *
rel_of (const struct vr_entry *e, const char *vpath)
{
  const char *rel = vpath + (e->dest_len == 1 ? 0 : e->dest_len);
  while (*rel == '/')
    rel++;
  return *rel ? rel : ".";
}

/* O_PATH fd of canonical virtual directory |vpath| (symlink-free by
 * construction, hence RESOLVE_NO_SYMLINKS: a component swapped for a
 * symlink since the walk fails instead of being followed). */
static int
open_vdir (const struct vroot *v, const char *vpath)
{
  const struct vr_entry *e = vr_entry_for (v, vpath);
  if (!e->dir)
    return -ENOTDIR;
  return openat2_ (e->fd, rel_of (e, vpath), O_PATH | O_DIRECTORY | O_CLOEXEC,
                   0, IN_ROOT);
}

struct walk
{
  const struct vroot *v;
  const struct vr_ctx *ctx;
  int flags;
  char vpath[PATH_MAX];
  int cur;                      /* O_PATH fd of vpath, -1: not opened yet */
  char rest[PATH_MAX];          /* what is left to walk */
  int hops;
  struct vr_path *out;
};

static void
set_vpath (struct walk *w, const char *vpath)
{
  if (w->vpath != vpath)
    memmove (w->vpath, vpath, strlen (vpath) + 1);
  if (w->cur >= 0)
    close (w->cur);
  w->cur = -1;
}

static void
pop (struct walk *w)
{
  char *s = strrchr (w->vpath, '/');
  if (s == w->vpath)
    s[1] = '\0';
  else
    *s = '\0';
  set_vpath (w, w->vpath);
}

static int
join (char out[PATH_MAX], const char *dir, const char *name)
{
  int n = snprintf (out, PATH_MAX, "%s%s%s", dir,
                    strcmp (dir, "/") == 0 ? "" : "/", name);
  return n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Replaces the component just read with |target| followed by what was
 * left after it. */
static int
splice_in (struct walk *w, const char *target, const char *left, bool slash)
{
  char buf[PATH_MAX];
  if (++w->hops > MAX_HOPS)
    return -ELOOP;
  if (*target == '\0')
    return -ENOENT;
  if (snprintf (buf, sizeof buf, "%s%s%s", target, *left || slash ? "/" : "",
                left) >= (int) sizeof buf)
    return -ENAMETOOLONG;
  memcpy (w->rest, buf, sizeof buf);
  if (target[0] == '/')
    set_vpath (w, "/");
  return 0;
}

bool
vr_all_digits (const char *s)
{
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

/* /proc of the view: "self" and "thread-self" are the caller (the walk
 * runs in the supervisor, whose own /proc/self means nothing to the
 * container); a pid that is not the container's does not exist.
 * Returns 1 when |comp| was replaced by a spliced target. */
static int
proc_root_step (struct walk *w, const char *comp, const char *left,
                bool slash)
{
  const struct vr_ctx *c = w->ctx;
  char t[64];
  if ((strcmp (comp, "self") == 0 || strcmp (comp, "thread-self") == 0)
      && !(*left == '\0' && !slash && (w->flags & VR_NOFOLLOW)))
    {
      if (c->tgid <= 0)
        return -ENOENT;
      if (comp[0] == 's')
        snprintf (t, sizeof t, "%d", (int) c->tgid);
      else
        snprintf (t, sizeof t, "%d/task/%d", (int) c->tgid, (int) c->tid);
      int r = splice_in (w, t, left, slash);
      return r < 0 ? r : 1;
    }
  if (vr_all_digits (comp))
    {
      long pid = strtol (comp, NULL, 10);
      if (pid != c->tgid && !(c->pid_ok && c->pid_ok (c->ud, (pid_t) pid)))
        return -ENOENT;
    }
  return 0;
}

/* A symlink inside /proc/<pid>/ is a magic link (cwd, root, exe, fd/N,
 * map_files, ns/…): its host target means nothing in the view.  The
 * supervisor draws the ones it knows; the others are refused. */
static int
proc_magic (struct walk *w, const struct vr_entry *e, const char *cand,
            bool last, bool slash, const char *left)
{
  const char *p = rel_of (e, cand), *sep = strchr (p, '/');
  char target[PATH_MAX];
  long pid = strtol (p, NULL, 10);
  int r;
  if (sep == NULL)
    return -EACCES;
  if (last && !(w->flags & VR_NOFOLLOW) && cm_startswith (sep + 1, "fd/"))
    {
      /* The caller's own fd: opened by dup, never by a path. */
      w->out->ent = NULL;
      w->out->fd_pid = (pid_t) pid;
      w->out->fd_num = atoi (sep + 4);
      return 1;
    }
  if (w->ctx->magic == NULL)
    return -EACCES;
  r = w->ctx->magic (w->ctx->ud, (pid_t) pid, sep + 1, target);
  if (r < 0)
    return r;
  if (target[0] != '/')
    return -EACCES;
  return splice_in (w, target, left, slash);
}

static int
finish (struct walk *w, mode_t type, bool missing)
{
  struct vr_path *o = w->out;
  o->ent = vr_entry_for (w->v, w->vpath);
  memcpy (o->vpath, w->vpath, sizeof o->vpath);
  snprintf (o->rel, sizeof o->rel, "%s", rel_of (o->ent, w->vpath));
  o->type = type;
  o->missing = missing;
  for (size_t i = 0; i < w->v->nmasked; i++)
    if (is_under (o->vpath, w->v->masked[i], strlen (w->v->masked[i])))
      return -ENOENT;
  for (size_t i = 0; i < w->v->nreadonly; i++)
    o->ro |= is_under (o->vpath, w->v->readonly[i],
                       strlen (w->v->readonly[i]));
  return 1;
}

static const struct vr_entry *
mount_at (const struct vroot *v, const char *vpath)
{
  for (size_t i = v->n; i-- > 1;)       /* a later mount hides an earlier */
    if (strcmp (v->e[i].dest, vpath) == 0)
      return &v->e[i];
  return NULL;
}

/* One name under w->vpath.  Returns 0 to go on, 1 when the walk is done,
 * or -errno. */
static int
step (struct walk *w, const char *comp, bool last, bool slash,
      const char *left)
{
  const struct vr_entry *here = vr_entry_for (w->v, w->vpath), *m;
  char cand[PATH_MAX], target[PATH_MAX];
  bool follow = !last || slash || !(w->flags & VR_NOFOLLOW);
  struct stat st;
  ssize_t n;
  int r;

  if (here->kind == VR_PROC && strcmp (here->dest, w->vpath) == 0
      && (r = proc_root_step (w, comp, left, slash)) != 0)
    return r < 0 ? r : 0;
  if ((r = join (cand, w->vpath, comp)) < 0)
    return r;
  if ((m = mount_at (w->v, cand)) != NULL)
    {
      if ((!last || slash) && !m->dir)
        return -ENOTDIR;
      set_vpath (w, cand);
      return last ? finish (w, m->dir ? S_IFDIR : S_IFREG, false) : 0;
    }
  if (w->cur < 0 && (w->cur = open_vdir (w->v, w->vpath)) < 0)
    return w->cur;
  if (fstatat (w->cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT && last && (w->flags & VR_CREATE))
        {
          set_vpath (w, cand);
          return finish (w, 0, true);
        }
      return -errno;
    }
  if (S_ISLNK (st.st_mode) && follow)
    {
      if (here->kind == VR_PROC && strcmp (here->dest, w->vpath) != 0)
        return proc_magic (w, here, cand, last, slash, left);
      n = readlinkat (w->cur, comp, target, sizeof target);
      if (n < 0)
        return -errno;
      if ((size_t) n >= sizeof target)
        return -ENAMETOOLONG;
      target[n] = '\0';
      return splice_in (w, target, left, slash);
    }
  if (last && !slash)
    {
      set_vpath (w, cand);
      return finish (w, st.st_mode & S_IFMT, false);
    }
  if (!S_ISDIR (st.st_mode))
    return -ENOTDIR;
  r = openat2_ (w->cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
  if (r < 0)
    return r;
  set_vpath (w, cand);
  w->cur = r;
  return last ? finish (w, S_IFDIR, false) : 0;
}

static int
walk (struct walk *w)
{
  char comp[NAME_MAX + 1];
  for (;;)
    {
      char *p = w->rest, *end, *q;
      size_t len;
      bool last, slash;
      int r;

      while (*p == '/')
        p++;
      if (*p == '\0')
        return finish (w, S_IFDIR, false);
      end = strchrnul (p, '/');
      len = (size_t) (end - p);
      if (len > NAME_MAX)
        return -ENAMETOOLONG;
      memcpy (comp, p, len);
      comp[len] = '\0';
      for (q = end; *q == '/'; q++)
        ;
      last = *q == '\0';
      slash = *end == '/';
      memmove (w->rest, q, strlen (q) + 1);
      if (strcmp (comp, ".") == 0)
        continue;
      if (strcmp (comp, "..") == 0)
        {
          pop (w);
          continue;
        }
      r = step (w, comp, last, slash, w->rest);
      if (r != 0)
        return r;
    }
}

int
vr_resolve (const struct vroot *v, const struct vr_ctx *ctx, const char *base,
            const char *path, int flags, struct vr_path *out)
{
  struct walk w = { .v = v, .ctx = ctx, .flags = flags, .cur = -1, .out = out };
  int r;

  if (*path == '\0')
    return -ENOENT;
  if (strlen (path) >= PATH_MAX || strlen (base) >= PATH_MAX)
    return -ENAMETOOLONG;
  if (path[0] != '/' && base[0] != '/')
    return -EINVAL;
  memset (out, 0, sizeof *out);
  snprintf (w.vpath, sizeof w.vpath, "%s", path[0] == '/' ? "/" : base);
  snprintf (w.rest, sizeof w.rest, "%s", path);
  r = walk (&w);
  if (w.cur >= 0)
    close (w.cur);
  return r < 0 ? r : 0;
}

static bool
writes (int oflags)
{
  return (oflags & O_ACCMODE) != O_RDONLY
         || (oflags & O_TRUNC) || vr_creates (oflags);
}

int
vr_open (const struct vr_path *p, int oflags, mode_t mode)
{
  char proc[64];
  int fd;
  if (p->ent == NULL)
    return -EINVAL;
  if (writes (oflags) && vr_readonly (p))
    return -EROFS;
  if (!p->ent->dir)
    {
      /* A file bind mount: reopen the pinned fd itself. */
      if (oflags & O_DIRECTORY)
        return -ENOTDIR;
      snprintf (proc, sizeof proc, "/proc/self/fd/%d", p->ent->fd);
      fd = open (proc, (oflags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC);
      return fd < 0 ? -errno : fd;
    }
  return openat2_ (p->ent->fd, p->rel, oflags | O_NOFOLLOW | O_CLOEXEC,
                   vr_creates (oflags) ? mode : 0, IN_ROOT);
}

int
vr_open_parent (const struct vroot *v, const struct vr_path *p,
                char name[NAME_MAX + 1])
{
  char dir[PATH_MAX];
  const char *s;
  if (p->ent == NULL)
    return -EINVAL;
  if (strcmp (p->rel, ".") == 0)
    return -EBUSY;
  s = strrchr (p->vpath, '/');
  snprintf (name, NAME_MAX + 1, "%s", s + 1);
  if (s == p->vpath)
    snprintf (dir, sizeof dir, "/");
  else
    snprintf (dir, sizeof dir, "%.*s", (int) (s - p->vpath), p->vpath);
  return open_vdir (v, dir);
}
