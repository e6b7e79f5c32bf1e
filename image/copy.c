/* Copies a cached rootfs into a bundle: reflink (FICLONE) when the file
 * system can, copy_file_range otherwise; modes, owners (root), xattrs,
 * times, symlinks, FIFOs and hardlinks within the tree kept.  Char and
 * block device nodes only on request (--allow-devices, root), owned by
 * root and at most 0600: the bundle is a directory the user chose. */
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

#include "common/util.h"
#include "image/priv.h"

struct hl
{
  dev_t dev;
  ino_t ino;
  char *dst;                    /* path relative to the bundle rootfs */
};

struct copier
{
  int dstroot;
  bool root;
  bool devices;                 /* copy char/block nodes */
  struct hl *links;
  size_t nlinks;
};

static void
copy_xattrs (int src, int dst, bool root)
{
  char names[8192], val[65536];
  ssize_t n = flistxattr (src, names, sizeof names);
  for (ssize_t i = 0; i < n; i += (ssize_t) strlen (names + i) + 1)
    {
      ssize_t vl;
      if (!root && !rt_startswith (names + i, "user."))
        continue;
      vl = fgetxattr (src, names + i, val, sizeof val);
      if (vl >= 0)
        (void) fsetxattr (dst, names + i, val, (size_t) vl, 0);
    }
}

static int
meta (struct copier *c, int src, int dst, const struct stat *s, const char *rel,
      struct rt_err **err)
{
  struct timespec ts[2] = { s->st_atim, s->st_mtim };
  if (c->root && fchown (dst, s->st_uid, s->st_gid) < 0)
    return rt_err_set (err, errno, "copy rootfs: chown `%s`", rel);
  if (fchmod (dst, s->st_mode & 07777) < 0)
    return rt_err_set (err, errno, "copy rootfs: chmod `%s`", rel);
  copy_xattrs (src, dst, c->root);
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
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL))
        {
          char buf[65536];
          while ((n = read (in, buf, sizeof buf)) > 0)
            if (rt_write_all (out, buf, (size_t) n) < 0)
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
                     struct rt_err **err);

/* xattrs of a node, by path: a FIFO or device cannot be opened for them
 * without opening the device itself. */
static void
copy_node_xattrs (int sdir, int ddir, const char *name, bool root)
{
  char src[PATH_MAX], dst[PATH_MAX], names[8192], val[65536];
  ssize_t n;
  snprintf (src, sizeof src, "/proc/self/fd/%d/%s", sdir, name);
  snprintf (dst, sizeof dst, "/proc/self/fd/%d/%s", ddir, name);
  n = llistxattr (src, names, sizeof names);
  for (ssize_t i = 0; i < n; i += (ssize_t) strlen (names + i) + 1)
    {
      ssize_t vl;
      if (!root && !rt_startswith (names + i, "user."))
        continue;
      vl = lgetxattr (src, names + i, val, sizeof val);
      if (vl >= 0)
        (void) lsetxattr (dst, names + i, val, (size_t) vl, 0);
    }
}

/* A FIFO, or a device node when allowed: its exact mode (mknod applies
 * the umask), owner, xattrs and times. */
static int
copy_node (struct copier *c, int sdir, int ddir, const char *name,
           const struct stat *s, const char *rel, struct rt_err **err)
{
  bool dev = S_ISCHR (s->st_mode) || S_ISBLK (s->st_mode);
  mode_t perm = s->st_mode & 07777;
  struct timespec ts[2] = { s->st_atim, s->st_mtim };
  if (dev && !(c->root && c->devices))
    return 0;
  if (dev)
    perm &= 0600;               /* owned by root (the creator), as below */
  if (mknodat (ddir, name, (s->st_mode & S_IFMT) | (perm & 0777), s->st_rdev) < 0)
    return rt_err_set (err, errno, "copy rootfs: mknod `%s`", rel);
  if (c->root && !dev && fchownat (ddir, name, s->st_uid, s->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return rt_err_set (err, errno, "copy rootfs: chown `%s`", rel);
  if (fchmodat (ddir, name, perm, 0) < 0)
    return rt_err_set (err, errno, "copy rootfs: chmod `%s`", rel);
  copy_node_xattrs (sdir, ddir, name, c->root);
  (void) utimensat (ddir, name, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

static int
copy_entry (struct copier *c, int sdir, int ddir, const char *name,
            const char *rel, struct rt_err **err)
{
  struct stat s;
  _cleanup_fd_ int in = -1, out = -1;
  if (fstatat (sdir, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return rt_err_set (err, errno, "copy rootfs: stat `%s`", rel);
  if (S_ISDIR (s.st_mode))
    {
      if (mkdirat (ddir, name, 0700) < 0 && errno != EEXIST)
        return rt_err_set (err, errno, "copy rootfs: mkdir `%s`", rel);
      in = openat (sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      out = openat (ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (in < 0 || out < 0)
        return rt_err_set (err, errno, "copy rootfs: open `%s`", rel);
      if (copy_dir (c, in, out, rel, err) < 0)
        return -1;
      return meta (c, in, out, &s, rel, err);
    }
  if (S_ISREG (s.st_mode) && s.st_nlink > 1)
    {
      for (size_t i = 0; i < c->nlinks; i++)
        if (c->links[i].dev == s.st_dev && c->links[i].ino == s.st_ino)
          {
            if (linkat (c->dstroot, c->links[i].dst, ddir, name, 0) < 0)
              return rt_err_set (err, errno, "copy rootfs: link `%s`", rel);
            return 0;
          }
      c->links = xrealloc (c->links, (c->nlinks + 1) * sizeof *c->links);
      c->links[c->nlinks++] = (struct hl) { s.st_dev, s.st_ino, xstrdup (rel) };
    }
  if (S_ISREG (s.st_mode))
    {
      in = openat (sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      out = openat (ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (in < 0 || out < 0 || copy_data (in, out, s.st_size) < 0)
        return rt_err_set (err, errno, "copy rootfs: `%s`", rel);
      return meta (c, in, out, &s, rel, err);
    }
  if (S_ISLNK (s.st_mode))
    {
      char target[4097];
      ssize_t n = readlinkat (sdir, name, target, sizeof target - 1);
      struct timespec ts[2] = { s.st_atim, s.st_mtim };
      if (n < 0)
        return rt_err_set (err, errno, "copy rootfs: readlink `%s`", rel);
      target[n] = '\0';
      if (symlinkat (target, ddir, name) < 0)
        return rt_err_set (err, errno, "copy rootfs: symlink `%s`", rel);
      if (c->root)
        (void) fchownat (ddir, name, s.st_uid, s.st_gid, AT_SYMLINK_NOFOLLOW);
      (void) utimensat (ddir, name, ts, AT_SYMLINK_NOFOLLOW);
      return 0;
    }
  if (S_ISFIFO (s.st_mode) || S_ISCHR (s.st_mode) || S_ISBLK (s.st_mode))
    return copy_node (c, sdir, ddir, name, &s, rel, err);
  return 0;                     /* sockets: nothing to copy */
}

static int
copy_dir (struct copier *c, int src, int dst, const char *rel, struct rt_err **err)
{
  int fd = dup (src);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  int ret = 0;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return rt_err_set (err, errno, "copy rootfs: read `%s`", rel);
    }
  while (ret == 0 && (de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      sub = *rel ? xasprintf ("%s/%s", rel, de->d_name) : xstrdup (de->d_name);
      ret = copy_entry (c, src, dst, de->d_name, sub, err);
    }
  closedir (d);
  return ret;
}

/* Copying over an existing tree would fail half-way (EEXIST) or mix two
 * trees: the destination must be empty before anything is copied. */
static bool
dir_has_entries (int dfd)
{
  int fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;
  bool any = false;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  while (!any && (de = readdir (d)))
    any = strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0;
  closedir (d);
  return any;
}

int
img_copy_rootfs (const struct img_image *im, const char *dir, bool allow_devices,
                 struct rt_err **err)
{
  struct copier c = { .root = geteuid () == 0, .devices = allow_devices };
  _cleanup_fd_ int src = open (im->rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int dst = -1;
  struct stat s;
  int ret;
  if (src < 0 || fstat (src, &s) < 0)
    return rt_err_set (err, errno, "cached rootfs `%s`", im->rootfs);
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    return rt_err_set (err, errno, "bundle rootfs `%s`", dir);
  dst = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst < 0)
    return rt_err_set (err, errno, "bundle rootfs `%s`", dir);
  if (dir_has_entries (dst))
    return rt_err_set (err, ENOTEMPTY, "bundle rootfs `%s` is not empty: refusing to copy "
                       "the image over it", dir);
  c.dstroot = dst;
  ret = copy_dir (&c, src, dst, "", err);
  if (ret == 0)
    ret = meta (&c, src, dst, &s, ".", err);
  for (size_t i = 0; i < c.nlinks; i++)
    free (c.links[i].dst);
  free (c.links);
  return ret;
}
