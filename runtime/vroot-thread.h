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

#define VR_NGROUPS 256          /* more supplementary groups: refused */

/* What the permission checks of a thread read, as /proc/<tid>/status
 * shows it. */
struct vr_status
{
  pid_t tgid;
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

/* The system calls by which a thread changes its own credentials
 * (-1 ends the list): trapped, each answered by vr_thread_changes. */
extern const int vr_cred_syscalls[];
bool vr_cred_syscall (int nr);

/* Thread |tid| is in one of vr_cred_syscalls: its next call reads its
 * credentials again. */
void vr_thread_changes (pid_t tid);

/* Thread |tid| of |tgid| is in an exec (which recomputes credentials and,
 * from a thread other than the leader, takes the leader's tid). */
void vr_thread_exec (pid_t tid, pid_t tgid);

#endif
