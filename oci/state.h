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

/* delete -f of an id whose directory exists without state.json (a create
 * that died before writing it): takes the lock, so a create in progress is
 * waited for, and removes the directory only if state.json is still
 * missing.  0 when there was nothing to do. */
int oci_state_remove_orphan (const struct oci_globals *g, const char *id,
                             struct rt_err **err);

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
