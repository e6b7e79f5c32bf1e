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
#include "runtime.h"           /* the process-wide settings */

struct rt_confine;              /* opaque, prepared in the parent */
struct rt_ll_policy;
struct rt_sc_prog;

/* Validates linux.seccomp, the run.oci.sandlock.* annotations and the
 * mounts' Landlock view; builds the Landlock rule list (paths as the
 * container sees them) and the seccomp BPF program.  Errors name the JSON
 * path or annotation. */
int rt_confine_prepare (const struct rt_config *c, struct rt_confine **out,
                        struct cm_err **err);

/* rt_confine_prepare() in two stages, for create: the plan validates and
 * builds the Landlock rules (no file, socket or cache touched); open
 * compiles seccomp (reading and writing the compiled-profile cache) and
 * connects to listenerPath; close undoes open and any pin record. */
int rt_confine_plan (const struct rt_config *c, struct rt_confine **out,
                     struct cm_err **err);
int rt_confine_open (struct rt_confine *cf, const struct rt_config *c,
                     struct cm_err **err);
void rt_confine_close (struct rt_confine *cf);

/* In the container process, after pivot_root and every mount, while the
 * process still holds its capabilities (Landlock needs CAP_SYS_ADMIN or
 * no_new_privs): opens each rule's path and restricts itself.  Then calls
 * rt_confine_child_seccomp_early() (below). */
int rt_confine_child_landlock (const struct rt_confine *cf,
                               struct cm_err **err);

/* The same without the early seccomp filter, for RT_PAYLOAD_FN_SEAL,
 * whose payload loads the filter itself (runtime/seal.c). */
int rt_confine_child_landlock_only (const struct rt_confine *cf,
                                    struct cm_err **err);

/* In the container process, the last step before execve: loads the seccomp
 * filter (and sends the notify listener to listenerPath when configured). */
int rt_confine_child_seccomp (const struct rt_confine *cf,
                              struct cm_err **err);

/* Beyond the basic steps: seccomp notify, early seccomp, exec, pins ----- */

/* Parent, optional, before clone(): the container id and bundle for the
 * state sent to linux.seccomp.listenerPath (SCMP_ACT_NOTIFY profiles). */
void rt_confine_set_container (struct rt_confine *cf, const char *id,
                               const char *bundle);

/* The socket connected to listenerPath (-1 when none).  The child must
 * keep it open until rt_confine_child_seccomp*() ran: do not close it when
 * closing inherited fds (it is O_CLOEXEC, so execve drops it). */
int rt_confine_listener_fd (const struct rt_confine *cf);

/* Child: the container's pid as the host sees it, for the listener state
 * (default: getpid(), right only without a pid namespace). */
void rt_confine_child_set_host_pid (struct rt_confine *cf, int pid);

/* Child, right after rt_confine_child_landlock() and before the capability
 * drop: loads the seccomp filter now when it cannot wait until execve (no
 * no_new_privs and CAP_SYS_ADMIN not kept: seccomp(2) would then fail with
 * EACCES after the drop, so the filter goes in while the runtime still
 * holds it, as runc does).  Otherwise a no-op; rt_confine_child_seccomp()
 * is then a no-op when the filter is already loaded. */
int rt_confine_child_seccomp_early (const struct rt_confine *cf,
                                    struct cm_err **err);

/* For tests and `check`: the prepared Landlock policy and BPF program
 * (runtime/landlock.h, runtime/seccomp.h). */
const struct rt_ll_policy *rt_confine_landlock_policy (const struct rt_confine *cf);
const struct rt_sc_prog *rt_confine_seccomp_prog (const struct rt_confine *cf);

/* Parent, for `exec`: the process joins a running container, whose init
 * already applied the fs_denied masks, so they are not mounted again.  A
 * new process cannot join the init's Landlock domain, only get a sibling
 * one with the same rules; the IPC scopes would then cut it off from the
 * container's own processes.  Where a namespace already bounds that reach
 * (|own_pidns| for signals, |own_netns| for abstract unix sockets) and
 * holds only the container's pod (not the host's, joined by path), the
 * scope is dropped for the exec'd process. */
void rt_confine_for_exec (struct rt_confine *cf, bool own_pidns,
                          bool own_netns);

/* Parent, `create`, before clone(): the child will record the inode each
 * Landlock rule went on (docs/security.md "exec and the init's rules"),
 * through an fd it must keep open until rt_confine_child_landlock(). */
int rt_confine_record_pins (struct rt_confine *cf, struct cm_err **err);
/* That fd, -1 when not recording. */
int rt_confine_pins_fd (const struct rt_confine *cf);
/* Parent, `create`, once the child is ready: the record, malloc'd into
 * *out.  Opaque: the caller stores it and gives it back to exec. */
int rt_confine_take_pins (struct rt_confine *cf, char **out, size_t *len,
                          struct cm_err **err);
/* Parent, `exec`: the exec'd process gets only the rules the init got, each
 * only if its path still opens to the very inode the init's rule is on.
 * |rec| NULL: refused unless the container has no filesystem rules. */
int rt_confine_use_pins (struct rt_confine *cf, const char *rec, size_t len,
                         struct cm_err **err);

void rt_confine_free (struct rt_confine *cf);

#endif
