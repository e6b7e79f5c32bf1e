/* The caller's ids on a thread that makes one on-behalf socket call for it
 * (vroot-send.c, vroot-net.c).  A unix socket records its sender's ids
 * from the *sending* thread's credentials: SCM_CREDENTIALS its real uid
 * and gid, SO_PEERCRED (at connect) its effective ones.  The handlers'
 * switch (vroot-cred.c) sets only the fs ids, groups and capabilities, so
 * a root runtime's supervisor told a receiver in the view that a uid-1000
 * process's datagram, or connection, was root's.  Such a call runs on a
 * thread of its own, which ends with it: that thread takes the caller's
 * real, effective, saved and fs ids for good (raw, per-thread system
 * calls; glibc's would change every thread).  Its pid stays the
 * supervisor's: naming another pid needs CAP_SYS_ADMIN (documented). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"
#include "vroot-thread.h"

/* Whether this thread may set other ids at all (CAP_SETUID/CAP_SETGID
 * permitted): an ordinary user's supervisor may not, and neither may its
 * container, so its callers' ids are its own. */
static bool
may_set_ids (void)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  return syscall (SYS_capget, &h, d) < 0
         || (d[0].permitted & ((1U << CAP_SETUID) | (1U << CAP_SETGID)));
}

int
vr_ids_of (pid_t tid, struct vr_ids *out)
{
  memset (out, 0, sizeof *out);
  if (!may_set_ids ())
    {
      out->same = true;         /* no /proc read on the mode's main path */
      return 0;
    }
  /* The credentials a root runtime's supervisor keeps per thread
   * (vroot-thread.c): no /proc read once the thread is known. */
  const struct vr_status *st;
  int rc = vr_thread_status (tid, &st);
  if (rc < 0)
    return rc;
  for (int i = 0; i < 4; i++)
    out->u[i] = (unsigned) st->uid[i], out->g[i] = (unsigned) st->gid[i];
  uid_t r, e, s;
  gid_t gr, ge, gs;
  out->same = getresuid (&r, &e, &s) == 0 && getresgid (&gr, &ge, &gs) == 0
              && r == out->u[0] && e == out->u[1] && s == out->u[2]
              && gr == out->g[0] && ge == out->g[1] && gs == out->g[2];
  return 0;
}

int
vr_ids_become (const struct vr_ids *ids)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2], keep[2];
  const uint32_t set = (1U << CAP_SETUID) | (1U << CAP_SETGID);
  if (ids->same)
    return 0;
  if (syscall (SYS_capget, &h, d) < 0)
    return -errno;
  memcpy (keep, d, sizeof d);
  d[0].effective |= d[0].permitted & set;
  if (syscall (SYS_capset, &h, d) < 0
      || syscall (SYS_setresgid, ids->g[0], ids->g[1], ids->g[2]) < 0
      || syscall (SYS_setresuid, ids->u[0], ids->u[1], ids->u[2]) < 0)
    return -errno;
  syscall (SYS_setfsgid, ids->g[3]);
  syscall (SYS_setfsuid, ids->u[3]);
  /* Back to the caller's effective set, as far as what is left permits
   * (a uid that left 0 took them all). */
  if (syscall (SYS_capget, &h, d) < 0)
    return -errno;
  d[0].effective = keep[0].effective & d[0].permitted;
  d[1].effective = keep[1].effective & d[1].permitted;
  if (syscall (SYS_capset, &h, d) < 0)
    return -errno;
  if ((uid_t) syscall (SYS_setfsuid, -1) != ids->u[3]
      || (gid_t) syscall (SYS_setfsgid, -1) != ids->g[3])
    return -EPERM;
  return 0;
}
