#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"

struct hl
{
  dev_t dev;
  ino_t ino;
  char *rel;                    /* its first copy, relative to the top */
};

struct copier
{
  int dsttop;
  unsigned flags;
  const char *what;
  const char *where;
  struct hl *links;
  size_t nlinks;
};

static bool
xattr_wanted (const struct copier *c, const char *name)
{
  return (c->flags & CM_COPY_ALL_XATTRS) || cm_startswith (name, "user.");
}

/* A failed xattr copy: skipped, unless CM_COPY_XATTRS_STRICT. */
static int
xattr_failed (const struct copier *c, const char *name, const char *rel,
              struct cm_err **err)
{
  if (!(c->flags & CM_COPY_XATTRS_STRICT))
    return 0;
  return cm_err_set (err, errno, "%s: xattr %s of `%s%s`", c->what, name,
                     c->where, rel);
}

/* One end of an xattr copy: a path, reached with the l* calls (a FIFO or
 * a device cannot be opened for its xattrs without opening what it is),
 * or, when |path| is NULL, an opened fd with the f* calls. */
struct xnode
{
  const char *path;
  int fd;
};

static ssize_t
x_list (const struct xnode *x, char *buf, size_t len)
{
  return x->path ? llistxattr (x->path, buf, len) : flistxattr (x->fd, buf, len);
}

static ssize_t
x_get (const struct xnode *x, const char *name, void *buf, size_t len)
{
  return x->path ? lgetxattr (x->path, name, buf, len)
                 : fgetxattr (x->fd, name, buf, len);
}

static int
x_set (const struct xnode *x, const char *name, const void *val, size_t len)
{
  return x->path ? lsetxattr (x->path, name, val, len, 0)
                 : fsetxattr (x->fd, name, val, len, 0);
}

static int
copy_xattrs (const struct copier *c, const struct xnode *src,
             const struct xnode *dst, const char *rel, struct cm_err **err)
{
  char names[8192], val[65536];
  ssize_t n = x_list (src, names, sizeof names);
  if (n < 0 && xattr_failed (c, "list", rel, err) < 0)
    return -1;
  for (ssize_t i = 0; i < n; i += (ssize_t) strlen (names + i) + 1)
    {
      ssize_t vl;
      if (!xattr_wanted (c, names + i))
        continue;
      vl = x_get (src, names + i, val, sizeof val);
      if ((vl < 0 || x_set (dst, names + i, val, (size_t) vl) < 0)
          && xattr_failed (c, names + i, rel, err) < 0)
        return -1;
    }
  return 0;
}

/* Owner, mode, xattrs and times of an opened |dst| from |s|. */
static int
meta_fd (struct copier *c, int src, int dst, const struct stat *s,
         const char *rel, struct cm_err **err)
{
  struct timespec ts[2] = { s->st_atim, s->st_mtim };
  if ((c->flags & CM_COPY_OWNERS) && fchown (dst, s->st_uid, s->st_gid) < 0)
    return cm_err_set (err, errno, "%s: chown `%s%s`", c->what, c->where, rel);
  if (fchmod (dst, s->st_mode & 07777) < 0)
    return cm_err_set (err, errno, "%s: chmod `%s%s`", c->what, c->where, rel);
  if (copy_xattrs (c, &(struct xnode) { .fd = src },
                   &(struct xnode) { .fd = dst }, rel, err) < 0)
    return -1;
  (void) futimens (dst, ts);
  return 0;
}

static int
copy_data (int in, int out, off_t size)
{
  if (ioctl (out, FICLONE, in) == 0)
    return 0;
  while (size > 0)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, (size_t) size, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL
                    || errno == EOPNOTSUPP))
        {
          char buf[65536];
          while ((n = read (in, buf, sizeof buf)) > 0)
            if (cm_write_all (out, buf, (size_t) n) < 0)
              return -1;
          return n < 0 ? -1 : 0;
        }
      if (n <= 0)
        return n < 0 ? -1 : 0;
      size -= n;
    }
  return 0;
}

static int copy_dir (struct copier *c, int src, int dst, const char *rel,
                     struct cm_err **err);

static int link_seen (struct copier *c, int ddir, const char *name,
                      const struct stat *s, const char *rel,
                      struct cm_err **err);

/* A symlink, FIFO, socket or (when asked) device node, by name in its
 * parent: exact mode (mknod applies the umask), owner, xattrs, times.  A
 * socket is its name and inode (mknod S_IFSOCK needs no privilege): the
 * listener bound to it is not copied, but the entry is not lost either. */
static int
copy_node (struct copier *c, int sdir, int ddir, const char *name,
           const struct stat *s, const char *rel, struct cm_err **err)
{
  bool dev = S_ISCHR (s->st_mode) || S_ISBLK (s->st_mode);
  bool lnk = S_ISLNK (s->st_mode);
  mode_t perm = s->st_mode & 07777;
  struct timespec ts[2] = { s->st_atim, s->st_mtim };
  char sp[PATH_MAX], dp[PATH_MAX];

  int r;
  if (dev && !(c->flags & CM_COPY_DEVICES))
    return 0;
  /* a node with several names (a whiteout overlayfs linked, a FIFO) stays
   * one inode */
  if ((r = link_seen (c, ddir, name, s, rel, err)) != 0)
    return r < 0 ? -1 : 0;
  if (dev && (c->flags & CM_COPY_DEVICES_0600))
    perm &= 0600;               /* and owned by the copier, below */
  if (lnk)
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (sdir, name, target, sizeof target - 1);
      if (n < 0)
        return cm_err_set (err, errno, "%s: readlink `%s%s`", c->what,
                           c->where, rel);
      target[n] = '\0';
      if (symlinkat (target, ddir, name) < 0)
        return cm_err_set (err, errno, "%s: symlink `%s%s`", c->what,
                           c->where, rel);
    }
  else if (mknodat (ddir, name, (s->st_mode & S_IFMT) | (perm & 0777),
                    s->st_rdev) < 0)
    return cm_err_set (err, errno, "%s: mknod `%s%s`", c->what, c->where, rel);
  if ((c->flags & CM_COPY_OWNERS)
      && !(dev && (c->flags & CM_COPY_DEVICES_0600))
      && fchownat (ddir, name, s->st_uid, s->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno, "%s: chown `%s%s`", c->what, c->where, rel);
  if (!lnk && fchmodat (ddir, name, perm, 0) < 0)
    return cm_err_set (err, errno, "%s: chmod `%s%s`", c->what, c->where, rel);
  snprintf (sp, sizeof sp, "/proc/self/fd/%d/%s", sdir, name);
  snprintf (dp, sizeof dp, "/proc/self/fd/%d/%s", ddir, name);
  if (copy_xattrs (c, &(struct xnode) { .path = sp },
                   &(struct xnode) { .path = dp }, rel, err) < 0)
    return -1;
  (void) utimensat (ddir, name, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* 1 when |s| is a hardlink to a file already copied (linked here), 0
 * when it is to be copied (and remembered), -1 on error. */
static int
link_seen (struct copier *c, int ddir, const char *name, const struct stat *s,
           const char *rel, struct cm_err **err)
{
  if (s->st_nlink < 2)
    return 0;
  for (size_t i = 0; i < c->nlinks; i++)
    if (c->links[i].dev == s->st_dev && c->links[i].ino == s->st_ino)
      {
        if (linkat (c->dsttop, c->links[i].rel, ddir, name, 0) < 0)
          return cm_err_set (err, errno, "%s: link `%s%s`", c->what,
                             c->where, rel);
        return 1;
      }
  c->links = xrealloc (c->links, (c->nlinks + 1) * sizeof *c->links);
  c->links[c->nlinks++] = (struct hl) { s->st_dev, s->st_ino, xstrdup (rel) };
  return 0;
}

static int
copy_subdir (struct copier *c, int sdir, int ddir, const char *name,
             const struct stat *s, const char *rel, struct cm_err **err)
{
  _cleanup_fd_ int in = -1, out = -1;
  if (mkdirat (ddir, name, 0700) < 0)
    return cm_err_set (err, errno, "%s: mkdir `%s%s`", c->what, c->where, rel);
  in = openat (sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  out = openat (ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || out < 0)
    return cm_err_set (err, errno, "%s: open `%s%s`", c->what, c->where, rel);
  if (copy_dir (c, in, out, rel, err) < 0)
    return -1;
  return meta_fd (c, in, out, s, rel, err);
}

static int
copy_file (struct copier *c, int sdir, int ddir, const char *name,
           const struct stat *s, const char *rel, struct cm_err **err)
{
  _cleanup_fd_ int in = -1, out = -1;
  int r = link_seen (c, ddir, name, s, rel, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  in = openat (sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  out = openat (ddir, name,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (in < 0 || out < 0 || copy_data (in, out, s->st_size) < 0)
    return cm_err_set (err, errno, "%s: copy `%s%s`", c->what, c->where, rel);
  return meta_fd (c, in, out, s, rel, err);
}

static int
copy_entry (struct copier *c, int sdir, int ddir, const char *name,
            const char *rel, struct cm_err **err)
{
  struct stat s;
  if (fstatat (sdir, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno, "%s: stat `%s%s`", c->what, c->where, rel);
  if (S_ISDIR (s.st_mode))
    return copy_subdir (c, sdir, ddir, name, &s, rel, err);
  if (S_ISREG (s.st_mode))
    return copy_file (c, sdir, ddir, name, &s, rel, err);
  if (S_ISLNK (s.st_mode) || S_ISFIFO (s.st_mode) || S_ISCHR (s.st_mode)
      || S_ISBLK (s.st_mode) || S_ISSOCK (s.st_mode))
    return copy_node (c, sdir, ddir, name, &s, rel, err);
  /* no other kind exists; never drop an entry without saying so */
  return cm_err_set (err, EINVAL, "%s: `%s%s`: unknown file type %#o", c->what,
                     c->where, rel, (unsigned) (s.st_mode & S_IFMT));
}

static int
copy_dir (struct copier *c, int src, int dst, const char *rel,
          struct cm_err **err)
{
  /* A plain fd: |d| owns it once fdopendir succeeds. */
  int fd = openat (src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  int ret = 0;

  if (d == NULL)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, e, "%s: read `%s%s`", c->what, c->where, rel);
    }
  while (ret == 0 && (errno = 0, de = readdir (d)) != NULL)
    {
      _cleanup_free_ char *sub = NULL;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      sub = *rel ? xasprintf ("%s/%s", rel, de->d_name)
                 : xstrdup (de->d_name);
      ret = copy_entry (c, src, dst, de->d_name, sub, err);
    }
  if (ret == 0 && errno != 0)
    ret = cm_err_set (err, errno, "%s: read `%s%s`", c->what, c->where, rel);
  closedir (d);
  return ret;
}

int
cm_copy_tree (int src, int dst, unsigned flags, const char *what,
              const char *where, struct cm_err **err)
{
  _cleanup_free_ char *prefix = *where ? xasprintf ("%s/", where) : NULL;
  struct copier c = { .dsttop = dst, .flags = flags, .what = what,
                      .where = prefix ? prefix : "" };
  struct stat s;
  int ret = copy_dir (&c, src, dst, "", err);

  if (ret == 0 && (flags & CM_COPY_TOP_META))
    {
      if (fstat (src, &s) < 0)
        ret = cm_err_set (err, errno, "%s: stat `%s`", what,
                          *where ? where : ".");
      else
        ret = meta_fd (&c, src, dst, &s, ".", err);
    }
  for (size_t i = 0; i < c.nlinks; i++)
    free (c.links[i].rel);
  free (c.links);
  return ret;
}
