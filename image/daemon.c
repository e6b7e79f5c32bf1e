/* The docker-daemon: transport: `GET /images/NAME/get` from the Docker
 * API (unix socket from DOCKER_HOST, default /var/run/docker.sock), the
 * tar stream unpacked safely into a temp dir as it arrives, then read as an
 * OCI layout: Docker 25+ writes one; an older `docker save` tree
 * (manifest.json + layer.tar files) is turned into one here, hashing each
 * file once. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/openat2.h"
#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

struct dl
{
  CURL *h;
  struct img_stream st;
  long status;
  CURLcode rc;
  char ebuf[512];
  size_t elen;
};

static size_t
dl_write (char *p, size_t sz, size_t n, void *ud)
{
  struct dl *d = ud;
  size_t len = sz * n;
  if (d->status == 0)
    curl_easy_getinfo (d->h, CURLINFO_RESPONSE_CODE, &d->status);
  if (d->status != 200)
    {
      size_t c = len < sizeof d->ebuf - 1 - d->elen ? len : sizeof d->ebuf - 1 - d->elen;
      memcpy (d->ebuf + d->elen, p, c);
      d->elen += c;
      d->ebuf[d->elen] = '\0';
      return len;
    }
  return img_stream_push (&d->st, p, len) < 0 ? 0 : len;
}

static void *
dl_thread (void *arg)
{
  struct dl *d = arg;
  d->rc = curl_easy_perform (d->h);
  if (d->status == 0)
    curl_easy_getinfo (d->h, CURLINFO_RESPONSE_CODE, &d->status);
  img_stream_close (&d->st, d->rc != CURLE_OK || d->status != 200);
  return NULL;
}

int
img_daemon_export (const struct img_ref *r, int dirfd, const char *what,
                   struct cm_err **err)
{
  const char *host = getenv ("DOCKER_HOST");
  _cleanup_free_ char *url = NULL, *sock = NULL;
  struct dl d = { 0 };
  pthread_t th;
  char *esc;
  struct img_unpack_stats st = { 0 };
  int ret;

  curl_global_init (CURL_GLOBAL_DEFAULT);
  d.h = curl_easy_init ();
  esc = curl_easy_escape (d.h, r->path, 0);
  if (host == NULL || *host == '\0' || cm_startswith (host, "unix://"))
    {
      sock = xstrdup (host && *host ? host + 7 : "/var/run/docker.sock");
      url = xasprintf ("http://localhost/images/%s/get", esc);
      curl_easy_setopt (d.h, CURLOPT_UNIX_SOCKET_PATH, sock);
    }
  else if (cm_startswith (host, "tcp://"))
    url = xasprintf ("http://%s/images/%s/get", host + 6, esc);
  else
    {
      curl_free (esc);
      curl_easy_cleanup (d.h);
      return cm_err_set (err, 0, "%s: DOCKER_HOST `%s`: want unix:// or tcp://", what, host);
    }
  curl_free (esc);
  curl_easy_setopt (d.h, CURLOPT_URL, url);
  curl_easy_setopt (d.h, CURLOPT_WRITEFUNCTION, dl_write);
  curl_easy_setopt (d.h, CURLOPT_WRITEDATA, &d);
  curl_easy_setopt (d.h, CURLOPT_NOSIGNAL, 1L);
  img_stream_init (&d.st, 64u << 20);
  if (pthread_create (&th, NULL, dl_thread, &d) != 0)
    abort ();
  ret = img_unpack_layer (dirfd, img_stream_read, &d.st, 0, UINT64_MAX / 2, 0, what, NULL, &st, err);
  if (ret < 0)
    img_stream_cancel (&d.st);
  else
    {
      const void *b;
      while (img_stream_read (&d.st, &b) > 0)
        ;
    }
  pthread_join (th, NULL);
  if (d.rc != CURLE_OK || d.status != 200)
    {
      cm_err_free (err);
      if (d.rc != CURLE_OK)
        ret = cm_err_set (err, 0, "%s: Docker daemon at %s: %s", what, sock ? sock : host,
                          curl_easy_strerror (d.rc));
      else
        ret = cm_err_set (err, 0, "%s: Docker daemon: HTTP %ld %s", what, d.status, d.ebuf);
    }
  img_stream_destroy (&d.st);
  curl_easy_cleanup (d.h);
  return ret;
}

/* Hashes the file at |path| (resolved inside |dirfd|) and hard-links it to
 * blobs/sha256/HEX; fills |desc|. */
static int
add_blob (int dirfd, const char *path, const char *mt, struct img_desc *desc,
          const char *what, struct cm_err **err)
{
  _cleanup_fd_ int fd = cm_openat2 (dirfd, path, O_RDONLY,
                                     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  _cleanup_free_ char *buf = NULL, *dst = NULL;
  struct img_hash h;
  char digest[72], proc[64];
  struct stat s;
  ssize_t n;

  if (fd < 0 || fstat (fd, &s) < 0 || !S_ISREG (s.st_mode))
    return cm_err_set (err, errno, "%s: docker save entry `%s`", what, path);
  buf = xmalloc (1 << 20);
  img_hash_init (&h);
  while ((n = read (fd, buf, 1 << 20)) > 0)
    img_hash_update (&h, buf, (size_t) n);
  img_hash_final (&h, digest);
  if (n < 0)
    return cm_err_set (err, errno, "%s: read `%s`", what, path);
  dst = xasprintf ("blobs/sha256/%s", digest + 7);
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (linkat (AT_FDCWD, proc, dirfd, dst, AT_SYMLINK_FOLLOW) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "%s: link `%s`", what, dst);
  desc->digest = xstrdup (digest);
  desc->size = (uint64_t) s.st_size;
  desc->media_type = xstrdup (mt);
  return 0;
}

static void
gen_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static void
gen_desc (yajl_gen g, const struct img_desc *d)
{
  yajl_gen_map_open (g);
  gen_str (g, "mediaType");
  gen_str (g, d->media_type);
  gen_str (g, "digest");
  gen_str (g, d->digest);
  gen_str (g, "size");
  yajl_gen_integer (g, (long long) d->size);
  yajl_gen_map_close (g);
}

int
img_daemon_to_layout (int dirfd, const char *what, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  yajl_val v = NULL, arr, layers;
  const char *cfg;
  struct img_manifest m = { 0 };
  struct img_desc md = { 0 };
  const unsigned char *out;
  size_t outlen;
  yajl_gen g;
  char mdigest[72];
  int ret = -1;
  struct stat s;

  if (fstatat (dirfd, "oci-layout", &s, 0) == 0)
    return 0;                   /* Docker 25+: already a layout */
  if (cm_read_file_at (dirfd, "manifest.json", IMG_MAX_MANIFEST, &buf, &len, err) < 0)
    return cm_err_wrap (err, "%s: docker save stream", what);
  /* manifest.json is an array: wrap it so the object-only parser takes it. */
  {
    _cleanup_free_ char *w = xasprintf ("{\"m\":%s}", buf);
    if ((v = cm_json_parse (w, strlen (w), IMG_MAX_MANIFEST, "manifest.json", err)) == NULL)
      return -1;
  }
  arr = cm_json_get (v, "m");
  if (arr == NULL || !YAJL_IS_ARRAY (arr) || arr->u.array.len == 0
      || (cfg = cm_json_str (arr->u.array.values[0], "Config")) == NULL
      || (layers = cm_json_get (arr->u.array.values[0], "Layers")) == NULL
      || !YAJL_IS_ARRAY (layers))
    {
      cm_err_set (err, 0, "%s: manifest.json: expected [{Config, Layers}]", what);
      goto out;
    }
  mkdirat (dirfd, "blobs", 0755);
  mkdirat (dirfd, "blobs/sha256", 0755);
  if (add_blob (dirfd, cfg, "application/vnd.oci.image.config.v1+json", &m.config, what, err) < 0)
    goto out;
  m.descs = xcalloc (layers->u.array.len + 1, sizeof *m.descs);
  for (size_t i = 0; i < layers->u.array.len; i++, m.n++)
    {
      if (!YAJL_IS_STRING (layers->u.array.values[i]))
        {
          cm_err_set (err, 0, "%s: manifest.json: Layers[%zu] is not a string", what, i);
          goto out;
        }
      if (add_blob (dirfd, YAJL_GET_STRING (layers->u.array.values[i]),
                    "application/vnd.oci.image.layer.v1.tar", &m.descs[i], what, err) < 0)
        goto out;
    }
  g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  gen_str (g, "schemaVersion");
  yajl_gen_integer (g, 2);
  gen_str (g, "mediaType");
  gen_str (g, MT_OCI_MANIFEST);
  gen_str (g, "config");
  gen_desc (g, &m.config);
  gen_str (g, "layers");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < m.n; i++)
    gen_desc (g, &m.descs[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &out, &outlen);
  img_sha256_str (out, outlen, mdigest);
  {
    _cleanup_free_ char *idx = NULL;
    ret = img_write_in (dirfd, "blobs/sha256", mdigest + 7, out, outlen, err);
    idx = xasprintf ("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"%s\","
                     "\"digest\":\"%s\",\"size\":%zu}]}", MT_OCI_MANIFEST, mdigest, outlen);
    if (ret == 0)
      ret = cm_atomic_write_at (dirfd, "index.json", idx, strlen (idx), 0644, err);
    if (ret == 0)
      ret = cm_atomic_write_at (dirfd, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}", 30,
                                0644, err);
  }
  yajl_gen_free (g);
out:
  for (size_t i = 0; i < m.n; i++)
    img_desc_clear (&m.descs[i]);
  free (m.descs);
  img_desc_clear (&m.config);
  img_desc_clear (&md);
  if (v)
    yajl_tree_free (v);
  return ret;
}
