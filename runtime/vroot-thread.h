/* The container's threads as the root supervisor knows them between their
 * calls (runtime/vroot-thread.c): each one's credentials, read once from
 * /proc/<tid>/status and kept until one of its own calls may change them.
 *
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_THREAD_H
#define SANDLOCK_RUNTIME_VROOT_THREAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime.h"

#define VR_NGROUPS 256          /* more supplementary groups: refused */

/* What the permission checks of a thread read, and its umask, as
 * /proc/<tid>/status shows them. */
struct vr_status
{
  pid_t tgid;
  long umask;                    /* -1: not shown */
  unsigned long uid[4], gid[4];  /* real, effective, saved, fs */
  uint64_t eff, prm;             /* CapEff, CapPrm */
  int ngroups;
  gid_t groups[VR_NGROUPS];
};

/* Thread |tid|'s credentials into |*out| (valid until the next call):
 * 0, -ESRCH when it is gone, -EPERM with more than VR_NGROUPS groups. */
int vr_thread_status (pid_t tid, const struct vr_status **out);

/* The thread group of |tid| if it is kept (a thread's never changes),
 * else -1. */
pid_t vr_thread_tgid (pid_t tid);

/* The system calls by which a thread changes its own credentials, and
 * umask (-1 ends the list): trapped, each answered by vr_thread_changes. */
extern const int vr_cred_syscalls[];
bool vr_cred_syscall (int nr);

/* Refused by the trap filter itself (rt_notify_ops.deny): a new user
 * namespace (clone and unshare with CLONE_NEWUSER, clone3 whose flags BPF
 * cannot read, setns).  A thread in a user namespace of its own shows the
 * capabilities it holds *there* in /proc/<tid>/status; the supervisor,
 * which acts in the caller's credentials in its own namespace, would lend
 * them host-wide (a uid-1000 process reading a root 0600 file). */
extern const struct rt_notify_deny vr_denied_calls[];
extern const size_t vr_denied_calls_len;

/* Thread |tid| is in system call |nr| of vr_cred_syscalls: its next call
 * reads its credentials again (umask: every thread's, any of which may
 * share its fs_struct, CLONE_FS). */
void vr_thread_changes (pid_t tid, int nr);

/* The umask of |tid| as kept with its credentials, or -1 (not kept: read
 * it). */
long vr_thread_umask (pid_t tid);

/* Thread |tid| of |tgid| is in an exec (which recomputes credentials and,
 * from a thread other than the leader, takes the leader's tid). */
void vr_thread_exec (pid_t tid, pid_t tgid);

#endif
