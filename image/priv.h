/* Internal interfaces shared by the files of image/ (not installed, not
 * included outside image/).  Ownership: every char * returned is owned by
 * the caller unless the comment says "borrowed". */
#ifndef SANDLOCK_IMAGE_PRIV_H
#define SANDLOCK_IMAGE_PRIV_H

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <yajl/yajl_tree.h>

#include "common/json_read.h"
#include "image/image.h"

#define IMG_MAX_MANIFEST (4u << 20)   /* manifests, indexes, configs */
/* The default budget of a whole image: 100 bytes per declared compressed
 * byte of all its layers, plus 64 MiB once (--max-unpacked-size). */
#define IMG_BOMB_RATIO 100
#define IMG_BOMB_SLACK (64u << 20)

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_V1 "application/vnd.docker.distribution.manifest.v1"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"

/* JSON is read through common/json_read.h (one parser and its guards for
 * oci/ and image/); documents of the image are at most IMG_MAX_MANIFEST. */

/* ---- manifest.c ---- */
struct img_desc
{
  char *media_type;
  char *digest;
  uint64_t size;
  char *os, *arch, *variant;    /* index entries only */
  char *ref_name;               /* org.opencontainers.image.ref.name */
};

struct img_manifest
{
  char *media_type;             /* what the document is (one of MT_*) */
  char *artifact_type;          /* OCI 1.1 artifactType, or NULL */
  bool is_index;
  struct img_desc *descs;       /* index: manifests; manifest: layers */
  size_t n;
  struct img_desc config;       /* manifest only */
};

/* Parses a manifest or index.  |media_type| is what the transport says it
 * is (a Content-Type, an index entry's mediaType; NULL, or a generic
 * application/json, text/plain, application/octet-stream: unknown).  The
 * document's own mediaType must agree with it; when the document has
 * none, the transport's type decides, then its shape (an OCI document may
 * omit it, a Docker one may not). */
int img_manifest_parse (const char *buf, size_t len, const char *media_type,
                        const char *what, struct img_manifest **out,
                        struct cm_err **err);
void img_manifest_free (struct img_manifest *m);
/* A manifest an image runtime can unpack: not an artifact (artifactType,
 * a config of another type: helm charts, signatures, SBOMs), and layers of
 * OCI or Docker tar types, plain, gzip or zstd (foreign/non-distributable
 * layers refused). */
int img_manifest_check_image (const struct img_manifest *m, const char *what,
                              struct cm_err **err);
void img_desc_clear (struct img_desc *d);

/* Picks the descriptor of |idx| for |platform| ("os/arch[/variant]"). */
int img_index_select (const struct img_manifest *idx, const char *platform,
                      const char *what, const struct img_desc **out,
                      struct cm_err **err);
/* The host's platform, e.g. "linux/amd64". */
const char *img_host_platform (void);

struct img_config_doc
{
  char **entrypoint, **cmd, **env;
  char *workdir, *user, *created, *os, *arch, *variant;
  char **label_keys, **label_values;
  size_t labels_len;
  char **ports;                 /* ExposedPorts keys */
  char **diff_ids;              /* rootfs.diff_ids: sha256 of each layer uncompressed */
};
int img_config_parse (const char *buf, size_t len, struct img_config_doc **out,
                      struct cm_err **err);
void img_config_doc_free (struct img_config_doc *c);

/* ---- digest.c ---- */
struct img_hash
{
  EVP_MD_CTX *ctx;
  uint64_t n;
};
void img_hash_init (struct img_hash *h);
void img_hash_update (struct img_hash *h, const void *buf, size_t len);
/* Writes "sha256:<hex>" into |out| (72 bytes) and frees the context. */
void img_hash_final (struct img_hash *h, char out[72]);
void img_hash_dispose (struct img_hash *h);
/* The digest of what |h| has seen followed by |zeros| zero bytes; |h|
 * itself goes on unchanged. */
void img_hash_padded (const struct img_hash *h, size_t zeros, char out[72]);
void img_sha256_str (const void *buf, size_t len, char out[72]);

/* ---- auth.c ---- */
struct img_challenge
{
  char *scheme;                 /* "bearer" or "basic" (lowercased) */
  char *realm, *service, *scope;
};
int img_challenge_parse (const char *header, struct img_challenge *out);
void img_challenge_clear (struct img_challenge *c);

/* Finds "user:pass" for |registry| in the auth file (|authfile|, or
 * $DOCKER_CONFIG/config.json, or ~/.docker/config.json).  Returns 1 when
 * found, 0 when not; *note gets a sentence about an unused credential
 * helper, if one is configured. */
int img_auth_lookup (const char *authfile, const char *registry,
                     char **userpass, char **note, struct cm_err **err);
int img_base64_decode (const char *in, char **out, size_t *outlen);
/* The auth file img_auth_lookup reads without --authfile (owned; NULL
 * when neither $DOCKER_CONFIG nor $HOME is set). */
char *img_auth_default_path (void);

/* ---- sources (registry.c, layout.c, daemon.c) ---- */

/* Receives the bytes of a blob in order; returns < 0 to abort (with the
 * error kept by the sink itself). */
typedef int (*img_sink_fn) (void *data, const void *buf, size_t len);

struct img_source
{
  /* |ref| is a tag or a digest.  *digest_out is the body's digest. */
  int (*get_manifest) (struct img_source *s, const char *ref, char **body,
                       size_t *len, char **media_type, struct cm_err **err);
  /* Streams the blob to |sink|; may resume after a dropped connection, so
   * the sink sees each byte once.  Thread-safe. */
  int (*get_blob) (struct img_source *s, const struct img_desc *d,
                   img_sink_fn sink, void *data, struct cm_err **err);
  void (*free) (struct img_source *s);
  const char *what;             /* reference text for messages (borrowed) */
};

int img_registry_open (const struct img_opts *o, const struct img_ref *r,
                       const char *what, struct img_source **out,
                       struct cm_err **err);
int img_layout_open (const char *dir, const char *what,
                     struct img_source **out, struct cm_err **err);
/* Extracts the regular files and directories of a tar (an oci-archive or a
 * docker save stream) into |dirfd| safely. */
int img_extract_plain (int fd, int dirfd, const char *what,
                       struct cm_err **err);
/* Streams `GET /images/NAME/get` from the Docker daemon into |dirfd|. */
int img_daemon_export (const struct img_ref *r, int dirfd, const char *what,
                       struct cm_err **err);
/* Turns an extracted docker-save tree into an OCI layout in place (when it
 * is not one already: Docker 25+ writes both). */
int img_daemon_to_layout (int dirfd, const char *what, struct cm_err **err);

/* Reads a whole small blob, verified against d->digest and d->size. */
int img_fetch_small (struct img_source *s, const struct img_desc *d,
                     char **body, size_t *len, struct cm_err **err);

/* ---- blob.c: a bounded chunk queue from a download thread to the
 * unpacking thread, and digest+size verification in the producer ---- */
struct img_chunk;
/* What the streams of one pull share: one lock, and one budget for the
 * bytes queued by streams the reader has not reached yet (every layer
 * after the one being unpacked), so that memory stays bounded whatever
 * the number of layers or --jobs. */
struct img_queue
{
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t used, cap;             /* bytes queued in all its streams; budget */
  struct img_chunk *spare;      /* recycled chunks */
  size_t nspare;
};
void img_queue_init (struct img_queue *q, size_t cap);
void img_queue_destroy (struct img_queue *q);

struct img_stream
{
  struct img_queue *q;          /* &own, or shared */
  struct img_queue own;
  struct img_chunk *head, *tail, *cur;
  size_t queued, cap;
  bool eof, failed, cancelled;
  bool reading;                 /* the consumer has started on it */
};
/* A stream of its own, at most |cap| bytes queued. */
void img_stream_init (struct img_stream *s, size_t cap);
/* A stream in |q|: before its consumer starts on it, it queues only while
 * q's budget has room; after, up to |cap| bytes of its own whatever the
 * others hold (so that the stream being read never waits on the ones
 * queued behind it). */
void img_stream_init_shared (struct img_stream *s, struct img_queue *q, size_t cap);
void img_stream_destroy (struct img_stream *s);
/* Producer: copies |len| bytes in; blocks while full.  -1 when cancelled. */
int img_stream_push (struct img_stream *s, const void *buf, size_t len);
/* Producer: no more data (failed: the download did not verify). */
void img_stream_close (struct img_stream *s, bool failed);
/* Consumer: next chunk (valid until the next call); 0 at end, -1 when the
 * producer failed. */
ssize_t img_stream_read (void *s, const void **buf);
/* Consumer: gives up; the producer's next push fails. */
void img_stream_cancel (struct img_stream *s);

/* Verifies a blob while it streams: hash, byte count against d->size. */
struct img_verify
{
  const struct img_desc *d;
  struct img_hash h;
  uint64_t got;
  const char *what;
  struct cm_err *err;           /* first failure */
  img_sink_fn next;
  void *next_data;
};
void img_verify_init (struct img_verify *v, const struct img_desc *d,
                      const char *what, img_sink_fn next, void *next_data);
int img_verify_sink (void *data, const void *buf, size_t len);
/* Checks size and digest at the end; frees the hash. */
int img_verify_finish (struct img_verify *v, struct cm_err **err);

/* ---- unpack.c ---- */
struct img_unpack_stats
{
  uint64_t files, bytes, devices_skipped;
  /* Optional: called after each entry with the layer's entries and bytes
   * written so far (progress display). */
  void (*tick) (void *data, uint64_t entries, uint64_t written);
  void *tick_data;
};
typedef ssize_t (*img_read_fn) (void *data, const void **buf);
/* ---- decomp.c ---- */
/* A layer stream (gzip, zstd or plain tar, told by its first bytes)
 * decompressed: img_decomp_read hands out the next block, valid until the
 * following call; 0 at the end, < 0 on an error (img_decomp_error says
 * which).  Bytes after the last gzip member are left unread. */
struct img_decomp;
int img_decomp_open (struct img_decomp **out, img_read_fn rd, void *rd_data,
                     const char *what, struct cm_err **err);
ssize_t img_decomp_read (struct img_decomp *d, const void **buf);
/* The same, into |out| (IMG_DECOMP_BLOCK bytes), so that a consumer may
 * hold several blocks at once (a plain stream is copied). */
#define IMG_DECOMP_BLOCK (512u << 10)
bool img_decomp_compressed (const struct img_decomp *d);
ssize_t img_decomp_read_into (struct img_decomp *d, void *out);
const char *img_decomp_error (const struct img_decomp *d);
void img_decomp_free (struct img_decomp *d);

/* A layer's uncompressed digest as streamed (|exact|), and the digests
 * the same stream would have followed by the end-of-archive padding a
 * writer dropped (zstd:chunked of older containers/storage): the
 * stream + 1024 zero bytes, + zeros up to the next 10 KiB record (and one
 * record more when that adds less than 1024).  |padded| entries are ""
 * when the stream does not end on a 512-byte block. */
#define IMG_PAD_IDS 3
struct img_diff_id
{
  char exact[72];
  char padded[IMG_PAD_IDS][72];
};
/* True when |want| is d->exact or one of d->padded. */
bool img_diff_id_matches (const struct img_diff_id *d, const char *want);

#define IMG_UNPACK_DEVICES 1u   /* create char/block nodes (root), 0600 */

/* Applies one layer (tar, gzip or zstd; whiteouts) read through |rd| to the
 * tree at |rootfd|.  |size_hint| is its compressed size when known (0
 * otherwise): large compressed layers are decompressed on a thread of
 * their own.  |limit| bounds the bytes written.  Without
 * IMG_UNPACK_DEVICES in |flags| char and block device entries are skipped
 * (st->devices_skipped).  When |diff_id| is not NULL it receives the
 * digests of the whole uncompressed stream (trailing bytes after the
 * tar's end included): the layer's diff_id. */
int img_unpack_layer (int rootfd, img_read_fn rd, void *rd_data,
                      uint64_t size_hint, uint64_t limit, unsigned flags, const char *what,
                      struct img_diff_id *diff_id, struct img_unpack_stats *st,
                      struct cm_err **err);
/* Resolves |path| (relative to the rootfs) for safety checks; rejects
 * absolute names and ".." components.  Returns the cleaned path. */
int img_clean_path (const char *path, char **out);

/* ---- cache.c ---- */
struct img_cache
{
  char *dir;
  int dirfd;
};
int img_cache_open (const struct img_opts *o, struct img_cache *c,
                    struct cm_err **err);
void img_cache_close (struct img_cache *c);
/* cm_atomic_write_at into the subdirectory |sub| of |dirfd|. */
int img_write_in (int dirfd, const char *sub, const char *name, const void *buf,
                  size_t len, struct cm_err **err);
/* Blobs (manifests, configs) by digest. */
int img_cache_get_blob (struct img_cache *c, const char *digest, char **buf,
                        size_t *len, struct cm_err **err);
int img_cache_put_blob (struct img_cache *c, const char *digest,
                        const void *buf, size_t len, struct cm_err **err);
/* ---- lock.c: the cache's locks (the protocol is described there) ---- */
/* Takes the per-image lock locks/NAME.lock; returns the lock fd. */
int img_cache_lock (struct img_cache *c, const char *name, bool exclusive,
                    struct cm_err **err);
/* The cache-wide lock: shared while a pull commits and while reading,
 * exclusive while rmi/prune sweep.  Returns the lock fd. */
int img_cache_lock_all (struct img_cache *c, bool exclusive, struct cm_err **err);
/* Locks |path| (in the cache: a lock file, created, or a directory)
 * exclusively without waiting; the fd, or -1 when busy or gone. */
int img_cache_trylock (struct img_cache *c, const char *path, bool dir);
/* Makes tmp/archive.XXXXXX (*path, absolute, owned) and returns its fd,
 * flocked for as long as it stays open. */
int img_cache_archive_dir (struct img_cache *c, char **path, struct cm_err **err);
/* Removes |name| of the directory |dfd| when |lock| (a cache path: a lock
 * file, unlinked too, or with |dirlock| the entry itself) is free.
 * Returns 1 when removed, 0 when the lock is held. */
int img_cache_remove_abandoned (struct img_cache *c, int dfd, const char *name,
                                const char *lock, bool dirlock, struct cm_err **err);
/* The lock that owns tmp/|name|: an archive copy is flocked itself
 * (*dirlock), anything else (HEX.XXXXXX, HEX.gc) by image HEX's lock. */
char *img_cache_tmp_guard (const char *name, bool *dirlock);
/* Removes the tmp/ entries whose owner's lock is free: what killed pulls
 * and collections left (a pull's start; cheap, tmp/ is nearly empty). */
void img_cache_clean_tmp (struct img_cache *c);
/* Unlinks every lock file nobody holds but cache.lock; returns how many. */
int img_cache_sweep_locks (struct img_cache *c);
bool img_cache_has_rootfs (struct img_cache *c, const char *mdigest);
/* The cache's subdirectory |sub| for reading, or NULL (errno). */
DIR *img_cache_opendir (struct img_cache *c, const char *sub);
/* The image record refs/KEY.json, KEY from the reference and the
 * platform (one record per pair); replaces a record an earlier version
 * wrote for the same reference and platform (KEY from the reference
 * alone).  Call with the cache lock held shared. */
int img_cache_write_record (struct img_cache *c, const struct img_image *im,
                            struct cm_err **err);
/* Removes the record of |im| (the file it was read from). */
int img_cache_remove_record (struct img_cache *c, const struct img_image *im,
                             struct cm_err **err);
int img_cache_read_records (struct img_cache *c, struct img_image ***out,
                            size_t *n, struct cm_err **err);
char *img_cache_rootfs_path (struct img_cache *c, const char *mdigest);

/* ---- pin.c ---- */
/* The live pins of rootfs/|hex|: their count, and their holders' names in
 * *names ("a, b"; owned; may be NULL).  With |drop_stale| (the cache lock
 * held exclusively) stale pins are removed, and pins/HEX when none is
 * left. */
int img_cache_pins (struct img_cache *c, const char *hex, bool drop_stale,
                    char **names);
/* img_cache_pins (drop_stale) over every pins/HEX. */
void img_cache_sweep_pins (struct img_cache *c);

/* ---- platform.c ---- */
/* |p| is "os/arch[/variant]", or an error naming --platform. */
int img_platform_check (const char *p, struct cm_err **err);
/* Whether an image for |have| ("os/arch[/variant]"; "?" parts unknown)
 * serves a request for |want|: os and arch equal, the variant when |want|
 * names one (arm64's v8 implied, as in an index). */
bool img_platform_matches (const char *want, const char *have);

/* ---- trace.c ---- */
/* With SANDLOCK_IMAGE_TRACE=1 in the environment, prints "+MS [TID] what"
 * to stderr (milliseconds since the first call): where a pull spends its
 * wall time (docs/benchmarks-image.md).  Costs one branch otherwise. */
void img_trace (const char *what);

#endif
