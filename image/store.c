/* Queries and removal over the cache: lookup by reference or digest,
 * list, rmi, prune, the raw config of an image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

static bool
digest_matches (const struct img_image *im, const char *text)
{
  const char *hex = cm_startswith (text, "sha256:") ? text + 7 : text;
  size_t n = strlen (hex);
  return n >= 4 && n <= 64 && strspn (hex, "0123456789abcdef") == n
         && strncmp (im->manifest_digest + 7, hex, n) == 0;
}

static char *
canonical (const char *text)
{
  struct img_ref *r = NULL;
  struct cm_err *e = NULL;
  char *s = NULL, *t = NULL;
  if (img_ref_parse (text, &r, &e) < 0)
    {
      cm_err_free (&e);
      t = xasprintf ("docker://%s", text);
      if (img_ref_parse (t, &r, &e) < 0)
        {
          cm_err_free (&e);
          free (t);
          return NULL;
        }
      free (t);
    }
  s = img_ref_format (r);
  img_ref_free (r);
  return s;
}

/* What a lookup found: the records |text| names (sel), of the cache's
 * records (all). */
struct found
{
  struct img_image **all;
  size_t n;
  bool *sel;
  size_t nsel, named;           /* selected; named whatever the platform */
  bool by_ref;                  /* named by reference, not by digest */
};

static void
found_free (struct found *f)
{
  img_list_free (f->all, f->n);
  free (f->sel);
}

/* The platforms of the records |text| named, for messages. */
static char *
platforms_named (const struct found *f, const bool *named)
{
  char *list = xstrdup ("");
  for (size_t i = 0; i < f->n; i++)
    if (named[i])
      {
        char *l = xasprintf ("%s%s%s", list, *list ? ", " : "",
                             f->all[i]->platform ? f->all[i]->platform : "?");
        free (list);
        list = l;
      }
  return list;
}

/* Marks the records |text| names: by reference (canonical form; a bare
 * name is tried as docker://NAME), else by manifest digest or a prefix of
 * it (several manifests: ambiguous).  With |platform| (--platform) only
 * the records for it; none then is an error listing what is cached. */
static int
find (struct img_cache *c, const char *text, const char *platform, struct found *f,
      struct cm_err **err)
{
  _cleanup_free_ char *canon = canonical (text);
  _cleanup_free_ bool *named = NULL;
  const char *first = NULL;
  bool by_ref = false;
  f->by_ref = false;
  if (img_cache_read_records (c, &f->all, &f->n, err) < 0)
    return -1;
  f->sel = xcalloc (f->n + 1, sizeof *f->sel);
  named = xcalloc (f->n + 1, sizeof *named);
  for (size_t i = 0; i < f->n; i++)
    by_ref |= canon && strcmp (f->all[i]->ref, canon) == 0;
  f->by_ref = by_ref;
  for (size_t i = 0; i < f->n; i++)
    {
      const struct img_image *im = f->all[i];
      if (by_ref ? strcmp (im->ref, canon) != 0 : !digest_matches (im, text))
        continue;
      if (!by_ref && first && strcmp (first, im->manifest_digest) != 0)
        return cm_err_set (err, 0, "%s: ambiguous, several images match", text);
      first = im->manifest_digest;
      named[i] = true;
      f->named++;
      if (platform && !img_platform_matches (platform, im->platform))
        continue;
      f->sel[i] = true;
      f->nsel++;
    }
  if (f->named == 0)
    return cm_err_set (err, ENOENT, "%s: image not in the cache `%s`", text, c->dir);
  if (f->nsel == 0)
    {
      _cleanup_free_ char *list = platforms_named (f, named);
      return cm_err_set (err, 0, "%s: no cached image for platform %s (cached: %s)",
                         text, platform, list);
    }
  return 0;
}

/* One image of |f| for running: the only one, or the host platform's.
 * Without --platform an online pull would choose the host's platform from
 * an index, so a record chosen from an index for another platform is not
 * taken in its place.  A digest names one image whatever its platform. */
static int
pick_one (const struct found *f, const char *text, const char *platform,
          struct cm_err **err)
{
  const char *host = img_host_platform ();
  int only = -1, hosts = -1;
  for (size_t i = 0; i < f->n; i++)
    if (f->sel[i])
      {
        only = (int) i;
        if (hosts < 0 && img_platform_matches (host, f->all[i]->platform))
          hosts = (int) i;
      }
  if (!f->by_ref || platform || hosts >= 0 || (f->nsel == 1 && !f->all[only]->from_index))
    return hosts >= 0 ? hosts : only;
  {
    _cleanup_free_ char *list = platforms_named (f, f->sel);
    return cm_err_set (err, 0, "%s: not cached for this host's platform %s (cached: "
                       "%s); choose one with --platform", text, host, list);
  }
}

int
img_lookup (const struct img_opts *o, const char *text, struct img_image **out,
            struct cm_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  struct found f = { 0 };
  int idx = -1, lk = -1;
  if (o->platform && img_platform_check (o->platform, err) < 0)
    return -1;
  if (img_cache_open (o, &c, err) < 0 || (lk = img_cache_lock_all (&c, false, err)) < 0)
    {
      img_cache_close (&c);
      return -1;
    }
  if (find (&c, text, o->platform, &f, err) == 0)
    idx = pick_one (&f, text, o->platform, err);
  if (idx >= 0 && !img_cache_has_rootfs (&c, f.all[idx]->manifest_digest))
    idx = cm_err_set (err, ENOENT, "%s: the cached rootfs of %s is missing", text,
                      f.all[idx]->manifest_digest);
  if (idx >= 0)
    *out = cm_steal_ptr (&f.all[idx]);
  found_free (&f);
  close (lk);
  img_cache_close (&c);
  return idx < 0 ? -1 : 0;
}

int
img_list (const struct img_opts *o, struct img_image ***out, size_t *n,
          struct cm_err **err)
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

enum sweep_kind { SWEEP_ROOTFS, SWEEP_BLOBS, SWEEP_TMP };

/* One garbage collection: what it read, and the rootfs trees it took out
 * of rootfs/ under the cache lock, to remove once that lock is released
 * (a big tree takes a while: pulls must not wait for it to commit). */
struct gc
{
  struct img_cache *c;
  struct img_image **all;
  size_t n;
  uint64_t *freed;
  int *locks;                   /* the image lock of each doomed tree, held */
  char **doomed;                /* tmp/HEX.gc */
  size_t ndoomed;
  char **kept;                  /* "HEX: holders" of pinned trees left */
  size_t nkept;
};

/* rootfs/|hex| is pinned (image/pin.c): kept, and said so. */
static bool
pinned (struct gc *g, const char *hex)
{
  _cleanup_free_ char *who = NULL;
  if (img_cache_pins (g->c, hex, true, &who) == 0)
    return false;
  g->kept = xrealloc (g->kept, (g->nkept + 2) * sizeof *g->kept);
  g->kept[g->nkept++] = xasprintf ("%.64s (in use by %s)", hex, who);
  g->kept[g->nkept] = NULL;
  return true;
}

/* The lock that guards entry |name| of the swept directory, or NULL when
 * none does: rootfs/HEX and tmp/HEX.* by the image's lock, tmp/archive.*
 * by itself (*dirlock), blobs by the cache lock the sweep holds. */
static char *
guard_of (enum sweep_kind k, const char *name, bool *dirlock)
{
  *dirlock = false;
  if (k == SWEEP_BLOBS)
    return NULL;
  if (k == SWEEP_TMP)
    return img_cache_tmp_guard (name, dirlock);
  return xasprintf ("locks/%.64s.lock", name);
}

/* rootfs/HEX, its image lock free: renamed to tmp/HEX.gc (invisible to
 * lookups at once) with the lock kept until gc_finish removes it.
 * Returns 1 when taken, 0 when a pull holds the image. */
static int
doom_rootfs (struct gc *g, int dfd, const char *hex, const char *guard, struct cm_err **err)
{
  _cleanup_free_ char *to = xasprintf ("tmp/%s.gc", hex);
  int lk = img_cache_trylock (g->c, guard, false);
  if (lk < 0)
    return 0;
  /* A killed collection's tree: ours to remove, we hold the image lock. */
  if (cm_rm_rf_at (g->c->dirfd, to, err) < 0)
    {
      close (lk);
      return -1;
    }
  if (renameat (dfd, hex, g->c->dirfd, to) < 0)
    {
      cm_err_set (err, errno, "rename `%s/rootfs/%s` to `%s/%s`", g->c->dir, hex,
                  g->c->dir, to);
      close (lk);
      return -1;
    }
  g->locks = xrealloc (g->locks, (g->ndoomed + 1) * sizeof *g->locks);
  g->doomed = xrealloc (g->doomed, (g->ndoomed + 1) * sizeof *g->doomed);
  g->locks[g->ndoomed] = lk;
  g->doomed[g->ndoomed++] = cm_steal_ptr (&to);
  return 1;
}

/* Removes the entries of |sub| that no record references and no pull
 * holds.  Called with the cache lock held exclusively. */
static int
sweep (struct gc *g, const char *sub, enum sweep_kind k, struct cm_err **err)
{
  int fd = openat (g->c->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC), removed = 0;
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  if (d == NULL)
    return fd >= 0 ? close (fd), 0 : 0;
  while ((de = readdir (d)))
    {
      char hex[65];
      bool dirlock;
      _cleanup_free_ char *guard = NULL;
      uint64_t size;
      int r;
      if (de->d_name[0] == '.')
        continue;
      snprintf (hex, sizeof hex, "%.64s", de->d_name);
      if (k != SWEEP_TMP && referenced (g->all, g->n, hex))
        continue;
      if (k == SWEEP_ROOTFS && pinned (g, hex))
        continue;
      size = g->freed ? tree_size (dirfd (d), de->d_name) : 0;
      guard = guard_of (k, de->d_name, &dirlock);
      if (k == SWEEP_ROOTFS)
        r = doom_rootfs (g, dirfd (d), de->d_name, guard, err);
      else if (guard)
        r = img_cache_remove_abandoned (g->c, dirfd (d), de->d_name, guard, dirlock, err);
      else
        r = cm_rm_rf_at (dirfd (d), de->d_name, err) < 0 ? -1 : 1;
      if (r < 0)
        {
          closedir (d);
          return -1;
        }
      if (r == 0)
        continue;
      if (g->freed)
        *g->freed += size;
      removed++;
    }
  closedir (d);
  return removed;
}

/* Sweeps with the cache lock held exclusively: no pull commits meanwhile,
 * so the records read here are the ones that count. */
static int
gc_locked (struct gc *g, struct cm_err **err)
{
  int a, b, t;
  if (img_cache_read_records (g->c, &g->all, &g->n, err) < 0)
    return -1;
  img_cache_sweep_pins (g->c);
  a = sweep (g, "rootfs", SWEEP_ROOTFS, err);
  b = a < 0 ? -1 : sweep (g, "blobs/sha256", SWEEP_BLOBS, err);
  t = b < 0 ? -1 : sweep (g, "tmp", SWEEP_TMP, err);
  if (t < 0)
    return -1;
  img_cache_sweep_locks (g->c);
  return a + b + t;
}

/* After the cache lock is released: removes the doomed trees, then their
 * lock files (still held: image/lock.c). */
static int
gc_finish (struct gc *g, int ret, struct cm_err **err)
{
  for (size_t i = 0; i < g->ndoomed; i++)
    {
      _cleanup_free_ char *lock = xasprintf ("locks/%.64s.lock", g->doomed[i] + 4);
      struct cm_err *e = NULL;
      if (cm_rm_rf_at (g->c->dirfd, g->doomed[i], &e) < 0 && ret >= 0)
        {
          *err = cm_steal_ptr (&e);
          ret = cm_err_wrap (err, "cache `%s`", g->c->dir);
        }
      cm_err_free (&e);
      unlinkat (g->c->dirfd, lock, 0);
      close (g->locks[i]);
      free (g->doomed[i]);
    }
  free (g->doomed);
  free (g->locks);
  cm_strv_free (g->kept);
  img_list_free (g->all, g->n);
  return ret;
}

/* rmi refuses, before removing anything, when a rootfs it would free is
 * pinned: the records |f| selects that no other record shares. */
static int
check_pins (struct img_cache *c, const struct found *f, const char *text,
            struct cm_err **err)
{
  for (size_t i = 0; i < f->n; i++)
    {
      const char *md = f->all[i]->manifest_digest;
      bool shared = false;
      _cleanup_free_ char *who = NULL;
      if (!f->sel[i])
        continue;
      for (size_t j = 0; j < f->n; j++)
        shared |= !f->sel[j] && strcmp (f->all[j]->manifest_digest, md) == 0;
      if (!shared && img_cache_pins (c, md + 7, true, &who) > 0)
        return cm_err_set (err, EBUSY,
                           "rmi %s: its rootfs %.19s is in use by %s; "
                           "delete %s first (nothing removed)",
                           text, md, who, strchr (who, ',') ? "them" : "it");
    }
  return 0;
}

int
img_remove (const struct img_opts *o, const char *text, struct cm_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  struct gc g = { .c = &c };
  struct found f = { 0 };
  int ret = -1, lk = -1;
  if (o->platform && img_platform_check (o->platform, err) < 0)
    return -1;
  if (img_cache_open (o, &c, err) < 0 || (lk = img_cache_lock_all (&c, true, err)) < 0
      || find (&c, text, o->platform, &f, err) < 0
      || check_pins (&c, &f, text, err) < 0)
    goto out;
  for (size_t i = 0; i < f.n; i++)
    if (f.sel[i] && img_cache_remove_record (&c, f.all[i], err) < 0)
      goto out;
  ret = gc_locked (&g, err) < 0 ? -1 : 0;
out:
  if (lk >= 0)
    close (lk);
  ret = gc_finish (&g, ret, err);
  found_free (&f);
  img_cache_close (&c);
  return ret;
}

int
img_prune (const struct img_opts *o, uint64_t *freed, char ***kept,
           struct cm_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  struct gc g = { .c = &c, .freed = freed };
  int ret = img_cache_open (o, &c, err), lk = -1;
  if (freed)
    *freed = 0;
  if (ret == 0 && (lk = img_cache_lock_all (&c, true, err)) < 0)
    ret = -1;
  if (ret == 0)
    ret = gc_locked (&g, err);
  if (lk >= 0)
    close (lk);
  if (kept)
    *kept = cm_steal_ptr (&g.kept);
  ret = gc_finish (&g, ret, err);
  img_cache_close (&c);
  return ret;
}

int
img_config_raw (const struct img_opts *o, const struct img_image *im, char **json,
                size_t *len, struct cm_err **err)
{
  struct img_cache c = { .dirfd = -1 };
  int lk = -1;
  int ret = img_cache_open (o, &c, err);
  if (ret == 0 && (lk = img_cache_lock_all (&c, false, err)) < 0)
    ret = -1;
  if (ret == 0)
    ret = img_cache_get_blob (&c, im->config_digest, json, len, err);
  if (lk >= 0)
    close (lk);
  img_cache_close (&c);
  return ret;
}
