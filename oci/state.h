/* Per-container state: <root>/<id>/ holds state.json, config.json (the
 * config as created, for later hooks), exec.fifo until `start`.  Every
 * operation holds flock() on the container directory; every write of
 * state.json is atomic (temp + rename). */
#ifndef SANDLOCK_OCI_STATE_H
#define SANDLOCK_OCI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "command.h"
#include "runtime/config.h"
#include "spec.h"

struct oci_state
{
  char *oci_version;
  char *id;
  char *status;                 /* creating|created|running|paused|stopped */
  pid_t pid;
  uint64_t start_time;          /* /proc/PID/stat starttime */
  char *bundle;
  char *rootfs;
  char *created;                /* RFC 3339 */
  char *owner;
  char *cgroup_path;            /* NULL: no cgroup */
  bool systemd_cgroup;
  struct rt_kv *annotations;
  size_t annotations_len;
  int dirfd;                    /* locked container directory, or -1 */
  /* ROOT/image-bundles/ID was built for this container by `run --image`
   * and goes with it.  Recorded as the file "image-bundle" in the state
   * directory, written before the bundle is moved into place, so that even
   * a create killed before state.json existed leaves the record. */
  bool image_bundle;
};

/* Under the state root: the bundles `run --image` builds, one per container
 * id.  The name is reserved: oci_id_valid() refuses it. */
#define OCI_IMAGE_BUNDLES "image-bundles"

/* Under the state root: the branches of `cow` mounts, one directory per
 * container id, kept after `delete` until decided (oci/cow_branch.h). */
#define OCI_COW_BRANCHES "cow-branches"

/* Container ids: letters, digits, '_', '+', '-', '.'; 1..1024 chars; not
 * "." or "..".  (runc's rule.)  Nor OCI_IMAGE_BUNDLES, which is ours. */
bool oci_id_valid (const char *id);

/* Creates <root>/<id> (refusing an existing id) and locks it. */
int oci_state_create (const struct oci_globals *g, const char *id,
                      struct oci_state *st, struct rt_err **err);

/* Opens and locks <root>/<id>, loads state.json and reconciles the status
 * with the process.  "container ID does not exist" when it is not there. */
int oci_state_load (const struct oci_globals *g, const char *id,
                    struct oci_state *st, struct rt_err **err);

/* state.json holds config.json's annotations: it may be as large as the
 * config create accepted, plus a few paths. */
#define OCI_STATE_MAX_BYTES (OCI_SPEC_MAX_BYTES + (1u << 20))

/* Parses state.json (|len| bytes, no NUL needed) into |st|, whose id names
 * the container in errors.  On failure some fields may be set:
 * oci_state_free() frees them. */
int oci_state_parse (struct oci_state *st, const char *buf, size_t len,
                     struct rt_err **err);

/* state.json (|internal|: with start_time, cgroup_path, systemd) or the
 * runtime-spec state `state` prints; malloc'd. */
char *oci_state_gen (const struct oci_state *st, bool pretty, bool internal);

/* Writes state.json atomically. */
int oci_state_save (const struct oci_state *st, struct rt_err **err);

/* Re-derives status from the process (start time check, fifo, freezer). */
void oci_state_refresh (struct oci_state *st);

/* The runtime-spec state JSON (pretty when |pretty|), malloc'd. */
char *oci_state_json (const struct oci_state *st, bool pretty);

/* Loads the config saved at create time. */
int oci_state_config (const struct oci_state *st, struct rt_config **out,
                      struct rt_err **err);

/* Makes the bundle built at |tmp| (a directory under
 * ROOT/image-bundles) the image bundle of the freshly created, locked |st|:
 * records the ownership, replaces whatever a killed run left at
 * ROOT/image-bundles/ID (no container has that id: we hold it) and renames
 * |tmp| there.  *bundle gets that path (caller frees).  On failure |tmp| is
 * left to the caller. */
int oci_state_adopt_image_bundle (const struct oci_globals *g,
                                  struct oci_state *st, const char *tmp,
                                  char **bundle, struct rt_err **err);

/* Removes <root>/<id> entirely, and first the container's image bundle
 * when it owns one (never following a symlink; a failure there is a
 * warning: the container is still deleted). */
int oci_state_remove (const struct oci_globals *g, struct oci_state *st,
                      struct rt_err **err);

void oci_state_free (struct oci_state *st);

/* For `delete -f`: oci_state_load, but a container whose state.json is
 * missing, corrupt or too large loads too (status "stopped", the pid only
 * when its start time is known, the cgroup from config.json when
 * state.json does not name it), with a warning, so that whatever create
 * made can be removed.  1 when there is no such container. */
int oci_state_load_any (const struct oci_globals *g, const char *id,
                        struct oci_state *st, struct rt_err **err);

/* Kills, waits for and cleans up a container: cgroup, poststop hooks, state
 * directory.  Used by delete and by run when the container exits. */
int oci_container_destroy (const struct oci_globals *g, struct oci_state *st,
                           struct rt_err **err);

/* Opens the cgroup of a loaded container; fails with "CMD: container ID
 * has no cgroup (WHY)" when it was created without one (rootless). */
struct rt_cgroup;
int oci_state_cgroup (const struct oci_state *st, const char *cmd,
                      const char *why, struct rt_cgroup **cg,
                      struct rt_err **err);

/* RFC 3339 timestamp with nanoseconds, malloc'd. */
char *oci_now_rfc3339 (void);

#endif
