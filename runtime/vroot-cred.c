/* The caller's credentials for on-behalf calls (docs/nsless.md "Whose
 * rights").  The supervisor acts on files for the container; the kernel
 * checks what it does against the *supervisor's* fsuid, fsgid, groups and
 * capabilities.  A supervisor of a root runtime keeps CAP_DAC_OVERRIDE (to
 * kill the container through its cgroup) and is uid 0: a container
 * process that dropped to another uid, or root without CAP_DAC_OVERRIDE
 * (the default set), would create, write, chmod and set times where the
 * kernel refuses it.  So every handler runs in the calling thread's fs
 * credentials: fsuid, fsgid, groups and effective capabilities, read
 * from /proc/<tid>/status and set on the supervisor's thread with the raw
 * per-thread system calls (setfsuid, setfsgid, setgroups, capset; glibc's
 * setgroups would set every thread).  The few actions that are the
 * supervisor's own — reading and writing the caller's memory, taking its
 * fds (ptrace-class checks: CAP_SYS_PTRACE), its exec directory — step
 * out to the supervisor's credentials for that action (vr_cred_out).
 *
 * A supervisor with no permitted capability (an ordinary user's, the mode's
 * purpose) skips all of it: its container runs with the same ids and no
 * capability either, and cannot change them (setuid, setgroups and
 * setfsuid to another id need CAP_SETUID/CAP_SETGID), so the credentials
 * are already the caller's.  Only one thread switches (the main loop);
 * the state is per thread. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define VR_NGROUPS 256          /* more supplementary groups: refused */

struct cred
{
  uid_t uid;
  gid_t gid;
  gid_t groups[VR_NGROUPS];
  int ngroups;
  uint32_t eff[2];
};

static struct
{
  bool done, priv;
  struct cred self;
  uint32_t prm[2], inh[2];
} me;

static __thread struct cred caller;
static __thread bool in;        /* the thread has the caller's credentials */

static int
cap_get (uint32_t eff[2], uint32_t prm[2], uint32_t inh[2])
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  if (syscall (SYS_capget, &h, d) < 0)
    return -errno;
  for (int i = 0; i < 2; i++)
    eff[i] = d[i].effective, prm[i] = d[i].permitted, inh[i] = d[i].inheritable;
  return 0;
}

static int
cap_eff (const uint32_t eff[2])
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  for (int i = 0; i < 2; i++)
    d[i] = (struct __user_cap_data_struct) { eff[i] & me.prm[i], me.prm[i],
                                             me.inh[i] };
  return syscall (SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* The supervisor's own, once. */
static void
load_self (void)
{
  if (me.done)
    return;
  me.done = true;
  me.self.uid = (uid_t) syscall (SYS_setfsuid, -1);
  me.self.gid = (gid_t) syscall (SYS_setfsgid, -1);
  me.self.ngroups = getgroups (VR_NGROUPS, me.self.groups);
  if (me.self.ngroups < 0
      || cap_get (me.self.eff, me.prm, me.inh) < 0)
    return;                     /* priv stays false: nothing to switch with */
  me.priv = (me.prm[0] | me.prm[1]) != 0;
}

static const char *
field (const char *buf, const char *key)
{
  const char *p = strstr (buf, key);
  return p ? p + strlen (key) : NULL;
}

/* fs ids ("Uid:\tr\te\ts\tfs": the fourth), groups and CapEff of |tid|;
 * |real|: the real ids and, as the kernel's access(2) does, the permitted
 * set for real uid 0 and none otherwise. */
static int
load_caller (pid_t tid, bool real, struct cred *c)
{
  char path[64], buf[4096];
  unsigned long u[4], g[4];
  unsigned long long eff, prm;
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  const char *pu, *pg, *pgr, *pe, *pp;
  if (n <= 0)
    return -ESRCH;
  buf[n] = '\0';
  if (!(pu = field (buf, "\nUid:")) || !(pg = field (buf, "\nGid:"))
      || !(pgr = field (buf, "\nGroups:")) || !(pe = field (buf, "\nCapEff:"))
      || !(pp = field (buf, "\nCapPrm:"))
      || sscanf (pu, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) != 4
      || sscanf (pg, "%lu %lu %lu %lu", &g[0], &g[1], &g[2], &g[3]) != 4
      || sscanf (pe, "%llx", &eff) != 1 || sscanf (pp, "%llx", &prm) != 1)
    return -ESRCH;
  c->uid = (uid_t) (real ? u[0] : u[3]);
  c->gid = (gid_t) (real ? g[0] : g[3]);
  if (real)
    eff = u[0] == 0 ? prm : 0;
  c->eff[0] = (uint32_t) eff, c->eff[1] = (uint32_t) (eff >> 32);
  c->ngroups = 0;
  for (char *e; *pgr != '\n' && *pgr; pgr = e)
    {
      unsigned long x = strtoul (pgr, &e, 10);
      if (e == pgr)
        break;
      if (c->ngroups == VR_NGROUPS)
        return -EPERM;
      c->groups[c->ngroups++] = (gid_t) x;
    }
  return 0;
}

static bool
same_groups (const struct cred *a, const struct cred *b)
{
  return a->ngroups == b->ngroups
         && memcmp (a->groups, b->groups, (size_t) a->ngroups * sizeof (gid_t)) == 0;
}

/* The ids of |to| on this thread; capabilities: CAP_SETUID/CAP_SETGID
 * raised for the switch (permitted: notify-supervisor.c keeps them for
 * this supervisor), then |to|'s effective set. */
static int
apply (const struct cred *to)
{
  uint32_t setid[2] = { me.prm[0] & ((1u << CAP_SETUID) | (1u << CAP_SETGID)),
                        0 };
  int r;
  setid[0] |= me.self.eff[0], setid[1] = me.self.eff[1];
  if ((r = cap_eff (setid)) < 0)
    return r;
  if (!same_groups (&caller, &me.self))
    if (syscall (SYS_setgroups, (size_t) to->ngroups, to->groups) < 0)
      return -errno;
  syscall (SYS_setfsgid, to->gid);
  syscall (SYS_setfsuid, to->uid);
  if ((gid_t) syscall (SYS_setfsgid, -1) != to->gid
      || (uid_t) syscall (SYS_setfsuid, -1) != to->uid)
    return -EPERM;
  return cap_eff (to->eff);
}

int
vr_cred_enter (pid_t tid, bool real)
{
  int r;
  load_self ();
  if (!me.priv)
    return 0;
  if ((r = load_caller (tid, real, &caller)) < 0)
    return r;
  if ((r = apply (&caller)) < 0)
    {
      if (apply (&me.self) < 0)
        _exit (70);             /* half switched: fail closed */
      return r;
    }
  in = true;
  return 1;
}

/* Back to the supervisor's own.  Neither direction fails once the first
 * switch of the call worked (the same ids, the same permitted set); if it
 * did, going on would act with the wrong rights: the supervisor exits,
 * and its death kills the container. */
void
vr_cred_leave (void)
{
  if (in && apply (&me.self) < 0)
    _exit (70);
  in = false;
}

bool
vr_cred_out (void)
{
  bool was = in;
  vr_cred_leave ();
  return was;
}

void
vr_cred_back (bool was)
{
  if (!was)
    return;
  if (apply (&caller) < 0)
    _exit (70);
  in = true;
}
