/* Branches of `cow` mounts, seen from oci/ (docs/cow.md): the create-time
 * setup (annotations run.oci.sandlock.cow.*, mounts[].options "cow"), the
 * per-id record under ROOT/cow-branches/ID that outlives `delete`, and the
 * decision taken when the container is gone. */
#ifndef SANDLOCK_OCI_COW_BRANCH_H
#define SANDLOCK_OCI_COW_BRANCH_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "cow/cow.h"
#include "runtime/config.h"
#include "state.h"

#define OCI_COW_ANN "run.oci.sandlock.cow."
/* ROOT/ID/image-pin: the holder file of the image cache's pin on the
 * container's rootfs lower (image/image.h img_pin). */
#define OCI_COW_IMAGE_PIN "image-pin"
/* ROOT/cow-branches/ID/creating: what a create is about to make, until
 * its record is written (oci/cow_setup.c write_creating). */
#define OCI_COW_CREATING "creating"

enum oci_cow_action
{
  OCI_COW_COMMIT,
  OCI_COW_ABORT,
  OCI_COW_KEEP,
  OCI_COW_DEFER
};

/* "commit" -> OCI_COW_COMMIT, ...; < 0 when unknown. */
int oci_cow_action_parse (const char *s);
const char *oci_cow_action_name (enum oci_cow_action a);

/* The run flags that override the annotations (NULL: not given). */
struct oci_cow_flags
{
  const char *on_exit, *on_error;
};

/* Validates the cow annotations (and |f|), then turns every bind mount
 * with option "cow" into an overlay over a new branch and records the
 * branches.  Errors name the annotation key or mounts[i]; on failure
 * nothing is left.  1 when it made branches, 0 when there are none. */
int oci_cow_setup (const struct oci_globals *g, const char *id,
                   struct rt_config *cfg, const struct oci_cow_flags *f,
                   struct cm_err **err);

/* ---- max_disk (oci/cow_quota.c) ---- */

/* The byte count |v| of annotation |key| (common/size.h); the error
 * names the key. */
int oci_cow_size_parse (const char *key, const char *v, uint64_t *out,
                        struct cm_err **err);
/* The annotation run.oci.sandlock.cow.max_disk of |cfg|; *out = 0
 * without it. */
int oci_cow_max_disk (const struct rt_config *cfg, uint64_t *out,
                      struct cm_err **err);
/* Wraps a failed branch or layer create with |fmt|; when the quota could
 * not be mounted for want of the right to (rootless), says so, naming the
 * annotation.  Returns -1. */
int oci_cow_quota_wrap (struct cm_err **err, uint64_t max_disk,
                        const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* create failed after oci_cow_setup: removes this id's branches. */
void oci_cow_discard (const struct oci_globals *g, const char *id);

/* What a create of |id| killed before writing its record left (branch
 * storages, wherever the storage annotation put them, and their quota
 * tmpfs) goes; a warning names what stays.  The caller holds the id's
 * state directory locked, or no create of |id| can be running. */
void oci_cow_reclaim (const struct oci_globals *g, const char *id);

/* The container's exit code is known (run) but it stays (run --keep):
 * recorded for the decision `delete` takes. */
void oci_cow_record_exit (const struct oci_globals *g, const char *id,
                          int code);

/* The container is gone: applies on_exit (code 0) or on_error to its
 * pending branches; |code| < 0: unknown (delete after an engine reaped
 * it: the recorded code, else defer unless both actions agree).  Says on
 * stderr what it did with each branch. */
void oci_cow_decide (const struct oci_globals *g, const char *id, int code);

struct oci_cow_ref;
/* A branch left kept or deferred (after a failed decision) moves off its
 * quota tmpfs, if it has one; a failure is said on stderr (the branch
 * then stays on the tmpfs, still usable until a restart). */
void oci_cow_persist (const struct oci_globals *g, const char *id,
                      const struct oci_cow_ref *ref, struct cow_branch *b);

/* ---- run --image: the cached rootfs as an overlay lower ---- */

/* Makes |rootfs| an empty directory (the overlay's mount point). */
int oci_cow_rootfs_mountpoint (const char *rootfs, struct cm_err **err);

/* Whether overlayfs can hold an image rootfs here; NULL when it can, else
 * why not (static text). */
const char *oci_cow_image_unusable (void);

/* Opens up the mode-0 work/work overlayfs leaves in ROOT/ID/layer, so
 * that the state directory's owner can remove it (a rootless container).
 * |dirfd|: the locked state directory, or -1. */
void oci_cow_layer_release (int dirfd);

/* With the annotation run.oci.sandlock.cow.rootfs_lower=DIR, the root is
 * an overlay of DIR (read-only) and a layer of this container's own,
 * ROOT/ID/layer, which goes with the state directory: makes the layer and
 * returns 1 with |src| filled (pointing into *b and |lowers|, which must
 * outlive it); 0 without the annotation.  Where the kernel refuses that
 * overlay (rt_overlay_prepare), warns and copies DIR to ROOT/ID/rootfs
 * instead: returns 0 with *rootfs (owned) the copy to bind.  When it
 * returns 1 with src->premade, the caller closes src->mount_fd once
 * rt_container_create returned. */
struct rt_rootfs_source;
/* The annotation naming a cached rootfs as the overlay lower, or NULL. */
const char *oci_cow_rootfs_lower (const struct rt_config *cfg);
int oci_cow_rootfs_source (const struct oci_globals *g, const char *id,
                           const struct rt_config *cfg, struct cow_branch **b,
                           const char *lowers[1], struct rt_rootfs_source *src,
                           char **rootfs, struct cm_err **err);

/* One branch of a record. */
struct oci_cow_ref
{
  char *storage;
  char *dest;
};

struct oci_cow_record
{
  enum oci_cow_action on_exit, on_error;
  int exit_code; /* -1: unknown */
  struct oci_cow_ref *v;
  size_t n;
  int dirfd; /* ROOT/cow-branches/ID, flock'ed */
};

/* Loads and locks ROOT/cow-branches/ID; 1 when there is none. */
int oci_cow_record_load (const struct oci_globals *g, const char *id,
                         struct oci_cow_record *r, struct cm_err **err);
/* Writes it back (removing the directory when no branch is left). */
int oci_cow_record_save (const struct oci_globals *g, const char *id,
                         struct oci_cow_record *r, struct cm_err **err);
void oci_cow_record_free (struct oci_cow_record *r);
/* Drops branch |i| from |r|. */
void oci_cow_record_drop (struct oci_cow_record *r, size_t i);

#endif
