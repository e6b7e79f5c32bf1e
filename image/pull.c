/* Pulling: reference -> source -> manifest (platform from an index) ->
 * layers downloaded in parallel (bounded), each verified while it streams
 * and unpacked in order as it arrives -> a rootfs renamed into the cache.
 *
 * Layers must be applied in order (a whiteout in layer N+1 removes a file
 * of layer N), so one thread unpacks while up to |jobs| threads download:
 * the layer being unpacked streams straight through, later layers queue in
 * memory (one budget for them all; TCP back-pressure beyond that). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

/* Bytes queued: at most QUEUE_LAYER per layer, and at most QUEUE_SHARED
 * for all the layers after the one being unpacked together (that one is
 * outside the shared budget, so it never waits behind them): ~32 MiB in
 * all, whatever --jobs and the number of layers.  (128 MiB per layer
 * peaked at 194 MB of RSS on 8 x 37 MB layers, 287 MB with --jobs 16.)
 * Downloads beyond that wait in curl's write callback until the unpacker
 * catches up. */
#define QUEUE_SHARED (24u << 20)
#define QUEUE_LAYER (8u << 20)

struct job
{
  const struct img_desc *d;
  int idx;
  struct img_stream st;
  struct img_verify v;
  struct cm_err *err;
  struct pool *pool;
  uint64_t last_report;
  /* The unpacking thread's: entries applied and bytes written so far,
   * and as last reported. */
  uint64_t entries, written, entries_reported, unpack_reported;
};

/* Opened when the first layer's first bytes arrive (or when no layer will
 * arrive): the config is fetched then, not alongside the layer requests.
 * On a local registry both requests at once made the layer's first byte
 * wait for the registry to serve the config (which is needed only at the
 * end); once bytes flow, the config's round trip overlaps the unpacking. */
struct gate
{
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool open;
};

static void
gate_open (struct gate *g)
{
  if (g == NULL)
    return;
  pthread_mutex_lock (&g->mu);
  g->open = true;
  pthread_cond_broadcast (&g->cv);
  pthread_mutex_unlock (&g->mu);
}

static void
gate_wait (struct gate *g)
{
  pthread_mutex_lock (&g->mu);
  while (!g->open)
    pthread_cond_wait (&g->cv, &g->mu);
  pthread_mutex_unlock (&g->mu);
}

struct pool
{
  struct gate *first_bytes;
  struct img_source *src;
  const struct img_opts *o;
  struct job *jobs;
  struct img_queue q;
  size_t n, next;
  bool cancel;
  pthread_mutex_t mu;
};

static void
send_progress (struct pool *p, struct img_progress *pr)
{
  if (p->o->progress == NULL)
    return;
  pr->ref = p->src->what;
  pthread_mutex_lock (&p->mu);
  p->o->progress (p->o->progress_data, pr);
  pthread_mutex_unlock (&p->mu);
}

static void
report (struct job *j, bool finished)
{
  struct img_progress pr = { .digest = j->d->digest, .index = j->idx, .count = (int) j->pool->n,
                             .kind = IMG_PROGRESS_DOWNLOAD, .done = j->v.got,
                             .total = j->d->size, .finished = finished };
  send_progress (j->pool, &pr);
}

static void
report_unpack (struct job *j, uint64_t entries, uint64_t written, bool unpacked)
{
  struct img_progress pr = { .digest = j->d->digest, .index = j->idx, .count = (int) j->pool->n,
                             .kind = IMG_PROGRESS_UNPACK, .entries = entries,
                             .written = written, .unpacked = unpacked };
  j->unpack_reported = written;
  j->entries_reported = entries;
  send_progress (j->pool, &pr);
}

/* After each entry unpacked: a report every 256 entries or 1 MiB. */
static void
unpack_tick (void *data, uint64_t entries, uint64_t written)
{
  struct job *j = data;
  j->entries = entries;
  j->written = written;
  if (entries - j->entries_reported >= 256 || written - j->unpack_reported >= (1u << 20))
    report_unpack (j, entries, written, false);
}

static int
push_sink (void *data, const void *buf, size_t len)
{
  struct job *j = data;
  if (j->v.got == len)
    {
      img_trace ("layer: first bytes");
      gate_open (j->pool->first_bytes);
    }
  if (img_stream_push (&j->st, buf, len) < 0)
    return -1;
  if (j->v.got - j->last_report >= (1u << 20))
    {
      j->last_report = j->v.got;
      report (j, false);
    }
  return 0;
}

static void *
worker (void *arg)
{
  struct pool *p = arg;
  for (;;)
    {
      struct job *j;
      struct cm_err *e = NULL;
      int r;
      pthread_mutex_lock (&p->mu);
      if (p->cancel || p->next >= p->n)
        {
          pthread_mutex_unlock (&p->mu);
          return NULL;
        }
      j = &p->jobs[p->next++];
      pthread_mutex_unlock (&p->mu);
      img_trace ("layer: download start");
      img_verify_init (&j->v, j->d, p->src->what, push_sink, j);
      r = p->src->get_blob (p->src, j->d, img_verify_sink, &j->v, &e);
      if (r < 0 && j->v.err == NULL)
        {
          img_hash_dispose (&j->v.h);
          j->err = e;
        }
      else
        {
          cm_err_free (&e);
          if (img_verify_finish (&j->v, &j->err) < 0)
            r = -1;
        }
      img_trace ("layer: downloaded and verified");
      report (j, true);
      img_stream_close (&j->st, r < 0);
    }
}

/* Stops every download but |keep|'s. */
static void
cancel_others (struct pool *p, const struct job *keep)
{
  pthread_mutex_lock (&p->mu);
  p->cancel = true;
  pthread_mutex_unlock (&p->mu);
  for (size_t i = 0; i < p->n; i++)
    if (&p->jobs[i] != keep)
      img_stream_cancel (&p->jobs[i].st);
}

/* The bytes the whole image may unpack to: --max-unpacked-size, or 100 x
 * the declared compressed sizes summed plus the slack, once.  (Per layer,
 * the slack was granted again for every layer: 16 layers of ~60 KB wrote
 * 961 MB.) */
static uint64_t
image_budget (const struct img_opts *o, const struct img_manifest *m)
{
  uint64_t sum = 0;
  if (o->max_unpacked > 0)
    return o->max_unpacked;
  for (size_t i = 0; i < m->n; i++)
    if (__builtin_add_overflow (sum, m->descs[i].size, &sum))
      return UINT64_MAX;
  if (__builtin_mul_overflow (sum, (uint64_t) IMG_BOMB_RATIO, &sum)
      || __builtin_add_overflow (sum, (uint64_t) IMG_BOMB_SLACK, &sum))
    return UINT64_MAX;
  return sum;
}

/* Unpacks every layer of |m| into |rootfd|; diff_ids[i] receives layer
 * i's uncompressed digests. */
static int
unpack_layers (const struct img_opts *o, struct img_source *src,
               const struct img_manifest *m, int rootfd, struct img_diff_id *diff_ids,
               struct gate *first_bytes, struct img_unpack_stats *stp, struct cm_err **err)
{
  struct pool p = { .first_bytes = first_bytes, .src = src, .o = o, .n = m->n };
  size_t nthreads = o->jobs > 0 ? (size_t) o->jobs : 3;
  pthread_t th[16];
  struct img_unpack_stats st = { 0 };
  uint64_t budget = image_budget (o, m);
  unsigned flags = o->allow_devices ? IMG_UNPACK_DEVICES : 0;
  int ret = 0;

  if (nthreads > ARRAY_SIZE (th))
    nthreads = ARRAY_SIZE (th);
  if (nthreads > m->n)
    nthreads = m->n;
  pthread_mutex_init (&p.mu, NULL);
  img_queue_init (&p.q, QUEUE_SHARED);
  p.jobs = xcalloc (m->n + 1, sizeof *p.jobs);
  for (size_t i = 0; i < m->n; i++)
    {
      p.jobs[i].d = &m->descs[i];
      p.jobs[i].idx = (int) i;
      p.jobs[i].pool = &p;
      img_stream_init_shared (&p.jobs[i].st, &p.q, QUEUE_LAYER);
    }
  for (size_t i = 0; i < m->n; i++)
    report (&p.jobs[i], false);   /* every layer's line, before any bytes */
  for (size_t i = 0; i < nthreads; i++)
    if (pthread_create (&th[i], NULL, worker, &p) != 0)
      abort ();
  for (size_t i = 0; i < m->n && ret == 0; i++)
    {
      struct job *j = &p.jobs[i];
      const struct img_desc *d = j->d;
      struct cm_err *ue = NULL;
      _cleanup_free_ char *what = xasprintf ("%s: layer %s", src->what, d->digest);
      const void *buf;
      uint64_t limit = budget > st.bytes ? budget - st.bytes : 0;

      img_trace ("layer: unpack start");
      st.tick = unpack_tick;
      st.tick_data = j;
      report_unpack (j, 0, 0, false);
      if (img_unpack_layer (rootfd, img_stream_read, &j->st, d->size, limit, flags, what,
                            &diff_ids[i], &st, &ue) < 0)
        ret = -1;
      else
        while (img_stream_read (&j->st, &buf) > 0)  /* tar padding after the end */
          ;
      if (ret == 0 && !j->st.failed)
        report_unpack (j, j->entries, j->written, true);
      if (ret < 0 || j->st.failed)
        {
          cancel_others (&p, j);
          /* Let this layer's download finish (it stays bounded by the
           * declared size): when the unpacker choked on corrupt bytes,
           * the digest mismatch is the error to report. */
          while (img_stream_read (&j->st, &buf) > 0)
            ;
          if (j->err && !(j->err->errno_ == ECANCELED && ue))
            {
              *err = cm_steal_ptr (&j->err);
              cm_err_free (&ue);
            }
          else if (ue)
            *err = ue;
          else
            cm_err_set (err, 0, "%s: download failed", what);
          ret = -1;
        }
    }
  img_trace ("layers unpacked");
  for (size_t i = 0; i < nthreads; i++)
    pthread_join (th[i], NULL);
  for (size_t i = 0; i < m->n; i++)
    {
      cm_err_free (&p.jobs[i].err);
      img_stream_destroy (&p.jobs[i].st);
    }
  img_queue_destroy (&p.q);
  free (p.jobs);
  pthread_mutex_destroy (&p.mu);
  st.tick = NULL;
  st.tick_data = NULL;
  *stp = st;
  return ret;
}

/* Unpacks an oci-archive or a daemon export into a fresh *tmpdir, as an
 * OCI layout.  *holdfd keeps it locked until the pull ends: a later pull
 * or prune removes it only once it is not (the pull was killed). */
static int
archive_to_layout (const struct img_ref *r, const char *what, struct img_cache *c,
                   char **tmpdir, int *holdfd, struct cm_err **err)
{
  int dfd = img_cache_archive_dir (c, tmpdir, err);
  if (dfd < 0)
    return -1;
  *holdfd = dfd;
  if (r->transport == IMG_OCI_ARCHIVE)
    {
      _cleanup_fd_ int fd = open (r->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "%s: open `%s`", what, r->path);
      return img_extract_plain (fd, dfd, what, err);
    }
  if (img_daemon_export (r, dfd, what, err) < 0)
    return -1;
  return img_daemon_to_layout (dfd, what, err);
}

/* Returns the image's source, or NULL with *err set.  (A pointer rather
 * than an int and an out-parameter: the caller's NULL check is then what
 * guards every later use, visibly to clang's analyzer too.) */
static struct img_source *
open_source (const struct img_opts *o, const struct img_ref *r, const char *what,
             struct img_cache *c, char **tmpdir, int *holdfd, struct cm_err **err)
{
  struct img_source *src = NULL;
  int ret;

  switch (r->transport)
    {
    case IMG_DOCKER:
      ret = img_registry_open (o, r, what, &src, err);
      break;
    case IMG_OCI:
      ret = img_layout_open (r->path, what, &src, err);
      break;
    case IMG_OCI_ARCHIVE:
    case IMG_DOCKER_DAEMON:
      ret = archive_to_layout (r, what, c, tmpdir, holdfd, err);
      if (ret >= 0)
        ret = img_layout_open (*tmpdir, what, &src, err);
      break;
    default:
      ret = cm_err_set (err, 0, "%s: unknown transport", what);
      break;
    }
  return ret < 0 ? NULL : src;
}

/* Gets the platform manifest: the top document, then (for an index) the
 * entry for the platform, each verified against its digest.  Returns it
 * (its body in *mbody, *mlen), or NULL with *err set. */
static struct img_manifest *
resolve_manifest (const struct img_opts *o, const struct img_ref *r,
                  struct img_source *src, char **mbody, size_t *mlen,
                  char mdigest[72], bool *from_index, struct cm_err **err)
{
  _cleanup_free_ char *body = NULL, *mt = NULL;
  size_t len;
  struct img_manifest *m = NULL;
  const char *ref = r->digest ? r->digest : r->tag;

  if (r->transport == IMG_DOCKER_DAEMON)
    ref = NULL;                 /* the export holds just that image */
  if (src->get_manifest (src, ref, &body, &len, &mt, err) < 0)
    return NULL;
  img_sha256_str (body, len, mdigest);
  if (r->digest && strcmp (mdigest, r->digest) != 0)
    {
      cm_err_set (err, 0, "%s: manifest digest mismatch (content hashes to %s)",
                  src->what, mdigest);
      return NULL;
    }
  if (img_manifest_parse (body, len, mt, src->what, &m, err) < 0)
    return NULL;
  *from_index = m->is_index;
  if (m->is_index)
    {
      const struct img_desc *d;
      _cleanup_free_ char *mt2 = NULL;
      if (img_index_select (m, o->platform, src->what, &d, err) < 0)
        {
          img_manifest_free (m);
          return NULL;
        }
      free (body);
      body = NULL;
      if (src->get_manifest (src, d->digest, &body, &len, &mt2, err) < 0)
        {
          img_manifest_free (m);
          return NULL;
        }
      img_sha256_str (body, len, mdigest);
      if (strcmp (mdigest, d->digest) != 0)
        {
          cm_err_set (err, 0, "%s: manifest %s: digest mismatch (content hashes to %s)",
                      src->what, d->digest, mdigest);
          img_manifest_free (m);
          return NULL;
        }
      {
        /* |d| points into the index: free it only once parsed.  What
         * the index says the entry is must be what was fetched. */
        struct img_manifest *idx = m;
        int pr;
        m = NULL;
        pr = img_manifest_parse (body, len, mt2 ? mt2 : d->media_type, src->what, &m, err);
        if (pr == 0 && d->media_type && strcmp (d->media_type, m->media_type) != 0)
          pr = cm_err_set (err, 0, "%s: manifest %s: the index lists it as `%s`, it is `%s`",
                           src->what, d->digest, d->media_type, m->media_type);
        img_manifest_free (idx);
        if (pr < 0)
          {
            img_manifest_free (m);
            return NULL;
          }
      }
      if (m->is_index)
        {
          img_manifest_free (m);
          cm_err_set (err, 0, "%s: nested index", src->what);
          return NULL;
        }
    }
  if (img_manifest_check_image (m, src->what, err) < 0)
    {
      img_manifest_free (m);
      return NULL;
    }
  *mbody = cm_steal_ptr (&body);
  *mlen = len;
  return m;
}

/* Holding the image lock: removes what a crashed pull of it left behind. */
static void
remove_stale_tmp (struct img_cache *c, const char *hex)
{
  int fd = openat (c->dirfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  size_t n = strlen (hex);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((de = readdir (d)))
    if (strncmp (de->d_name, hex, n) == 0 && de->d_name[n] == '.')
      {
        struct cm_err *e = NULL;
        cm_rm_rf_at (dirfd (d), de->d_name, &e);
        cm_err_free (&e);
      }
  closedir (d);
}

/* Unpacks the layers into a fresh tmp/HEX.XXXXXX (*tmp_out, removed on
 * failure); the caller renames it once the diff_ids are checked. */
static int
unpack_rootfs (const struct img_opts *o, struct img_cache *c, struct img_source *src,
               const struct img_manifest *m, const char *mdigest, struct img_diff_id *diff_ids,
               struct gate *first_bytes, struct img_unpack_stats *st, char **tmp_out,
               struct cm_err **err)
{
  _cleanup_free_ char *tmp = xasprintf ("%s/tmp/%s.XXXXXX", c->dir, mdigest + 7);
  _cleanup_fd_ int rootfd = -1;
  struct cm_err *e = NULL;

  remove_stale_tmp (c, mdigest + 7);
  if (mkdtemp (tmp) == NULL)
    return cm_err_set (err, errno, "cache temp dir `%s`", tmp);
  chmod (tmp, 0755);
  rootfd = open (tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    {
      cm_err_set (err, errno, "open `%s`", tmp);
      rmdir (tmp);
      return -1;
    }
  if (unpack_layers (o, src, m, rootfd, diff_ids, first_bytes, st, err) < 0)
    {
      /* A full disk is the cache's: say which one. */
      if (*err && ((*err)->errno_ == ENOSPC || (*err)->errno_ == EDQUOT))
        cm_err_wrap (err, "unpacking into the cache `%s`", c->dir);
      cm_rm_rf_at (AT_FDCWD, tmp, &e);
      cm_err_free (&e);
      return -1;
    }
  *tmp_out = cm_steal_ptr (&tmp);
  return 0;
}

/* The config's rootfs.diff_ids must name exactly the uncompressed layers
 * we unpacked, in order (or those layers with the end-of-archive padding
 * a zstd:chunked writer dropped: img_diff_id_matches). */
static int
check_diff_ids (const char *what, const struct img_manifest *m,
                const struct img_config_doc *cd, const struct img_diff_id *got,
                struct cm_err **err)
{
  size_t n = 0;
  while (cd->diff_ids && cd->diff_ids[n])
    n++;
  if (n != m->n)
    return cm_err_set (err, 0, "%s: config %s: rootfs.diff_ids has %zu entries for "
                       "the manifest's %zu layers", what, m->config.digest, n, m->n);
  for (size_t i = 0; i < n; i++)
    if (!img_diff_id_matches (&got[i], cd->diff_ids[i]))
      return cm_err_set (err, 0, "%s: layer %s: diff_id mismatch: the config says %s, "
                         "the uncompressed layer hashes to %s", what, m->descs[i].digest,
                         cd->diff_ids[i], got[i].exact);
  return 0;
}

/* A cached rootfs lacks the device nodes its first pull skipped; the
 * image records say how many, so that --allow-devices never silently
 * gets a tree without them. */
static int
cached_devices (const struct img_opts *o, struct img_cache *c, const char *mdigest,
                const char *what, uint64_t *skipped, struct cm_err **err)
{
  struct img_image **v = NULL;
  size_t n = 0;
  struct cm_err *e = NULL;
  *skipped = 0;
  if (img_cache_read_records (c, &v, &n, &e) < 0)
    cm_err_free (&e);           /* no records: nothing known */
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i]->manifest_digest, mdigest) == 0 && v[i]->devices_skipped > *skipped)
      *skipped = v[i]->devices_skipped;
  img_list_free (v, n);
  if (o->allow_devices && *skipped > 0)
    return cm_err_set (err, 0, "%s: --allow-devices: the cached rootfs was unpacked "
                       "without its %" PRIu64 " device nodes; remove the image (`rmi`) "
                       "and pull it again with --allow-devices, as root", what, *skipped);
  return 0;
}

static char *
platform_of (const struct img_config_doc *cd)
{
  return xasprintf ("%s/%s%s%s", cd->os ? cd->os : "?", cd->arch ? cd->arch : "?",
                    cd->variant ? "/" : "", cd->variant ? cd->variant : "");
}

/* --platform against a single-platform image (no index to choose from):
 * its config must say that platform, or the pull is refused before any
 * layer is fetched.  Leaves the config in *cbody. */
static int
check_platform (const struct img_opts *o, struct img_cache *c, struct img_source *src,
                const struct img_manifest *m, char **cbody, size_t *clen,
                struct cm_err **err)
{
  struct img_config_doc *cd = NULL;
  _cleanup_free_ char *have = NULL;
  if (img_cache_get_blob (c, m->config.digest, cbody, clen, err) < 0)
    {
      cm_err_free (err);
      if (img_fetch_small (src, &m->config, cbody, clen, err) < 0)
        return -1;
    }
  if (img_config_parse (*cbody, *clen, &cd, err) < 0)
    return -1;
  have = platform_of (cd);
  img_config_doc_free (cd);
  if (!img_platform_matches (o->platform, have))
    return cm_err_set (err, 0, "%s: --platform %s: the image is for %s only (not an index "
                       "of platforms)", src->what, o->platform, have);
  return 0;
}

static int
put_if_missing (struct img_cache *c, const char *digest, const char *buf, size_t len,
                struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("blobs/sha256/%s", digest + 7);
  struct stat st;
  if (fstatat (c->dirfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
    return 0;
  return img_cache_put_blob (c, digest, buf, len, err);
}

/* Makes the pull visible: the manifest and config blobs, the rootfs (*tmp
 * renamed, or the cached one), then the record, all under the cache lock
 * held shared.  rmi and prune sweep under it held exclusively, so they
 * see either none of this or a record with everything it names. */
static int
commit (struct img_cache *c, const struct img_image *im, const char *mbody, size_t mlen,
        const char *cbody, size_t clen, char **tmp, struct cm_err **err)
{
  _cleanup_fd_ int lk = img_cache_lock_all (c, false, err);
  if (lk < 0)
    return -1;
  if (put_if_missing (c, im->manifest_digest, mbody, mlen, err) < 0
      || put_if_missing (c, im->config_digest, cbody, clen, err) < 0)
    return -1;
  if (*tmp)
    {
      if (rename (*tmp, im->rootfs) < 0)
        return cm_err_set (err, errno, "rename `%s` to `%s`", *tmp, im->rootfs);
      free (*tmp);
      *tmp = NULL;
    }
  else if (!img_cache_has_rootfs (c, im->manifest_digest))
    /* Not expected: a sweep skips the rootfs of an image whose lock we hold. */
    return cm_err_set (err, ENOENT, "the cached rootfs of %s was removed during the pull",
                       im->manifest_digest);
  return img_cache_write_record (c, im, err);
}

struct config_fetch
{
  struct gate *gate;            /* NULL: fetch at once */
  struct img_source *src;
  const struct img_desc *d;
  char *body;
  size_t len;
  int ret;
  struct cm_err *err;
};

static void *
fetch_config (void *arg)
{
  struct config_fetch *cf = arg;
  if (cf->gate)
    gate_wait (cf->gate);
  img_trace ("config: fetch start");
  cf->ret = img_fetch_small (cf->src, cf->d, &cf->body, &cf->len, &cf->err);
  img_trace ("config: fetched");
  return NULL;
}

/* The image config and the layers: the config from the cache, or fetched
 * on a thread while the layers stream (one round trip less on small
 * images); the layers unpacked unless the rootfs is |cached|. */
static int
config_and_layers (const struct img_opts *o, struct img_cache *c,
                   struct img_source *src, const struct img_manifest *m,
                   const char *mdigest, bool cached, struct img_diff_id *diff_ids,
                   struct img_unpack_stats *ust, char **tmp, char **cbody,
                   size_t *clen, struct cm_err **err)
{
  struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, cached };
  struct config_fetch cf = { .gate = &gate, .src = src, .d = &m->config };
  struct cm_err *miss = NULL;
  pthread_t th;
  int br = 0;

  if (*cbody != NULL || img_cache_get_blob (c, m->config.digest, cbody, clen, &miss) == 0)
    return cached ? 0 : unpack_rootfs (o, c, src, m, mdigest, diff_ids, NULL, ust, tmp, err);
  cm_err_free (&miss);
  if (pthread_create (&th, NULL, fetch_config, &cf) != 0)
    abort ();
  if (!cached)
    br = unpack_rootfs (o, c, src, m, mdigest, diff_ids, &gate, ust, tmp, err);
  gate_open (&gate);        /* unpack_rootfs may fail before any layer starts */
  pthread_join (th, NULL);
  img_trace ("config joined");
  if (br < 0 || cf.ret < 0)
    {
      free (cf.body);
      if (br < 0)
        cm_err_free (&cf.err);
      else
        *err = cf.err;
      return -1;
    }
  *cbody = cf.body;
  *clen = cf.len;
  return 0;
}

static void
fill_image (struct img_image *im, struct img_cache *c, const struct img_ref *r,
            const char *mdigest, const struct img_manifest *m,
            const struct img_config_doc *cd, bool from_index)
{
  im->ref = img_ref_format (r);
  im->manifest_digest = xstrdup (mdigest);
  im->config_digest = xstrdup (m->config.digest);
  im->rootfs = img_cache_rootfs_path (c, mdigest);
  for (size_t i = 0; i < m->n; i++)
    im->size += m->descs[i].size;
  im->created = cd->created ? xstrdup (cd->created) : NULL;
  im->platform = platform_of (cd);
  im->from_index = from_index;
}

/* Removes a temporary tree; a failure leaves it for the next sweep. */
static void
rm_quietly (const char *path)
{
  struct cm_err *e = NULL;
  if (path != NULL && cm_rm_rf_at (AT_FDCWD, path, &e) < 0)
    cm_err_free (&e);
}

static int
pull_online (const struct img_opts *o, const struct img_ref *r, const char *what,
             struct img_cache *c, struct img_image **out, struct cm_err **err)
{
  _cleanup_free_ char *tmpdir = NULL, *mbody = NULL, *cbody = NULL, *tmp = NULL;
  _cleanup_free_ struct img_diff_id *diff_ids = NULL;
  struct img_source *src = NULL;
  struct img_manifest *m = NULL;
  struct img_config_doc *cd = NULL;
  struct img_image *im = NULL;
  char mdigest[72];
  size_t mlen = 0, clen = 0;
  int lockfd = -1, holdfd = -1, ret = -1;
  bool from_index = false;
  struct img_unpack_stats ust = { 0 };

  if (o->platform && img_platform_check (o->platform, err) < 0)
    return -1;
  img_cache_clean_tmp (c);
  src = open_source (o, r, what, c, &tmpdir, &holdfd, err);
  if (src == NULL)
    goto out;
  img_trace ("source opened");
  m = resolve_manifest (o, r, src, &mbody, &mlen, mdigest, &from_index, err);
  if (m == NULL)
    goto out;
  img_trace ("manifest resolved");
  if (o->platform && !from_index && check_platform (o, c, src, m, &cbody, &clen, err) < 0)
    goto out;
  lockfd = img_cache_lock (c, mdigest + 7, true, err);
  if (lockfd < 0)
    goto out;
  img_trace ("image lock taken");
  im = xcalloc (1, sizeof *im);
  im->cached = img_cache_has_rootfs (c, mdigest);
  if (im->cached && cached_devices (o, c, mdigest, what, &im->devices_skipped, err) < 0)
    goto out;
  diff_ids = xcalloc (m->n + 1, sizeof *diff_ids);
  if (config_and_layers (o, c, src, m, mdigest, im->cached, diff_ids, &ust, &tmp,
                         &cbody, &clen, err) < 0)
    goto out;
  if (img_config_parse (cbody, clen, &cd, err) < 0)
    {
      cm_err_wrap (err, "%s: config %s", src->what, m->config.digest);
      goto out;
    }
  /* Only a tree whose every layer matched its diff_id becomes visible. */
  if (tmp && check_diff_ids (src->what, m, cd, diff_ids, err) < 0)
    goto out;
  if (!im->cached)
    im->devices_skipped = ust.devices_skipped;
  fill_image (im, c, r, mdigest, m, cd, from_index);
  if (commit (c, im, mbody, mlen, cbody, clen, &tmp, err) < 0)
    {
      cm_err_wrap (err, "%s", src->what);
      goto out;
    }
  img_trace ("record written");
  *out = cm_steal_ptr (&im);
  ret = 0;
out:
  rm_quietly (tmp);
  if (lockfd >= 0)
    close (lockfd);
  img_image_free (im);
  img_config_doc_free (cd);
  img_manifest_free (m);
  if (src)
    src->free (src);
  rm_quietly (tmpdir);
  if (holdfd >= 0)
    close (holdfd);
  return ret;
}

int
img_pull (const struct img_opts *o, const char *text, struct img_image **out,
          struct cm_err **err)
{
  struct img_ref *r = NULL;
  struct img_cache c = { .dirfd = -1 };
  _cleanup_free_ char *what = NULL;
  int ret;

  if (img_ref_parse (text, &r, err) < 0)
    return -1;
  img_trace ("pull: start");
  what = img_ref_format (r);
  if (o->offline)
    ret = img_lookup (o, text, out, err);
  else if ((ret = img_cache_open (o, &c, err)) == 0)
    ret = pull_online (o, r, what, &c, out, err);
  img_cache_close (&c);
  img_ref_free (r);
  return ret;
}
