/* The oci: transport (an OCI image layout directory) and the tar reading
 * behind oci-archive: (the archive is unpacked, with the same safe
 * unpacker as layers, into a temp dir of the cache, then read as a
 * layout). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "image/priv.h"

struct layout
{
  struct img_source base;
  char *what;
  int dirfd;
};

/* Opens a regular file of the layout, resolving inside it: an extracted
 * oci-archive or docker save stream is untrusted, and a symlink or a
 * device node planted there must not make us read the host. */
static int
open_in_layout (struct layout *l, const char *path, struct cm_err **err)
{
  struct stat st;
  int fd = cm_openat2 (l->dirfd, path, O_RDONLY | O_NONBLOCK,
                       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return cm_err_set (err, errno, "%s: `%s` in the layout", l->what, path);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return cm_err_set (err, 0, "%s: `%s` in the layout is not a regular file", l->what, path);
    }
  return fd;
}

static int
open_blob (struct layout *l, const char *digest, struct cm_err **err)
{
  _cleanup_free_ char *p = NULL;
  if (!img_digest_valid (digest))
    return cm_err_set (err, 0, "%s: invalid digest `%s`", l->what, digest);
  p = xasprintf ("blobs/sha256/%s", digest + 7);
  return open_in_layout (l, p, err);
}

static int
lay_get_blob (struct img_source *s, const struct img_desc *d, img_sink_fn sink,
              void *data, struct cm_err **err)
{
  struct layout *l = (struct layout *) s;
  _cleanup_fd_ int fd = open_blob (l, d->digest, err);
  _cleanup_free_ char *buf = NULL;
  const size_t bsz = 1u << 20;
  if (fd < 0)
    return -1;
  buf = xmalloc (bsz);
  for (;;)
    {
      ssize_t n = read (fd, buf, bsz);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return cm_err_set (err, errno, "%s: read blob %s", l->what, d->digest);
      if (n == 0)
        return 0;
      if (sink (data, buf, (size_t) n) < 0)
        return cm_err_set (err, ECANCELED, "%s: blob %s", l->what, d->digest);
    }
}

static int
read_small (struct layout *l, const struct img_desc *d, char **body, size_t *len,
            struct cm_err **err)
{
  return img_fetch_small (&l->base, d, body, len, err);
}

/* |ref|: a digest, a tag (index.json's ref.name annotation), or NULL: the
 * only manifest, or index.json itself when it lists several platforms. */
/* True when index.json names more than one image (ref.name tags): a
 * reference without a tag would pick one of them arbitrarily.  Untagged
 * entries are the platforms of one image. */
static bool
names_images (const struct img_manifest *idx)
{
  for (size_t i = 0; i < idx->n; i++)
    for (size_t j = i + 1; j < idx->n; j++)
      if (idx->descs[i].ref_name && idx->descs[j].ref_name
          && strcmp (idx->descs[i].ref_name, idx->descs[j].ref_name) != 0)
        return true;
  return false;
}

/* "images tagged `a`, `b`" (and how many are untagged). */
static char *
tag_list (const struct img_manifest *idx)
{
  char *s = xstrdup ("images tagged"), *t;
  size_t untagged = 0;
  for (size_t i = 0; i < idx->n; i++)
    {
      if (idx->descs[i].ref_name == NULL)
        {
          untagged++;
          continue;
        }
      t = xasprintf ("%s%s `%s`", s, strcmp (s, "images tagged") ? "," : "",
                     idx->descs[i].ref_name);
      free (s);
      s = t;
    }
  if (untagged)
    {
      t = xasprintf ("%s and %zu untagged", s, untagged);
      free (s);
      s = t;
    }
  return s;
}

static int
lay_get_manifest (struct img_source *s, const char *ref, char **body,
                  size_t *len, char **media_type, struct cm_err **err)
{
  struct layout *l = (struct layout *) s;
  _cleanup_free_ char *ibuf = NULL;
  size_t ilen;
  struct img_manifest *idx = NULL;
  const struct img_desc *pick = NULL;
  int ret;

  *media_type = NULL;
  if (ref && img_digest_valid (ref))
    {
      _cleanup_fd_ int fd = open_blob (l, ref, err);
      struct stat st;
      struct img_desc d = { .digest = (char *) ref };
      if (fd < 0 || fstat (fd, &st) < 0)
        return -1;
      d.size = (uint64_t) st.st_size;
      return read_small (l, &d, body, len, err);
    }
  {
    _cleanup_fd_ int fd = open_in_layout (l, "index.json", err);
    char proc[64];
    if (fd < 0)
      return -1;
    /* Re-open the file we vetted (a regular file inside the layout). */
    snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (cm_read_file_at (AT_FDCWD, proc, IMG_MAX_MANIFEST, &ibuf, &ilen, err) < 0)
      return cm_err_wrap (err, "%s: index.json", l->what);
  }
  if (img_manifest_parse (ibuf, ilen, MT_OCI_INDEX, l->what, &idx, err) < 0)
    return -1;
  for (size_t i = 0; i < idx->n; i++)
    if (ref ? idx->descs[i].ref_name && strcmp (idx->descs[i].ref_name, ref) == 0
            : idx->n == 1)
      pick = &idx->descs[i];
  if (pick == NULL && ref == NULL && idx->n > 1 && names_images (idx))
    {
      _cleanup_free_ char *names = tag_list (idx);
      img_manifest_free (idx);
      return cm_err_set (err, 0, "%s: the layout holds %s; name one with :TAG", l->what,
                         names);
    }
  if (pick == NULL && ref == NULL && idx->n > 1)
    {
      *body = cm_steal_ptr (&ibuf);
      *len = ilen;
      *media_type = xstrdup (MT_OCI_INDEX);
      img_manifest_free (idx);
      return 0;
    }
  if (pick == NULL)
    {
      img_manifest_free (idx);
      return cm_err_set (err, 0, "%s: no manifest %s%s%s in index.json", l->what,
                         ref ? "tagged `" : "", ref ? ref : "(index.json is empty)",
                         ref ? "`" : "");
    }
  ret = read_small (l, pick, body, len, err);
  if (ret == 0 && pick->media_type)
    *media_type = xstrdup (pick->media_type);
  img_manifest_free (idx);
  return ret;
}

static void
lay_free (struct img_source *s)
{
  struct layout *l = (struct layout *) s;
  if (l->dirfd >= 0)
    close (l->dirfd);
  free (l->what);
  free (l);
}

int
img_layout_open (const char *dir, const char *what, struct img_source **out,
                 struct cm_err **err)
{
  struct layout *l = xcalloc (1, sizeof *l);
  struct stat st;
  l->base.get_manifest = lay_get_manifest;
  l->base.get_blob = lay_get_blob;
  l->base.free = lay_free;
  l->what = xstrdup (what);
  l->base.what = l->what;
  l->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (l->dirfd < 0)
    {
      cm_err_set (err, errno, "%s: layout directory `%s`", what, dir);
      lay_free (&l->base);
      return -1;
    }
  if (fstatat (l->dirfd, "oci-layout", &st, 0) < 0)
    {
      cm_err_set (err, errno, "%s: `%s` is not an OCI image layout (no oci-layout file)",
                  what, dir);
      lay_free (&l->base);
      return -1;
    }
  *out = &l->base;
  return 0;
}

struct fd_reader
{
  int fd;
  char buf[1 << 20];
};

static ssize_t
fd_read (void *data, const void **buf)
{
  struct fd_reader *r = data;
  ssize_t n;
  do
    n = read (r->fd, r->buf, sizeof r->buf);
  while (n < 0 && errno == EINTR);
  *buf = r->buf;
  return n;
}

int
img_extract_plain (int fd, int dirfd, const char *what, struct cm_err **err)
{
  struct fd_reader *r = xmalloc (sizeof *r);
  struct img_unpack_stats st = { 0 };
  struct stat s;
  uint64_t limit = UINT64_MAX / 2;
  int ret;
  if (fstat (fd, &s) == 0 && S_ISREG (s.st_mode))
    limit = (uint64_t) s.st_size * IMG_BOMB_RATIO + IMG_BOMB_SLACK;
  r->fd = fd;
  ret = img_unpack_layer (dirfd, fd_read, r, 0, limit, 0, what, NULL, &st, err);
  free (r);
  return ret;
}
