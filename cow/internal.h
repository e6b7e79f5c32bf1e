/* Private to cow/: the upper-layer walker and the confined openers shared
 * by changes, conflicts and commit. */
#ifndef SANDLOCK_COW_INTERNAL_H
#define SANDLOCK_COW_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "cow.h"

/* One entry of the upper layer, as overlayfs left it. */
struct cow_entry
{
  const char *rel;  /* path relative to the upper root */
  const char *name; /* last component */
  int dirfd;        /* upper directory holding |name| */
  struct stat st;
  bool whiteout; /* char 0:0 or an overlay.whiteout xattr */
  bool opaque;   /* directory with overlay.opaque = "y" */
  bool post;     /* directory, after its children */
};

typedef int (*cow_walk_fn) (const struct cow_entry *e, void *arg,
                            struct cm_err **err);

/* Walks |b|'s upper depth-first, names sorted; directories are visited
 * before (post = false) and after (post = true) their children. */
int cow_walk_upper (const struct cow_branch *b, cow_walk_fn fn, void *arg,
                    struct cm_err **err);

/* One entry below a lower directory (cow_walk_lower). */
struct cow_lower_entry
{
  int dirfd;        /* lower directory holding |name| */
  const char *name; /* last component */
  const char *rel;  /* path relative to the lower root */
  struct stat st;
  unsigned depth; /* 1: a child of the walk's top directory */
};

/* Returns < 0 to stop with *err set, 0 to go on, 1 to descend into the
 * entry (a directory). */
typedef int (*cow_lower_fn) (const struct cow_lower_entry *e, void *arg,
                             struct cm_err **err);

/* Walks the lower tree below the directory |rel| (beneath |lowerfd|, no
 * symlink followed, no mount crossed), depth-first in readdir order.  An
 * entry gone between readdir and stat is skipped. */
int cow_walk_lower (int lowerfd, const char *rel, cow_lower_fn fn, void *arg,
                    struct cm_err **err);

/* True when the upper entry |e| was copied up from a lower one (it has
 * overlay.origin: overlayfs sets it at every copy-up, a null handle where
 * the lower cannot encode one), as opposed to made in the upper. */
bool cow_entry_copied_up (const struct cow_entry *e);
/* The overlay.origin value of |e| into |buf| (its length), or -1 when it
 * has none. */
ssize_t cow_entry_origin (const struct cow_entry *e, unsigned char *buf,
                          size_t len);

/* Opens |rel| (relative, no "..") beneath |rootfd| without following any
 * symlink or crossing a mount point (common/openat2.h: RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, and its
 * fallback walk where openat2 is missing): overlayfs does not see mounts
 * inside its lower either.  "" opens the root. */
int cow_open_beneath (int rootfd, const char *rel, int flags);

/* The parent directory of |rel| beneath |rootfd| (O_PATH|O_DIRECTORY),
 * and the last component in *leaf (points into |rel|). */
int cow_open_parent (int rootfd, const char *rel, const char **leaf);

/* A one-slot cache of the parent directory opened last: a walk visits the
 * entries of one directory in a row, so most lookups are hits. */
struct cow_dircache
{
  char *rel; /* the cached directory, relative */
  int fd;    /* -1: empty */
};

/* cow_open_parent through |dc| (opened with |flags|, which must be the
 * same on every call): the fd is borrowed, valid until the next call or
 * cow_dircache_free.  A miss that fails leaves the cache empty. */
int cow_dircache_parent (struct cow_dircache *dc, int rootfd, const char *rel,
                         int flags, const char **leaf);
void cow_dircache_free (struct cow_dircache *dc);

/* Lowercase hex sha256 of the regular file |fd| into |hex| (65 bytes). */
int cow_sha256_fd (int fd, char hex[65]);

/* True when the name is an overlayfs private xattr (never copied). */
bool cow_xattr_private (const char *name);

/* Removes the storage directory |path| (or one of its parts): overlayfs
 * leaves work/work with mode 0, which its unprivileged owner must open up
 * before removing it. */
int cow_remove (const char *path, struct cm_err **err);

/* The meta file: write (atomic, fsync'd) from |b|. */
int cow_meta_write (const struct cow_branch *b, struct cm_err **err);

/* ---- the quota tmpfs (quota.c) ---- */

#define COW_QUOTA_DIR "quota"

/* Sets b->upper and b->work for b->in_tmpfs (STORAGE/quota/{upper,work})
 * or not (STORAGE/{upper,work}). */
void cow_layer_paths (struct cow_branch *b);

/* Mounts the tmpfs of b->max_disk bytes at STORAGE/quota (made here),
 * with |tag| (NULL: "tmpfs") as its source. */
int cow_quota_mount (const struct cow_branch *b, const char *tag,
                     struct cm_err **err);

/* Unmounts STORAGE/quota if something is mounted there, and removes the
 * directory when it is empty.  Never fails: what is not there is fine. */
void cow_quota_umount (const char *storage);

/* True when STORAGE/quota is a tmpfs mount holding upper/ (after a
 * restart it is an empty directory of the storage's own filesystem). */
bool cow_quota_mounted (const char *storage);

/* Fails, saying so, when |b| is lost (its quota tmpfs is gone). */
int cow_branch_usable (const struct cow_branch *b, struct cm_err **err);

#endif
