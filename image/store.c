/* Queries and removal over the cache: lookup by reference or digest,
 * list, rmi, prune, the raw config of an image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

void
img_list_free (struct img_image **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    img_image_free (v[i]);
  free (v);
}

/* A reference with a transport is compared canonically; without one it is
 * tried as docker://TEXT; a (prefix of a) digest matches manifest
 * digests. */
static bool
matches (const struct img_image *im, const char *canon, const char *text)
{
  const char *hex = rt_startswith (text, "sha256:") ? text + 7 : text;
  size_t n = strlen (hex);
  if (canon && strcmp (im->ref, canon) == 0)
    return true;
  if (n >= 4 && n <= 64 && strspn (hex, "0123456789abcdef") == n
      && strncmp (im->manifest_digest + 7, hex, n) == 0)
    return true;
  return false;
}

static char *
canonical (const char *text)
{
  struct img_ref *r = NULL;
  struct rt_err *e = NULL;
  char *s = NULL, *t = NULL;
  if (img_ref_parse (text, &r, &e) < 0)
    {
      rt_err_free (&e);
      t = xasprintf ("docker://%s", text);
      if (img_ref_parse (t, &r, &e) < 0)
        {
          rt_err_free (&e);
          free (t);
          return NULL;
        }
      free (t);
    }
  s = img_ref_format (r);
  img_ref_free (r);
  return s;
}

static int
find (struct img_cache *c, const char *text, struct img_image ***all, size_t *n,
      struct rt_err **err)
{
  _cleanup_free_ char *canon = canonical (text);
  int idx = -1;
  if (img_cache_read_records (c, all, n, err) < 0)
    return -1;
  for (size_t i = 0; i < *n; i++)
    if (matches ((*all)[i], canon, text))
      {
        if (idx >= 0 && strcmp ((*all)[idx]->manifest_digest, (*all)[i]->manifest_digest) != 0
            && !(canon && strcmp ((*all)[i]->ref, canon) == 0))
          return rt_err_set (err, 0, "%s: ambiguous, several images match", text);
        if (idx < 0 || (canon && strcmp ((*all)[i]->ref, canon) == 0))
          idx = (int) i;
      }
  if (idx < 0)
    return rt_err_set (err, ENOENT, "%s: image not in the cache `%s`", text, c->dir);
  return idx;
}

int
img_lookup (const struct img_opts *o, const char *text, struct img_image **out,
            struct rt_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  struct img_image **all = NULL;
  size_t n = 0;
  int idx;
  if (img_cache_open (o, &c, err) < 0)
    {
      img_cache_close (&c);
      return -1;
    }
  idx = find (&c, text, &all, &n, err);
  if (idx >= 0 && !img_cache_has_rootfs (&c, all[idx]->manifest_digest))
    idx = rt_err_set (err, ENOENT, "%s: the cached rootfs of %s is missing", text,
                      all[idx]->manifest_digest);
  if (idx >= 0)
    {
      *out = all[idx];
      all[idx] = NULL;
    }
  img_list_free (all, n);
  img_cache_close (&c);
  return idx < 0 ? -1 : 0;
}

int
img_list (const struct img_opts *o, struct img_image ***out, size_t *n,
          struct rt_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  int ret = img_cache_open (o, &c, err);
  if (ret == 0)
    ret = img_cache_read_records (&c, out, n, err);
  img_cache_close (&c);
  return ret;
}

static bool
referenced (struct img_image **all, size_t n, const char *hex)
{
  for (size_t i = 0; i < n; i++)
    if (all[i] && (strcmp (all[i]->manifest_digest + 7, hex) == 0
                   || (all[i]->config_digest && strcmp (all[i]->config_digest + 7, hex) == 0)))
      return true;
  return false;
}

static uint64_t
tree_size (int dfd, const char *name)
{
  struct stat s;
  uint64_t total = 0;
  if (fstatat (dfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return 0;
  total = (uint64_t) s.st_blocks * 512;
  if (S_ISDIR (s.st_mode))
    {
      int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
      struct dirent *de;
      if (d == NULL)
        {
          if (fd >= 0)
            close (fd);
          return total;
        }
      while ((de = readdir (d)))
        if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
          total += tree_size (dirfd (d), de->d_name);
      closedir (d);
    }
  return total;
}

/* Removes entries of |sub| not referenced by any record, skipping images
 * whose lock is held (a pull in progress). */
static int
sweep (struct img_cache *c, const char *sub, struct img_image **all, size_t n,
       bool tmp, uint64_t *freed, struct rt_err **err)
{
  int fd = openat (c->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC), removed = 0;
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  if (d == NULL)
    return fd >= 0 ? close (fd), 0 : 0;
  while ((de = readdir (d)))
    {
      char hex[65];
      _cleanup_free_ char *lp = NULL;
      _cleanup_fd_ int lfd = -1;
      if (de->d_name[0] == '.')
        continue;
      snprintf (hex, sizeof hex, "%.64s", de->d_name);
      if (!tmp && referenced (all, n, hex))
        continue;
      lp = xasprintf ("locks/%s.lock", tmp && rt_startswith (de->d_name, "archive.")
                                       ? de->d_name : hex);
      lfd = openat (c->dirfd, lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (lfd >= 0 && flock (lfd, LOCK_EX | LOCK_NB) < 0)
        continue;
      if (tmp && rt_startswith (de->d_name, "archive."))
        {
          /* archive.PID.X: in use while that pid lives. */
          int pid = atoi (de->d_name + 8);
          if (pid > 0 && (kill (pid, 0) == 0 || errno == EPERM))
            continue;
        }
      if (freed)
        *freed += tree_size (dirfd (d), de->d_name);
      if (rt_rm_rf_at (dirfd (d), de->d_name, err) < 0)
        {
          closedir (d);
          return -1;
        }
      if (!tmp)
        unlinkat (c->dirfd, lp, 0);
      removed++;
    }
  closedir (d);
  return removed;
}

static int
gc (struct img_cache *c, uint64_t *freed, struct rt_err **err)
{
  struct img_image **all = NULL;
  size_t n = 0;
  int a, b, t;
  if (img_cache_read_records (c, &all, &n, err) < 0)
    return -1;
  a = sweep (c, "rootfs", all, n, false, freed, err);
  b = a < 0 ? -1 : sweep (c, "blobs/sha256", all, n, false, freed, err);
  t = b < 0 ? -1 : sweep (c, "tmp", all, n, true, freed, err);
  img_list_free (all, n);
  return t < 0 ? -1 : a + b + t;
}

int
img_remove (const struct img_opts *o, const char *text, struct rt_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  struct img_image **all = NULL;
  size_t n = 0;
  int idx, ret = -1;
  char key[72];
  if (img_cache_open (o, &c, err) < 0)
    goto out;
  idx = find (&c, text, &all, &n, err);
  if (idx < 0)
    goto out;
  img_sha256_str (all[idx]->ref, strlen (all[idx]->ref), key);
  {
    _cleanup_free_ char *name = xasprintf ("refs/%.32s.json", key + 7);
    if (unlinkat (c.dirfd, name, 0) < 0 && errno != ENOENT)
      {
        rt_err_set (err, errno, "%s: remove record", text);
        goto out;
      }
  }
  ret = gc (&c, NULL, err) < 0 ? -1 : 0;
out:
  img_list_free (all, n);
  img_cache_close (&c);
  return ret;
}

int
img_prune (const struct img_opts *o, uint64_t *freed, struct rt_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  int ret = img_cache_open (o, &c, err);
  if (freed)
    *freed = 0;
  if (ret == 0)
    ret = gc (&c, freed, err);
  img_cache_close (&c);
  return ret;
}

int
img_config_raw (const struct img_opts *o, const struct img_image *im, char **json,
                size_t *len, struct rt_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  int ret = img_cache_open (o, &c, err);
  if (ret == 0)
    ret = img_cache_get_blob (&c, im->config_digest, json, len, err);
  img_cache_close (&c);
  return ret;
}
