/* RT_ROOTFS_VIRTUAL in the create sequence (runtime/vroot-run.c):
 * the plan's refusals, the prepare stage, the init's own steps.
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_RUN_H
#define SANDLOCK_RUNTIME_VROOT_RUN_H

#include <stdbool.h>

#include "common/err.h"
#include "runtime.h"

struct rt_plan;
struct rt_child;
struct rt_cgroup;

bool rt_vroot_mode (const struct rt_plan *p);

/* Plan: what needs a privilege the mode lacks is refused, naming the
 * field; nothing is created (no namespace, no mount). */
int rt_vroot_plan (struct rt_plan *p, struct cm_err **err);

/* Part of it: a capability the container would hold over a namespace
 * config.json lists but the mode does not create (runtime/vroot-caps.c). */
int vr_caps_check (const struct rt_config *c, struct cm_err **err);

/* The trap filter's entries by argument (rt_notify_ops.deny_ne): with
 * a pid namespace listed, the calls that would act on a host process by
 * its pid, trapped or refused (runtime/vroot-pid.c).  Static storage. */
const struct rt_notify_deny_ne *vr_deny_ne_list (const struct rt_config *c,
                                                 size_t *len);

/* Prepare, before the supervisor and the init are forked: the view, the
 * Landlock policy on its host objects, args[0] found in the view, and
 * |o|->notify set to the supervisor's operations (|o| is the create's
 * copy of the caller's options). */
int rt_vroot_prepare (struct rt_plan *p, struct rt_create_opts *o,
                      struct cm_err **err);

/* Runs |fn| (which forks the supervisor and clones the init) on a
 * thread in the supervisor's own Landlock domain (runtime/vroot-domain.c);
 * |cg|: the container's cgroup, or NULL. */
int rt_vroot_spawn (int (*fn) (void *, struct cm_err **), void *ud,
                    struct rt_cgroup *cg, struct cm_err **err);

/* The runtime's side is done (success or not). */
void rt_vroot_end (void);

/* The init's steps. */
int rt_vroot_child_process (struct rt_child *ch, struct cm_err **err);
int rt_vroot_payload_prepare (struct rt_child *ch, struct cm_err **err);
int rt_vroot_child_confine (struct rt_child *ch, struct cm_err **err);

/* The exec server's listening socket, kept open in the init until
 * rt_vroot_exec_server (-1: none); and the init's step that forks the
 * server (runtime/vroot-xs.h), after its seccomp filter. */
int rt_vroot_exec_fd (void);
/* process.terminal: the runtime's pty master (|master|) or slave, kept
 * open in the init until its process step (-1: none). */
int rt_vroot_pty_fd (bool master);
int rt_vroot_exec_server (struct rt_child *ch, struct cm_err **err);

#endif
