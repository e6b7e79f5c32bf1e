/* Per-container state, persistence and reconciliation only: <root>/<id>/
 * holds state.json, config.json (the config as created, for poststop hooks
 * and exec), start.json (what `start` needs, oci_start_record_save),
 * exec.fifo until `start`.  Every operation holds flock() on the container
 * directory; every write of state.json is atomic (temp + rename).  The
 * lifecycle (create, start, delete) is oci/lifecycle.h's. */
#ifndef SANDLOCK_OCI_STATE_H
#define SANDLOCK_OCI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "command.h"
#include "runtime/runtime.h"
#include "spec.h"

/* The runtime-spec statuses, plus "unknown" for `list` of an unreadable
 * state; OCI_STATUS_NONE (0) is none yet. */
enum oci_status
{
  OCI_STATUS_NONE,
  OCI_CREATING,
  OCI_CREATED,
  OCI_RUNNING,
  OCI_PAUSED,
  OCI_STOPPED,
  OCI_STATUS_UNKNOWN,
};

/* The name state.json and `state` use; "" for OCI_STATUS_NONE. */
const char *oci_status_name (enum oci_status s);
/* The status named |s|, or OCI_STATUS_NONE. */
enum oci_status oci_status_from_name (const char *s);

struct oci_state
{
  char *oci_version;
  char *id;
  enum oci_status status;
  pid_t pid;
  uint64_t start_time;          /* /proc/PID/stat starttime */
  char *bundle;
  char *rootfs;
  char *created;                /* RFC 3339 */
  char *owner;
  char *cgroup_path;            /* NULL: no cgroup */
  bool systemd_cgroup;
  /* The notify supervisor (namespace-less mode), 0: none.  `delete` makes
   * sure it is gone with the container. */
  pid_t supervisor_pid;
  uint64_t supervisor_start_time;
  /* The engine's stdio as the init got it, for `checkpoint`
   * (oci/stdio_record.h); NULL: none recorded. */
  char *stdio;
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
                      struct oci_state *st, struct cm_err **err);

/* Opens and locks <root>/<id>, loads state.json and reconciles the status
 * with the process.  "container ID does not exist" when it is not there. */
int oci_state_load (const struct oci_globals *g, const char *id,
                    struct oci_state *st, struct cm_err **err);

/* state.json holds config.json's annotations: it may be as large as the
 * config create accepted, plus a few paths. */
#define OCI_STATE_MAX_BYTES (OCI_SPEC_MAX_BYTES + (1u << 20))

/* Parses state.json (|len| bytes, no NUL needed) into |st|, whose id names
 * the container in errors.  On failure some fields may be set:
 * oci_state_free() frees them. */
int oci_state_parse (struct oci_state *st, const char *buf, size_t len,
                     struct cm_err **err);

/* state.json (|internal|: with start_time, cgroup_path, systemd) or the
 * runtime-spec state `state` prints; malloc'd. */
char *oci_state_gen (const struct oci_state *st, bool pretty, bool internal);

/* Writes state.json atomically. */
int oci_state_save (const struct oci_state *st, struct cm_err **err);

/* Re-derives status from the process (start time check, fifo, freezer). */
void oci_state_refresh (struct oci_state *st);

/* The runtime-spec state JSON (pretty when |pretty|), malloc'd. */
char *oci_state_json (const struct oci_state *st, bool pretty);

/* Loads the config saved at create time. */
int oci_state_config (const struct oci_state *st, struct rt_config **out,
                      struct cm_err **err);

/* Records in the state directory that the container owns the bundle at
 * |path| (st->image_bundle; oci_bundle_adopt), before that bundle is moved
 * there, so even a create killed before state.json existed leaves the
 * record. */
int oci_state_own_bundle (struct oci_state *st, const char *path,
                          struct cm_err **err);

/* Removes <root>/<id> entirely (the bundle it may own is the caller's:
 * oci_bundle_drop). */
int oci_state_remove (const struct oci_globals *g, struct oci_state *st,
                      struct cm_err **err);

void oci_state_free (struct oci_state *st);

/* For `delete -f`: oci_state_load, but a container whose state.json is
 * missing, corrupt or too large loads too (status "stopped", the pid only
 * when its start time is known, the cgroup from config.json when
 * state.json does not name it), with a warning, so that whatever create
 * made can be removed.  1 when there is no such container. */
int oci_state_load_any (const struct oci_globals *g, const char *id,
                        struct oci_state *st, struct cm_err **err);

/* Opens the handle of a loaded container (runtime.h).  With |cmd|, a
 * container created without a cgroup (rootless) fails with "CMD: container
 * ID has no cgroup (WHY)". */
int oci_state_handle (const struct oci_state *st, const char *cmd,
                      const char *why, struct rt_handle **h,
                      struct cm_err **err);

/* RFC 3339 timestamp with nanoseconds, malloc'd. */
char *oci_now_rfc3339 (void);

#endif
