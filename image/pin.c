/* Pins: a cached rootfs that something outside the cache uses in place
 * (an overlay's lower) must outlive rmi and prune (docs/image.md, "Pins").
 *
 *   pins/HEX/NONCE   holder=PATH and name=NAME: rootfs/HEX is held by
 *                    whoever owns the file PATH
 *   PATH (the holder's own file, outside the cache)
 *                    cache=DIR rootfs=HEX pin=NONCE
 *
 * A pin counts while its holder file exists and names it back (the NONCE,
 * 128 random bits): removing the holder's directory releases the pin even
 * when the holder never called img_unpin (killed, or its state removed
 * by hand), and a new holder at the same path is never taken for an old
 * one.  Stale pins are removed by the sweep of rmi and prune, under the
 * exclusive cache lock; a pin is written under the shared one after
 * checking that the rootfs is still there, so a sweep sees either the pin
 * or no rootfs. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

#define HOLDER_MAX 8192

/* The value of |key|= in the "key=value\n" text |t| (owned), or NULL. */
static char *
field (const char *t, const char *key)
{
  size_t n = strlen (key);
  for (const char *l = t; l && *l; l = strchr (l, '\n'), l = l ? l + 1 : l)
    if (strncmp (l, key, n) == 0 && l[n] == '=')
      return strndup (l + n + 1, strcspn (l + n + 1, "\n"));
  return NULL;
}

static bool
is_hex (const char *s, size_t n)
{
  return strlen (s) == n && strspn (s, "0123456789abcdef") == n;
}

/* Splits the canonical |rootfs| into its cache directory and HEX: only
 * CACHE/rootfs/HEX with CACHE/refs beside it is a cached rootfs. */
static bool
cached_rootfs (const char *rootfs, char **cache, char **hex)
{
  char real[PATH_MAX];
  struct stat st;
  if (realpath (rootfs, real) == NULL)
    return false;
  char *slash = strrchr (real, '/');
  if (slash == NULL || !is_hex (slash + 1, 64))
    return false;
  *slash = '\0';
  char *up = strrchr (real, '/');
  if (up == NULL || strcmp (up, "/rootfs") != 0)
    return false;
  *up = '\0';
  _cleanup_free_ char *refs = xasprintf ("%s/refs", *real ? real : "/");
  if (stat (refs, &st) < 0 || !S_ISDIR (st.st_mode))
    return false;
  *cache = xstrdup (*real ? real : "/");
  *hex = xstrdup (slash + 1);
  return true;
}

static int
write_holder (const char *holder, const char *cache, const char *hex,
              const char *nonce, struct cm_err **err)
{
  _cleanup_free_ char *t
      = xasprintf ("cache=%s\nrootfs=%s\npin=%s\n", cache, hex, nonce);
  _cleanup_fd_ int fd
      = open (holder, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0600);
  if (fd < 0 || cm_write_all (fd, t, strlen (t)) < 0)
    return cm_err_set (err, errno, "image pin `%s`", holder);
  return 0;
}

static int
write_pin (struct img_cache *c, const char *hex, const char *nonce,
           const char *holder, const char *name, struct cm_err **err)
{
  _cleanup_free_ char *sub = xasprintf ("pins/%s", hex);
  _cleanup_free_ char *t = xasprintf ("holder=%s\nname=%s\n", holder, name);
  _cleanup_free_ char *rootfs = xasprintf ("rootfs/%s", hex);
  struct stat st;
  if (fstatat (c->dirfd, rootfs, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno,
                       "cached rootfs `%s/%s` (removed by rmi or prune "
                       "since?)",
                       c->dir, rootfs);
  if (mkdirat (c->dirfd, sub, 0700) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "cache `%s/%s`", c->dir, sub);
  return img_write_in (c->dirfd, sub, nonce, t, strlen (t), err);
}

int
img_pin (const char *rootfs, const char *holder, const char *name,
         struct cm_err **err)
{
  _cleanup_free_ char *cache = NULL, *hex = NULL;
  unsigned char rnd[16];
  char nonce[33];
  if (!cached_rootfs (rootfs, &cache, &hex))
    return 0;
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    return cm_err_set (err, errno, "image pin: getrandom");
  for (size_t i = 0; i < sizeof rnd; i++)
    snprintf (nonce + 2 * i, 3, "%02x", rnd[i]);
  struct img_opts o = { .cache_dir = cache };
  struct img_cache c = { .dirfd = -1 };
  int lk = -1, ret = -1;
  /* The holder first: killed before the pin, nothing points at it. */
  if (write_holder (holder, cache, hex, nonce, err) < 0)
    return -1;
  if (img_cache_open (&o, &c, err) == 0
      && (lk = img_cache_lock_all (&c, false, err)) >= 0)
    ret = write_pin (&c, hex, nonce, holder, name, err);
  if (lk >= 0)
    close (lk);
  img_cache_close (&c);
  if (ret < 0)
    {
      unlink (holder);
      return -1;
    }
  return 1;
}

void
img_unpin_at (int dirfd, const char *holder)
{
  _cleanup_free_ char *t = NULL;
  if (cm_read_regular_at (dirfd, holder, HOLDER_MAX, &t, NULL, NULL) < 0)
    return;
  _cleanup_free_ char *cache = field (t, "cache"), *hex = field (t, "rootfs"),
                      *nonce = field (t, "pin");
  if (cache && hex && nonce && is_hex (hex, 64) && is_hex (nonce, 32))
    {
      _cleanup_free_ char *p = xasprintf ("%s/pins/%s/%s", cache, hex, nonce);
      unlink (p); /* an empty pins/HEX goes with the next sweep */
    }
  unlinkat (dirfd, holder, 0);
}

/* Whether the pin pins/|hex|/|nonce| still counts: its holder file names
 * it.  A holder that cannot be read for another reason than its absence
 * (EACCES: another user's state) counts: keeping a tree is the safe side. */
static bool
pin_live (const char *pin, const char *hex, const char *nonce, char **name)
{
  _cleanup_free_ char *holder = field (pin, "holder"), *t = NULL;
  struct cm_err *e = NULL;
  *name = field (pin, "name");
  if (holder == NULL)
    return false;
  if (cm_read_regular_at (AT_FDCWD, holder, HOLDER_MAX, &t, NULL, &e) < 0)
    {
      bool gone = e->errno_ == ENOENT || e->errno_ == ENOTDIR;
      cm_err_free (&e);
      return !gone;
    }
  _cleanup_free_ char *h = field (t, "rootfs"), *n = field (t, "pin");
  return h && n && strcmp (h, hex) == 0 && strcmp (n, nonce) == 0;
}

int
img_cache_pins (struct img_cache *c, const char *hex, bool drop_stale,
                char **names)
{
  _cleanup_free_ char *sub = xasprintf ("pins/%.64s", hex);
  DIR *d = img_cache_opendir (c, sub);
  struct dirent *de;
  int n = 0;
  if (names)
    *names = NULL;
  if (d == NULL)
    return 0;
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *t = NULL, *name = NULL;
      if (!is_hex (de->d_name, 32)
          || cm_read_regular_at (dirfd (d), de->d_name, HOLDER_MAX, &t, NULL,
                                 NULL)
                 < 0)
        continue;
      if (!pin_live (t, hex, de->d_name, &name))
        {
          if (drop_stale)
            unlinkat (dirfd (d), de->d_name, 0);
          continue;
        }
      n++;
      if (names)
        {
          char *l = xasprintf ("%s%s%s", *names ? *names : "",
                               *names ? ", " : "", name ? name : "?");
          free (*names);
          *names = l;
        }
    }
  closedir (d);
  if (n == 0 && drop_stale)
    unlinkat (c->dirfd, sub, AT_REMOVEDIR);
  return n;
}

void
img_cache_sweep_pins (struct img_cache *c)
{
  DIR *d = img_cache_opendir (c, "pins");
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir (d)))
    if (is_hex (de->d_name, 64))
      img_cache_pins (c, de->d_name, true, NULL);
  closedir (d);
}
