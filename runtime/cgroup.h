/* cgroups for one container: v2, v1 and hybrid hosts (v1 controllers plus a
 * v2 tree at /sys/fs/cgroup/unified).  No JSON, no CLI. */
#ifndef SANDLOCK_RUNTIME_CGROUP_H
#define SANDLOCK_RUNTIME_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "config.h"
#include "runtime.h"           /* rt_cgroup_devices_describe, rt_cgroup_stats */

struct rt_cgroup;               /* opaque */

struct rt_cgroup_opts
{
  const char *cgroups_path;     /* linux.cgroupsPath; NULL: default from id */
  const char *id;               /* container id */
  bool systemd;                 /* --systemd-cgroup: "slice:prefix:name" */
  const struct rt_resources *resources;  /* may be NULL */
  /* The container could mknod a real device (rt_devices_required): no
   * cgroup, or one where devices cannot be restricted, is then an error. */
  bool devices_required;
};

/* Can the container create device nodes the host honours?  True when the
 * runtime holds CAP_MKNOD and the container, without a user namespace, has
 * it in its bounding set; in a user namespace the kernel refuses mknod of
 * devices (docs/security.md). */
bool rt_devices_required (const struct rt_config *c);

/* Creates the container's cgroup (every hierarchy that applies), applies
 * |resources|, restricts devices (always: deny all, the device rules, the
 * default devices) and moves |pid| in.  Errors name the controller or file.
 * A controller that the resources need but the host lacks is an error
 * naming it.  On failure nothing is left behind.  When |resources| set no
 * limit (devices rules aside), devices_required is false and the host has
 * no cgroups or refuses us (EACCES/EPERM/EROFS: rootless), returns 0 with
 * *out = NULL (runc's rootless rule); every other function needs a
 * non-NULL cgroup.
 * Call it in the parent after clone(), before the child goes on. */
int rt_cgroup_create (const struct rt_cgroup_opts *o, pid_t pid,
                      struct rt_cgroup **out, struct cm_err **err);

/* The path rt_cgroup_create would use for |o|, touching nothing, so that
 * a caller can record it before any directory exists (a runtime killed
 * half-way then leaves a cgroup its `delete` can find).  *path is NULL when
 * the host has no cgroup hierarchy.  Caller frees *path. */
int rt_cgroup_resolve (const struct rt_cgroup_opts *o, char **path,
                       struct cm_err **err);

/* For clone3(CLONE_INTO_CGROUP): rt_cgroup_create with pid 0 before the
 * clone, then this fd (the v2 directory; the unified tree on hybrid) in
 * clone_args.cgroup, then rt_cgroup_attach(skip_v2=true) for the v1
 * hierarchies.  A child born in its cgroup skips the migration, whose
 * first occurrence costs an RCU grace period (~10 ms measured here).
 * Returns an O_DIRECTORY fd the caller closes; ENOENT when there is no v2
 * directory (pure v1: clone, then rt_cgroup_attach). */
int rt_cgroup_clone_fd (struct rt_cgroup *cg, struct cm_err **err);

/* Moves |pid| into the cgroup in every hierarchy (v1 ones only when
 * |skip_v2|). */
int rt_cgroup_attach (struct rt_cgroup *cg, pid_t pid, bool skip_v2,
                      struct cm_err **err);

/* Re-opens the cgroup recorded by rt_cgroup_path() in state.json. */
int rt_cgroup_open (const char *path, struct rt_cgroup **out,
                    struct cm_err **err);

/* The path to record in state.json (borrowed; the hierarchy-relative path). */
const char *rt_cgroup_path (const struct rt_cgroup *cg);

/* Sends |sig| to every process in the cgroup (kill --all). */
int rt_cgroup_kill (struct rt_cgroup *cg, int sig, struct cm_err **err);
/* SIGKILL through the v2 directory's cgroup.kill alone: 1 when done, 0
 * when there is none (no v2 directory, a kernel before 5.14), -1. */
int rt_cgroup_kill_v2 (struct rt_cgroup *cg, struct cm_err **err);

/* Lists the pids in the cgroup; *pids is malloc'd. */
int rt_cgroup_pids (struct rt_cgroup *cg, pid_t **pids, size_t *n,
                    struct cm_err **err);

/* Freezes or thaws, returning once the kernel reports the new state. */
int rt_cgroup_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err);
/* 1 when frozen, 0 when not, < 0 on error. */
int rt_cgroup_is_frozen (struct rt_cgroup *cg, struct cm_err **err);

/* Applies new resource values (update). */
int rt_cgroup_update (struct rt_cgroup *cg, const struct rt_resources *r,
                      struct cm_err **err);

int rt_cgroup_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
                     struct cm_err **err);

/* Waits until no process is left in the cgroup (each one's exit seen via
 * a pidfd, no polling), at most |timeout_ms|; ETIMEDOUT otherwise.  Use it
 * between rt_cgroup_kill and rt_cgroup_destroy: a killed process leaves the
 * cgroup a moment after the signal. */
int rt_cgroup_wait_empty (struct rt_cgroup *cg, int timeout_ms,
                          struct cm_err **err);

/* Removes the cgroup directories (every process must be gone). ENOENT ok. */
int rt_cgroup_destroy (struct rt_cgroup *cg, struct cm_err **err);

void rt_cgroup_free (struct rt_cgroup *cg);

/* "v2", "v1" or "hybrid" — what the host has (for `check`). */
const char *rt_cgroup_layout (void);

#endif
