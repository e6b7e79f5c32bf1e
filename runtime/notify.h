/* The notify supervisor (rt_create_opts.notify), as rt_container_create
 * drives it: one create per process, so the state of the one supervisor
 * lives in notify.c and each step is a call of a line or two.  Every
 * function is a no-op returning 0 when the create has no notify ops: a
 * create without them costs no fork and no system call. */
#ifndef SANDLOCK_RUNTIME_NOTIFY_H
#define SANDLOCK_RUNTIME_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "runtime.h"

/* Linux 6.6 (the build's headers may be older). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW (4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* Parent, before clone: checks the ops against the config, makes the
 * socketpair, forks the supervisor and waits for its ops->init (if any). */
int rt_notify_spawn (const struct rt_create_opts *o, struct cm_err **err);

/* Parent, right after clone: gives the supervisor a pidfd of the init and
 * the cgroup path (what it kills if it must), then closes the parent's
 * copy of the init's end of the socketpair. */
int rt_notify_parent (pid_t init, const char *cgroup_path,
                      struct cm_err **err);

/* Parent, last step of a create that succeeded so far: waits until the
 * supervisor's watcher is up (its death kills the container from then
 * on); an error when the supervisor died first. */
int rt_notify_watched (struct cm_err **err);

/* The supervisor's pid and start time (0 without notify ops). */
pid_t rt_notify_pid (uint64_t *start_time);

/* Parent, at the end of the create: on failure the supervisor is killed
 * and reaped; on success it is left to run (it outlives the runtime). */
void rt_notify_end (bool ok);

/* Child: the fd to keep open until rt_notify_child_step (-1: none). */
int rt_notify_child_fd (void);

/* Child step after `start`, right before the config's seccomp filter:
 * installs the trap filter and hands its listener to the supervisor. */
struct rt_child;
int rt_notify_child_step (struct rt_child *ch, struct cm_err **err);

/* notify-filter.c: the trap filter for |ops| (validated), malloc'd. */
struct sock_filter;
int rt_notify_filter (const struct rt_notify_ops *ops,
                      struct sock_filter **out, size_t *len,
                      struct cm_err **err);

/* notify-supervisor.c: the supervisor process's body.  |sock| is its end
 * of the socketpair; |init_ok| was already reported. */
struct rt_notify_sup
{
  const struct rt_notify_ops *ops;
  int sock;                     /* its end of the socketpair */
  int log_fd;
};
void rt_notify_supervise (struct rt_notify_sup *s)
    __attribute__ ((noreturn));

#endif
