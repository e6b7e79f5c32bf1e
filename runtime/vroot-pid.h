/* Calls that name a process by pid, checked against the container's
 * processes where config.json lists a pid namespace (runtime/vroot-pid.c;
 * the filter's entries are vr_deny_ne_list, runtime/vroot-run.h).
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_PID_H
#define SANDLOCK_RUNTIME_VROOT_PID_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/types.h>

/* |nr| is one the filter traps when it names another process. */
bool vr_pid_call (int nr);

/* The answer to such a call of thread |tid| (of |tgid|) in the container
 * whose init is |init|: 0 (let the kernel do it) when it names the caller,
 * no process, or a process of the container; -ESRCH otherwise. */
int vr_pid_check (pid_t init, pid_t tid, pid_t tgid,
                  const struct seccomp_data *d);

#endif
