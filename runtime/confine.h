/* Landlock + seccomp confinement of a container (docs/security.md).
 *
 * Two halves, per the style guide's "compile in the parent, load raw in the
 * child": rt_confine_prepare() runs in the runtime before clone() and does
 * every validation and every libseccomp call; the rt_confine_child_*()
 * functions run in the container process and only make raw syscalls. */
#ifndef SANDLOCK_RUNTIME_CONFINE_H
#define SANDLOCK_RUNTIME_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "config.h"

struct rt_confine;              /* opaque, prepared in the parent */

/* Validates linux.seccomp, the run.oci.sandlock.* annotations and the
 * mounts' Landlock view; builds the Landlock rule list (paths as the
 * container sees them) and the seccomp BPF program.  Errors name the JSON
 * path or annotation. */
int rt_confine_prepare (const struct rt_config *c, struct rt_confine **out,
                        struct rt_err **err);

/* In the container process, after pivot_root and every mount, while the
 * process still holds its capabilities (Landlock needs CAP_SYS_ADMIN or
 * no_new_privs): opens each rule's path and restricts itself. */
int rt_confine_child_landlock (const struct rt_confine *cf,
                               struct rt_err **err);

/* In the container process, the last step before execve: loads the seccomp
 * filter (and sends the notify listener to listenerPath when configured). */
int rt_confine_child_seccomp (const struct rt_confine *cf,
                              struct rt_err **err);

void rt_confine_free (struct rt_confine *cf);

/* Human-readable status of each protection on this kernel (for `check`),
 * one "name: status" line each, into a malloc'd string. */
char *rt_confine_describe_host (void);

#endif
