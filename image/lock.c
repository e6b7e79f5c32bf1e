/* The locks of the image cache (docs/image.md, "Cache layout"):
 *
 *   locks/cache.lock   shared by a pull while it commits (blobs, the rootfs
 *                      rename, the record) and by readers; exclusive for the
 *                      sweep of rmi and prune.  Never unlinked.
 *   locks/HEX.lock     one pull of image HEX at a time, held for the whole
 *                      pull; a sweep skips rootfs/HEX and tmp/HEX.* while
 *                      it is held.
 *   tmp/archive.XXXXXX the directory itself is flocked by the pull reading
 *                      that oci-archive / daemon export.
 *
 * A lock file (or archive directory) nobody holds is removed by whoever
 * can lock it, while holding it.  A process that opened it just before
 * then holds a lock on an orphan inode, so every locker checks, once it
 * holds the lock, that the path still names the inode it locked, and
 * starts over when not: two holders of one lock never coexist. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

#define CACHE_LOCK "locks/cache.lock"

static bool
still_linked (int dirfd, const char *path, int fd)
{
  struct stat a, b;
  return fstat (fd, &a) == 0 && fstatat (dirfd, path, &b, AT_SYMLINK_NOFOLLOW) == 0
         && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Opens |path| (|flags|: O_CREAT for a lock file, O_DIRECTORY for a
 * directory) and flocks it with |op|.  Returns the fd, or -1 with errno
 * (EWOULDBLOCK under LOCK_NB, ENOENT when it went away and cannot be
 * created again). */
static int
lock_path (int dirfd, const char *path, int flags, int op)
{
  for (;;)
    {
      int fd = openat (dirfd, path, flags | O_RDONLY | O_CLOEXEC, 0600), r, e;
      if (fd < 0)
        return -1;
      while ((r = flock (fd, op)) < 0 && errno == EINTR)
        ;
      if (r == 0 && still_linked (dirfd, path, fd))
        return fd;
      e = r < 0 ? errno : ENOENT;
      close (fd);
      if (r < 0 || !(flags & O_CREAT))
        {
          errno = e;
          return -1;
        }
    }
}

int
img_cache_lock (struct img_cache *c, const char *name, bool exclusive,
                struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("locks/%s.lock", name);
  int fd = lock_path (c->dirfd, p, O_CREAT, exclusive ? LOCK_EX : LOCK_SH);
  if (fd < 0)
    return cm_err_set (err, errno, "cache lock `%s/%s`", c->dir, p);
  return fd;
}

int
img_cache_lock_all (struct img_cache *c, bool exclusive, struct cm_err **err)
{
  int fd = lock_path (c->dirfd, CACHE_LOCK, O_CREAT, exclusive ? LOCK_EX : LOCK_SH);
  if (fd < 0)
    return cm_err_set (err, errno, "cache lock `%s/%s`", c->dir, CACHE_LOCK);
  return fd;
}

int
img_cache_trylock (struct img_cache *c, const char *path, bool dir)
{
  return lock_path (c->dirfd, path, dir ? O_DIRECTORY | O_NOFOLLOW : O_CREAT,
                    LOCK_EX | LOCK_NB);
}

int
img_cache_archive_dir (struct img_cache *c, char **path, struct cm_err **err)
{
  for (;;)
    {
      char *abs = xasprintf ("%s/tmp/archive.XXXXXX", c->dir);
      int fd;
      if (mkdtemp (abs) == NULL)
        {
          cm_err_set (err, errno, "cache temp dir `%s`", abs);
          free (abs);
          return -1;
        }
      /* Between mkdtemp and flock a cleaner may take it for abandoned and
       * remove it: lock_path then fails with ENOENT and we make another. */
      fd = lock_path (AT_FDCWD, abs, O_DIRECTORY | O_NOFOLLOW, LOCK_EX);
      if (fd >= 0)
        {
          *path = abs;
          return fd;
        }
      if (errno != ENOENT)
        {
          cm_err_set (err, errno, "lock `%s`", abs);
          free (abs);
          return -1;
        }
      free (abs);
    }
}

int
img_cache_remove_abandoned (struct img_cache *c, int dfd, const char *name,
                            const char *lock, bool dirlock, struct cm_err **err)
{
  int fd = img_cache_trylock (c, lock, dirlock), r;
  if (fd < 0)
    return 0;
  r = cm_rm_rf_at (dfd, name, err);
  if (!dirlock)
    unlinkat (c->dirfd, lock, 0);   /* still held: see the top of this file */
  close (fd);
  return r < 0 ? -1 : 1;
}

char *
img_cache_tmp_guard (const char *name, bool *dirlock)
{
  *dirlock = cm_startswith (name, "archive.");
  if (*dirlock)
    return xasprintf ("tmp/%s", name);
  return xasprintf ("locks/%.64s.lock", name);
}

void
img_cache_clean_tmp (struct img_cache *c)
{
  int fd = openat (c->dirfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((de = readdir (d)))
    if (de->d_name[0] != '.')
      {
        bool dirlock;
        _cleanup_free_ char *guard = img_cache_tmp_guard (de->d_name, &dirlock);
        struct cm_err *e = NULL;
        img_cache_remove_abandoned (c, dirfd (d), de->d_name, guard, dirlock, &e);
        cm_err_free (&e);       /* prune will report it */
      }
  closedir (d);
}

int
img_cache_sweep_locks (struct img_cache *c)
{
  int fd = openat (c->dirfd, "locks", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return 0;
    }
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *p = NULL;
      int lfd;
      if (de->d_name[0] == '.' || strcmp (de->d_name, "cache.lock") == 0)
        continue;
      p = xasprintf ("locks/%s", de->d_name);
      lfd = lock_path (c->dirfd, p, 0, LOCK_EX | LOCK_NB);
      if (lfd < 0)
        continue;
      if (unlinkat (c->dirfd, p, 0) == 0)
        n++;
      close (lfd);
    }
  closedir (d);
  return n;
}
