/* The upper-layer walker and the confined openers (cow/internal.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "internal.h"

static const char *const ovl_prefixes[]
    = { "trusted.overlay.", "user.overlay." };

bool
cow_xattr_private (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (ovl_prefixes); i++)
    if (cm_startswith (name, ovl_prefixes[i]))
      return true;
  return false;
}

/* Value of overlay.<key> in either namespace (trusted: rootful mounts,
 * user: userxattr mounts in a user namespace); "" when absent. */
static void
ovl_xattr (int fd, const char *key, char *val, size_t len)
{
  val[0] = '\0';
  for (size_t i = 0; i < ARRAY_SIZE (ovl_prefixes); i++)
    {
      char name[64];
      snprintf (name, sizeof name, "%s%s", ovl_prefixes[i], key);
      ssize_t n = fgetxattr (fd, name, val, len - 1);
      if (n >= 0)
        {
          val[n] = '\0';
          if (n == 0)
            strcpy (val, "-"); /* present, empty */
          return;
        }
    }
}

int
cow_open_beneath (int rootfd, const char *rel, int flags)
{
  return cm_openat2 (rootfd, *rel ? rel : ".", flags | O_NOFOLLOW,
                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                         | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
}

int
cow_open_parent (int rootfd, const char *rel, const char **leaf)
{
  const char *slash = strrchr (rel, '/');
  if (slash == NULL)
    {
      *leaf = rel;
      return cow_open_beneath (rootfd, "", O_PATH | O_DIRECTORY);
    }
  *leaf = slash + 1;
  _cleanup_free_ char *dir = strndup (rel, (size_t) (slash - rel));
  return cow_open_beneath (rootfd, dir, O_PATH | O_DIRECTORY);
}

void
cow_dircache_free (struct cow_dircache *dc)
{
  free (dc->rel);
  dc->rel = NULL;
  if (dc->fd >= 0)
    close (dc->fd);
  dc->fd = -1;
}

int
cow_dircache_parent (struct cow_dircache *dc, int rootfd, const char *rel,
                     int flags, const char **leaf)
{
  const char *slash = strrchr (rel, '/');
  size_t n = slash ? (size_t) (slash - rel) : 0;
  *leaf = slash ? slash + 1 : rel;
  if (dc->fd >= 0 && strlen (dc->rel) == n && strncmp (dc->rel, rel, n) == 0)
    return dc->fd;
  cow_dircache_free (dc);
  _cleanup_free_ char *dir = strndup (rel, n);
  int fd = cow_open_beneath (rootfd, dir, flags | O_DIRECTORY);
  if (fd < 0)
    return -1;
  dc->rel = cm_steal_ptr (&dir);
  dc->fd = fd;
  return fd;
}

static int
cmpstr (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Names in |dfd|, sorted, NULL-terminated. */
static int
sorted_names (int dfd, char ***out, struct cm_err **err)
{
  int fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;
  char **v = NULL;
  size_t n = 0;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, errno, "read upper directory");
    }
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      v = xrealloc (v, (n + 2) * sizeof *v);
      v[n++] = xstrdup (de->d_name);
    }
  closedir (d);
  if (n)
    qsort (v, n, sizeof *v, cmpstr);
  if (v == NULL)
    v = xcalloc (1, sizeof *v);
  v[n] = NULL;
  *out = v;
  return 0;
}

static int walk_dir (int dfd, const char *rel, cow_walk_fn fn, void *arg,
                     struct cm_err **err);

static int
visit (int dfd, const char *rel, const char *name, cow_walk_fn fn, void *arg,
       struct cm_err **err)
{
  _cleanup_free_ char *path
      = *rel ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
  struct cow_entry e = { .rel = path, .name = name, .dirfd = dfd };
  char val[8];
  if (fstatat (dfd, name, &e.st, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno, "upper `%s`", path);
  if (S_ISCHR (e.st.st_mode) && e.st.st_rdev == makedev (0, 0))
    e.whiteout = true;
  if (S_ISREG (e.st.st_mode) && e.st.st_size == 0)
    {
      _cleanup_fd_ int fd
          = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "upper `%s`", path);
      ovl_xattr (fd, "whiteout", val, sizeof val);
      e.whiteout = val[0] != '\0';
    }
  if (!S_ISDIR (e.st.st_mode))
    return fn (&e, arg, err);
  _cleanup_fd_ int sub
      = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0)
    return cm_err_set (err, errno, "upper `%s`", path);
  ovl_xattr (sub, "opaque", val, sizeof val);
  e.opaque = strcmp (val, "y") == 0;
  if (fn (&e, arg, err) < 0 || walk_dir (sub, path, fn, arg, err) < 0)
    return -1;
  e.post = true;
  return fn (&e, arg, err);
}

static int
walk_dir (int dfd, const char *rel, cow_walk_fn fn, void *arg,
          struct cm_err **err)
{
  _cleanup_strv_ char **names = NULL;
  if (sorted_names (dfd, &names, err) < 0)
    return -1;
  for (char **n = names; *n; n++)
    if (visit (dfd, rel, *n, fn, arg, err) < 0)
      return -1;
  return 0;
}

int
cow_walk_upper (const struct cow_branch *b, cow_walk_fn fn, void *arg,
                struct cm_err **err)
{
  _cleanup_fd_ int fd
      = open (b->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open upper `%s`", b->upper);
  return walk_dir (fd, "", fn, arg, err);
}

static int
walk_lower_dir (int lowerfd, const char *rel, unsigned depth, cow_lower_fn fn,
                void *arg, struct cm_err **err)
{
  int fd = cow_open_beneath (lowerfd, rel, O_RDONLY | O_DIRECTORY);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;
  int ret = 0;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, errno, "lower `%s`", rel);
    }
  while (ret >= 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_free_ char *p = *rel ? xasprintf ("%s/%s", rel, de->d_name)
                                    : xstrdup (de->d_name);
      struct cow_lower_entry e
          = { .dirfd = dirfd (d), .name = de->d_name, .rel = p, .depth = depth };
      if (fstatat (e.dirfd, e.name, &e.st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          ret = errno == ENOENT ? 0 : cm_err_set (err, errno, "lower `%s`", p);
          continue;
        }
      ret = fn (&e, arg, err);
      if (ret > 0 && S_ISDIR (e.st.st_mode))
        ret = walk_lower_dir (lowerfd, p, depth + 1, fn, arg, err);
    }
  closedir (d);
  return ret < 0 ? -1 : 0;
}

int
cow_walk_lower (int lowerfd, const char *rel, cow_lower_fn fn, void *arg,
                struct cm_err **err)
{
  return walk_lower_dir (lowerfd, rel, 1, fn, arg, err);
}

ssize_t
cow_entry_origin (const struct cow_entry *e, unsigned char *buf, size_t len)
{
  _cleanup_free_ char *p = xasprintf ("/proc/self/fd/%d/%s", e->dirfd, e->name);
  for (size_t i = 0; i < ARRAY_SIZE (ovl_prefixes); i++)
    {
      char name[64];
      snprintf (name, sizeof name, "%sorigin", ovl_prefixes[i]);
      ssize_t n = lgetxattr (p, name, buf, len);
      if (n >= 0 || errno == ERANGE)
        return n < 0 ? (ssize_t) len : n;
    }
  return -1;
}

bool
cow_entry_copied_up (const struct cow_entry *e)
{
  unsigned char fh[256];
  return cow_entry_origin (e, fh, sizeof fh) >= 0;
}
