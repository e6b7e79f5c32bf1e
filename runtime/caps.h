/* Capabilities and the user switch (style guide §6.7).  Interface fixed by
 * the lead because runtime/container.c calls it; the implementation lives in
 * runtime/caps.c.
 *
 * Prepared in the parent: capability names validated with libcap
 * (cap_from_name); an unknown name fails naming the JSON path, e.g.
 * `process.capabilities.bounding[3]: unknown capability "CAP_FOO"`.
 * Applied in the child, in one fixed order: drop the bounding set ->
 * PR_SET_KEEPCAPS (+ SECBIT_NOROOT where needed: setting securebits needs
 * CAP_SETPCAP, which capset may drop, so it comes first) ->
 * setgroups/setresgid -> setresuid -> capset (v3) -> ambient ->
 * PR_SET_NO_NEW_PRIVS.  docs/security.md, "Capabilities". */
#ifndef SANDLOCK_RUNTIME_CAPS_H
#define SANDLOCK_RUNTIME_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "config.h"

struct rt_caps_plan;            /* opaque (runtime/caps.c) */

/* For tests: the prepared sets as capability bit masks. */
void rt_caps_plan_masks (const struct rt_caps_plan *cp, uint64_t *bounding,
                         uint64_t *effective, uint64_t *permitted,
                         uint64_t *inheritable, uint64_t *ambient,
                         bool *noroot);

/* |pr| is borrowed; process.capabilities NULL means every set is empty. */
int rt_caps_prepare (const struct rt_process *pr, struct rt_caps_plan **out,
                     struct cm_err **err);

/* Child side, raw syscalls only: groups, gid, uid, capabilities, NNP. */
int rt_caps_child_apply (const struct rt_caps_plan *cp, const struct rt_user *u,
                         bool no_new_privs, struct cm_err **err);

/* A plan from its masks (rt_caps_plan_masks'), e.g. from the
 * namespace-less exec's request; checked by rt_caps_fit, not here. */
struct rt_caps_plan *rt_caps_plan_new (uint64_t bounding, uint64_t effective,
                                       uint64_t permitted,
                                       uint64_t inheritable, uint64_t ambient,
                                       bool noroot);

/* Whether this process's own credentials can apply |p| for a process of
 * uid |uid| (the namespace-less exec's handler, a process of the
 * container: its capabilities and bounding set are the container's).
 * What they cannot is refused naming the field, before anything runs; a
 * SECBIT_NOROOT already locked here is kept (|p| is adjusted to it). */
int rt_caps_fit (struct rt_caps_plan *p, uint32_t uid, struct cm_err **err);

/* The same for process.user: another uid or gid needs CAP_SETUID or
 * CAP_SETGID, other groups CAP_SETGID.  |keep| (the init does not switch
 * user: an ordinary caller's container): no groups asked is no change. */
int rt_caps_fit_user (const struct rt_user *u, bool keep,
                      struct cm_err **err);

/* True when this process has |cap| in its effective set. */
bool rt_caps_effective_has (int cap);

/* Accepts NULL. */
void rt_caps_free (struct rt_caps_plan *cp);

#endif
