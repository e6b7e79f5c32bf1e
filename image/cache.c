/* The content-addressed image cache (docs/image.md, "Cache layout"):
 *
 *   blobs/sha256/HEX   manifests and configs, verified before they land
 *   rootfs/HEX/        the unpacked rootfs of platform manifest HEX
 *   tmp/HEX.XXXXXX/    an unpack in progress (renamed into rootfs/ when done)
 *   locks/             flock files (image/lock.c)
 *   pins/HEX/NONCE     rootfs/HEX is in use outside the cache (image/pin.c)
 *   refs/KEY.json      an image record: reference + platform -> manifest
 *                      digest (KEY: sha256 of "REF\nPLATFORM"; earlier
 *                      versions keyed by REF alone, still read)
 *
 * Nothing half-written is ever visible under blobs/, rootfs/ or refs/:
 * files are written to a temp name and renamed, trees are renamed whole.
 * A crashed pull leaves only tmp/ entries, which the next pull or prune
 * removes once it can take their owner's lock (image/lock.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "image/priv.h"

char *
img_default_cache_dir (void)
{
  const char *xdg = getenv ("XDG_CACHE_HOME"), *home = getenv ("HOME");
  if (geteuid () == 0)
    return xstrdup ("/var/lib/sandlock-oci/images");
  if (xdg && *xdg)
    return xasprintf ("%s/sandlock/images", xdg);
  return xasprintf ("%s/.cache/sandlock/images", home && *home ? home : "/tmp");
}

int
img_cache_open (const struct img_opts *o, struct img_cache *c, struct cm_err **err)
{
  static const char *const sub[] = { "blobs", "blobs/sha256", "rootfs", "tmp", "locks", "refs",
                                      "pins" };
  c->dir = o->cache_dir ? xstrdup (o->cache_dir) : img_default_cache_dir ();
  c->dirfd = -1;
  if (cm_mkdir_p (c->dir, 0700, err) < 0)
    return cm_err_wrap (err, "cache");
  c->dirfd = open (c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (c->dirfd < 0)
    return cm_err_set (err, errno, "cache `%s`", c->dir);
  for (size_t i = 0; i < ARRAY_SIZE (sub); i++)
    if (mkdirat (c->dirfd, sub[i], 0700) < 0 && errno != EEXIST)
      return cm_err_set (err, errno, "cache `%s/%s`", c->dir, sub[i]);
  return 0;
}

void
img_cache_close (struct img_cache *c)
{
  if (c->dirfd >= 0)
    close (c->dirfd);
  free (c->dir);
  c->dir = NULL;
  c->dirfd = -1;
}

int
img_cache_get_blob (struct img_cache *c, const char *digest, char **buf,
                    size_t *len, struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("blobs/sha256/%s", digest + 7);
  char got[72];
  if (cm_read_file_at (c->dirfd, p, IMG_MAX_MANIFEST, buf, len, err) < 0)
    return -1;
  img_sha256_str (*buf, *len, got);
  if (strcmp (got, digest) != 0)
    {
      free (*buf);
      *buf = NULL;
      return cm_err_set (err, 0, "cache blob %s is corrupt (hashes to %s)", digest, got);
    }
  return 0;
}

int
img_write_in (int dirfd, const char *sub, const char *name, const void *buf,
              size_t len, struct cm_err **err)
{
  _cleanup_fd_ int fd = openat (dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open `%s`", sub);
  return cm_atomic_write_at (fd, name, buf, len, 0644, err);
}

int
img_cache_put_blob (struct img_cache *c, const char *digest, const void *buf,
                    size_t len, struct cm_err **err)
{
  if (img_write_in (c->dirfd, "blobs/sha256", digest + 7, buf, len, err) < 0)
    return cm_err_wrap (err, "cache `%s`: blob %s", c->dir, digest);
  return 0;
}

DIR *
img_cache_opendir (struct img_cache *c, const char *sub)
{
  int fd = openat (c->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL && fd >= 0)
    close (fd);
  return d;
}

bool
img_cache_has_rootfs (struct img_cache *c, const char *mdigest)
{
  _cleanup_free_ char *p = xasprintf ("rootfs/%s", mdigest + 7);
  struct stat s;
  return fstatat (c->dirfd, p, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (s.st_mode);
}

char *
img_cache_rootfs_path (struct img_cache *c, const char *mdigest)
{
  return xasprintf ("%s/rootfs/%s", c->dir, mdigest + 7);
}

/* An image record is this file's type (read_record makes them): freeing
 * it here keeps cache.c below store.c and pull.c, which use it. */
void
img_image_free (struct img_image *im)
{
  if (im == NULL)
    return;
  free (im->ref);
  free (im->manifest_digest);
  free (im->config_digest);
  free (im->rootfs);
  free (im->created);
  free (im->platform);
  free (im->record);
  free (im);
}

void
img_list_free (struct img_image **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    img_image_free (v[i]);
  free (v);
}

static void
gen_kv (yajl_gen g, const char *k, const char *v)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
  if (v)
    yajl_gen_string (g, (const unsigned char *) v, strlen (v));
  else
    yajl_gen_null (g);
}

/* refs/ file name of a record: 32 hex digits of sha256 of |ref| and
 * |platform| ("REF\nPLATFORM"), or of |ref| alone (|platform| NULL: the
 * key of earlier versions, one record per reference). */
static char *
record_name (const char *ref, const char *platform)
{
  _cleanup_free_ char *k = platform ? xasprintf ("%s\n%s", ref, platform) : xstrdup (ref);
  char key[72];
  img_sha256_str (k, strlen (k), key);
  return xasprintf ("%.32s.json", key + 7);
}

static int read_record (struct img_cache *c, int dfd, const char *name,
                        struct img_image **out);

/* An earlier version's record for the same reference: replaced when it is
 * for the same platform (it would otherwise shadow the new one). */
static void
drop_legacy_record (struct img_cache *c, const struct img_image *im)
{
  _cleanup_free_ char *name = record_name (im->ref, NULL);
  _cleanup_fd_ int fd = openat (c->dirfd, "refs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct img_image *old = NULL;
  if (fd < 0 || read_record (c, fd, name, &old) < 0)
    return;
  if (strcmp (old->ref, im->ref) == 0
      && (old->platform == NULL || strcmp (old->platform, im->platform) == 0))
    unlinkat (fd, name, 0);
  img_image_free (old);
}

int
img_cache_write_record (struct img_cache *c, const struct img_image *im,
                        struct cm_err **err)
{
  _cleanup_free_ char *name = NULL;
  const unsigned char *buf;
  size_t len;
  yajl_gen g = yajl_gen_alloc (NULL);
  int ret;

  yajl_gen_map_open (g);
  gen_kv (g, "ref", im->ref);
  gen_kv (g, "manifest", im->manifest_digest);
  gen_kv (g, "config", im->config_digest);
  gen_kv (g, "created", im->created);
  gen_kv (g, "platform", im->platform);
  yajl_gen_string (g, (const unsigned char *) "size", 4);
  yajl_gen_integer (g, (long long) im->size);
  yajl_gen_string (g, (const unsigned char *) "devices_skipped", 15);
  yajl_gen_integer (g, (long long) im->devices_skipped);
  yajl_gen_string (g, (const unsigned char *) "from_index", 10);
  yajl_gen_bool (g, im->from_index);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  name = record_name (im->ref, im->platform);
  ret = img_write_in (c->dirfd, "refs", name, buf, len, err);
  yajl_gen_free (g);
  if (ret == 0)
    drop_legacy_record (c, im);
  return ret;
}

int
img_cache_remove_record (struct img_cache *c, const struct img_image *im,
                         struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("refs/%s", im->record);
  if (unlinkat (c->dirfd, p, 0) < 0 && errno != ENOENT)
    return cm_err_set (err, errno, "%s: remove the record `%s/%s`", im->ref, c->dir, p);
  return 0;
}

static char *
dup_or_null (const char *s)
{
  return s ? xstrdup (s) : NULL;
}

static int
read_record (struct img_cache *c, int dfd, const char *name, struct img_image **out)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  struct cm_err *e = NULL;
  yajl_val v = NULL, sz;
  struct img_image *im;

  if (cm_read_file_at (dfd, name, IMG_MAX_MANIFEST, &buf, &len, &e) < 0
      || (v = cm_json_parse (buf, len, IMG_MAX_MANIFEST, name, &e)) == NULL)
    {
      cm_err_free (&e);
      return -1;                /* a record another process just removed */
    }
  if (!img_digest_valid (cm_json_str (v, "manifest")) || cm_json_str (v, "ref") == NULL)
    {
      yajl_tree_free (v);
      return -1;
    }
  im = xcalloc (1, sizeof *im);
  im->ref = xstrdup (cm_json_str (v, "ref"));
  im->manifest_digest = xstrdup (cm_json_str (v, "manifest"));
  im->config_digest = dup_or_null (cm_json_str (v, "config"));
  im->created = dup_or_null (cm_json_str (v, "created"));
  im->platform = dup_or_null (cm_json_str (v, "platform"));
  sz = cm_json_get (v, "size");
  im->size = sz && YAJL_IS_INTEGER (sz) ? (uint64_t) YAJL_GET_INTEGER (sz) : 0;
  sz = cm_json_get (v, "devices_skipped");
  im->devices_skipped = sz && YAJL_IS_INTEGER (sz) ? (uint64_t) YAJL_GET_INTEGER (sz) : 0;
  sz = cm_json_get (v, "from_index");
  im->from_index = sz && YAJL_IS_TRUE (sz);
  im->record = xstrdup (name);
  im->rootfs = img_cache_rootfs_path (c, im->manifest_digest);
  im->cached = true;
  yajl_tree_free (v);
  *out = im;
  return 0;
}

int
img_cache_read_records (struct img_cache *c, struct img_image ***out, size_t *n,
                        struct cm_err **err)
{
  int fd = openat (c->dirfd, "refs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;
  struct dirent *de;
  struct img_image **v = NULL;
  size_t cnt = 0;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, errno, "cache `%s/refs`", c->dir);
    }
  while ((de = readdir (d)))
    {
      struct img_image *im;
      size_t l = strlen (de->d_name);
      if (l < 6 || strcmp (de->d_name + l - 5, ".json") != 0)
        continue;
      if (read_record (c, dirfd (d), de->d_name, &im) < 0)
        continue;
      v = xrealloc (v, (cnt + 1) * sizeof *v);
      v[cnt++] = im;
    }
  closedir (d);
  *out = v;
  *n = cnt;
  return 0;
}
