/* image/: references, transports, the registry protocol and its auth,
 * digests, layer unpacking, the content-addressed image cache, and the
 * image config a bundle is made from (docs/image.md).
 *
 * The one public header of image/.  It knows nothing of oci/: the caller
 * turns struct img_config into config.json.  Every function follows the
 * error contract of common/err.h. */
#ifndef SANDLOCK_IMAGE_IMAGE_H
#define SANDLOCK_IMAGE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/err.h"

/* ---- references (ref.c) ---- */

enum img_transport
{
  IMG_DOCKER,                   /* docker://[host[:port]/]name[:tag|@digest] */
  IMG_OCI,                      /* oci:DIR[:tag] */
  IMG_OCI_ARCHIVE,              /* oci-archive:FILE[:tag] */
  IMG_DOCKER_DAEMON,            /* docker-daemon:name[:tag] */
};

struct img_ref
{
  enum img_transport transport;
  char *registry;               /* docker: "registry-1.docker.io" by default */
  char *repository;             /* docker/docker-daemon: "library/busybox" */
  char *tag;                    /* NULL when absent (or when digest given) */
  char *digest;                 /* "sha256:<64 hex>" or NULL */
  char *path;                   /* oci/oci-archive: the directory or file */
};

/* Parses |s| (transport prefix required; tag together with digest refused).
 * A docker:// reference without tag or digest gets tag "latest". */
int img_ref_parse (const char *s, struct img_ref **out, struct cm_err **err);
void img_ref_free (struct img_ref *r);
/* Canonical text, e.g. "docker://registry-1.docker.io/library/busybox:latest". */
char *img_ref_format (const struct img_ref *r);
/* True for "sha256:" followed by 64 lowercase hex digits. */
bool img_digest_valid (const char *d);

/* ---- pulling ---- */

enum img_progress_kind
{
  IMG_PROGRESS_DOWNLOAD,        /* done, total, finished are set */
  IMG_PROGRESS_UNPACK,          /* entries, written, unpacked are set */
};
struct img_progress
{
  const char *ref;              /* the image's reference, as text */
  const char *digest;           /* layer digest */
  int index, count;             /* layer index / number of layers */
  enum img_progress_kind kind;
  uint64_t done, total;         /* bytes of this layer downloaded / declared */
  bool finished;                /* downloaded and verified */
  uint64_t entries, written;    /* tar entries applied, bytes written so far */
  bool unpacked;                /* every entry applied */
};
/* Called from the download threads and the unpacking one (serialised by
 * the caller's lock): every layer once before any bytes, then as bytes
 * arrive and as entries are applied. */
typedef void (*img_progress_fn) (void *data, const struct img_progress *p);

struct img_opts
{
  const char *cache_dir;        /* NULL: img_default_cache_dir() */
  const char *creds;            /* "user:pass" or NULL */
  const char *authfile;         /* NULL: $DOCKER_CONFIG or ~/.docker */
  const char *cert_dir;         /* *.crt CAs added to the system ones */
  int tls_verify;               /* -1 default (on), 0 off, 1 on */
  const char *platform;         /* "os/arch[/variant]"; NULL: the host's */
  bool offline;                 /* cache only */
  int jobs;                     /* parallel layer downloads; <= 0: 3 */
  bool allow_devices;           /* char/block nodes of layers created (root only,
                                   at most 0600); otherwise skipped and counted */
  uint64_t max_unpacked;        /* bytes the whole image may unpack to; 0: 100 x
                                   its declared compressed size + 64 MiB */
  uint64_t timeout_ms;          /* all registry transfers together; 0: none */
  uint64_t stall_timeout_ms;    /* per request, under 1 KiB/s; 0: 30 s */
  img_progress_fn progress;
  void *progress_data;
};

struct img_image
{
  char *ref;                    /* canonical reference text */
  char *manifest_digest;        /* the platform manifest's digest */
  char *config_digest;
  char *rootfs;                 /* absolute path in the cache (read-only share) */
  uint64_t size;                /* sum of compressed layer sizes */
  char *created;                /* from the config, may be NULL */
  char *platform;               /* "os/arch[/variant]" */
  bool cached;                  /* true when nothing was unpacked */
  uint64_t devices_skipped;     /* device nodes not created (no --allow-devices,
                                   or not root); kept in the image record */
  bool from_index;              /* the platform was chosen from an index */
  char *record;                 /* the record's file name in refs/ (internal) */
};
void img_image_free (struct img_image *im);

/* Pulls |ref| into the cache (or finds it there) and fills *out. */
int img_pull (const struct img_opts *o, const char *ref,
              struct img_image **out, struct cm_err **err);

/* Finds an image of the cache by reference text or digest (prefix ok). */
int img_lookup (const struct img_opts *o, const char *ref,
                struct img_image **out, struct cm_err **err);

/* Lists the cache's images; *out is an array of *n owned entries. */
int img_list (const struct img_opts *o, struct img_image ***out, size_t *n,
              struct cm_err **err);
void img_list_free (struct img_image **v, size_t n);

/* Removes a reference; its rootfs and blobs go when nothing else uses them.
 * Refused (nothing removed) when its rootfs would go but is pinned. */
int img_remove (const struct img_opts *o, const char *ref,
                struct cm_err **err);

/* Removes blobs and rootfs trees that no image references and no pin
 * holds; returns the number of entries removed.  *kept (may be NULL) gets
 * the pinned trees it left, one "HEX: NAMES" each, NULL-terminated. */
int img_prune (const struct img_opts *o, uint64_t *freed_bytes, char ***kept,
               struct cm_err **err);

/* ---- pins: a cached rootfs in use in place (pin.c) ---- */

/* Pins the cached rootfs |rootfs| (CACHE/rootfs/HEX) for as long as the
 * file |holder| (absolute; written here, must not exist) exists: rmi
 * refuses to remove the tree, prune and every sweep keep it, and their
 * messages name the holder |name|.  Removing |holder| (or its directory)
 * releases the pin even without img_unpin_at.  Returns 1 when pinned, 0
 * when |rootfs| is not a cached rootfs (nothing to pin); fails when the
 * tree is gone. */
int img_pin (const char *rootfs, const char *holder, const char *name,
             struct cm_err **err);
/* Releases the pin the holder file |dirfd|/|holder| names, and removes
 * that file; nothing when there is none. */
void img_unpin_at (int dirfd, const char *holder);

/* The image config document (raw JSON) of a cached image. */
int img_config_raw (const struct img_opts *o, const struct img_image *im,
                    char **json, size_t *len, struct cm_err **err);

/* ---- the image config, resolved for running ---- */

struct img_config
{
  char **args;                  /* Entrypoint + Cmd, NULL-terminated */
  char **env;                   /* NULL-terminated */
  char *cwd;                    /* WorkingDir or "/" */
  uint32_t uid, gid;            /* User resolved against the rootfs */
  uint32_t *gids;               /* supplementary groups from /etc/group */
  size_t gids_len;
  char **annot_keys, **annot_values; /* Labels + exposed ports */
  size_t annot_len;
};
void img_config_free (struct img_config *c);

/* Parses the config of |im| and resolves User against its rootfs's
 * /etc/passwd and /etc/group; |cmd| (may be NULL) replaces Cmd. */
int img_config_resolve (const struct img_opts *o, const struct img_image *im,
                        char *const *cmd, struct img_config **out,
                        struct cm_err **err);

/* Copies the image's rootfs into |dir| (created; must not exist or be
 * empty), keeping modes, owners (when root), xattrs and times.  Char and
 * block device nodes are copied only with |allow_devices| (and as root),
 * then at most 0600 and owned by root. */
int img_copy_rootfs (const struct img_image *im, const char *dir,
                     bool allow_devices, struct cm_err **err);

/* $XDG_CACHE_HOME/sandlock/images, or /var/lib/sandlock-oci/images as root. */
char *img_default_cache_dir (void);

#endif
