/* The caller's credentials for on-behalf calls (docs/nsless.md "Whose
 * rights").  The supervisor acts on files for the container; the kernel
 * checks what it does against the *supervisor's* fsuid, fsgid, groups and
 * capabilities.  A supervisor of a root runtime keeps CAP_DAC_OVERRIDE (to
 * kill the container through its cgroup) and is uid 0: a container
 * process that dropped to another uid, or root without CAP_DAC_OVERRIDE
 * (the default set), would create, write, chmod and set times where the
 * kernel refuses it.  So every handler runs in the calling thread's fs
 * credentials: fsuid, fsgid, groups and effective capabilities, read
 * from /proc/<tid>/status (once per thread until it may change them:
 * vroot-thread.c) and set on the supervisor's thread with the raw
 * per-thread system calls (setfsuid, setfsgid, setgroups, capset; glibc's
 * setgroups would set every thread).  The few actions that are the
 * supervisor's own — reading and writing the caller's memory, taking its
 * fds (ptrace-class checks: CAP_SYS_PTRACE), its exec directory — step
 * out to the supervisor's credentials for that action (vr_cred_out; for
 * process_vm_readv/writev only CAP_SYS_PTRACE is raised: vr_cred_mem_out).
 *
 * A supervisor with no permitted capability (an ordinary user's, the mode's
 * purpose) skips all of it: its container runs with the same ids and no
 * capability either, and cannot change them (setuid, setgroups and
 * setfsuid to another id need CAP_SETUID/CAP_SETGID), so the credentials
 * are already the caller's.  Only one thread switches (the main loop);
 * the state is per thread. */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"
#include "vroot-thread.h"

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
  uid_t ru[3];                  /* real, effective, saved */
  gid_t rg[3];
  uint32_t prm[2], inh[2];
} me;

static __thread struct cred caller;
static __thread bool in;        /* the thread has the caller's credentials */
static __thread uint64_t tag;   /* vr_cred_tag's answer */
/* What the thread has now; |known| false after a switch that failed
 * half-way (the next one then sets everything). */
static __thread struct cred cur;
static __thread bool known;

/* The distinct credentials seen last, each with a number never given to
 * other credentials (a reused slot gets a new one): equal tags are equal
 * credentials, exactly, with no hash to collide. */
#define VR_NTAGS 8
static __thread struct
{
  struct cred c[VR_NTAGS];
  uint64_t id[VR_NTAGS];        /* 0: free */
  uint64_t last;
  unsigned next;
} tags;

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
      || getresuid (&me.ru[0], &me.ru[1], &me.ru[2]) < 0
      || getresgid (&me.rg[0], &me.rg[1], &me.rg[2]) < 0
      || cap_get (me.self.eff, me.prm, me.inh) < 0)
    return;                     /* priv stays false: nothing to switch with */
  me.priv = (me.prm[0] | me.prm[1]) != 0;
  cur = me.self, known = true;
}

/* fs ids ("Uid:\tr\te\ts\tfs": the fourth), groups and CapEff of |tid|
 * (vroot-thread.c: read once, kept until the thread may change them);
 * |real|: the real ids and, as the kernel's access(2) does, the permitted
 * set for real uid 0 and none otherwise. */
static int
load_caller (pid_t tid, bool real, struct cred *c)
{
  const struct vr_status *s;
  int r = vr_thread_status (tid, &s);
  uint64_t eff;
  if (r < 0)
    return r;
  c->uid = (uid_t) (real ? s->uid[0] : s->uid[3]);
  c->gid = (gid_t) (real ? s->gid[0] : s->gid[3]);
  eff = real ? (s->uid[0] == 0 ? s->prm : 0) : s->eff;
  c->eff[0] = (uint32_t) eff, c->eff[1] = (uint32_t) (eff >> 32);
  c->ngroups = s->ngroups;
  memcpy (c->groups, s->groups, (size_t) s->ngroups * sizeof (gid_t));
  return 0;
}

static bool
same_groups (const struct cred *a, const struct cred *b)
{
  return a->ngroups == b->ngroups
         && memcmp (a->groups, b->groups, (size_t) a->ngroups * sizeof (gid_t)) == 0;
}

/* Everything apply() sets: what the kernel's permission checks read. */
static bool
same_cred (const struct cred *a, const struct cred *b)
{
  return a->uid == b->uid && a->gid == b->gid && same_groups (a, b)
         && a->eff[0] == b->eff[0] && a->eff[1] == b->eff[1];
}

static uint64_t
tag_of (const struct cred *c)
{
  unsigned i;
  for (i = 0; i < VR_NTAGS; i++)
    if (tags.id[i] != 0 && same_cred (&tags.c[i], c))
      return tags.id[i];
  i = tags.next++ % VR_NTAGS;
  tags.c[i] = *c;
  return tags.id[i] = ++tags.last;
}

/* The ids of |to| on this thread; capabilities: CAP_SETUID/CAP_SETGID
 * raised for the switch where it needs them (permitted: notify-supervisor.c keeps them for
 * this supervisor), then |to|'s effective set. */
static int
apply (const struct cred *to)
{
  uint32_t setid[2] = { me.prm[0] & ((1u << CAP_SETUID) | (1u << CAP_SETGID)),
                        0 };
  int r;
  /* The thread has them already: nothing to do (a loop of one process
   * switches once, not twice a call). */
  if (known && same_cred (to, &cur))
    return 0;
  /* The kernel lets a thread set its fsuid/fsgid to its real, effective
   * or saved id without a capability (the way back to the supervisor's
   * own, and a root caller's): one credential commit less then. */
  bool own = (to->uid == me.ru[0] || to->uid == me.ru[1] || to->uid == me.ru[2])
             && (to->gid == me.rg[0] || to->gid == me.rg[1]
                 || to->gid == me.rg[2]);
  bool groups = !known || !same_groups (to, &cur);
  known = false;
  setid[0] |= me.self.eff[0], setid[1] = me.self.eff[1];
  if ((!own || groups) && (r = cap_eff (setid)) < 0)
    return r;
  if (groups && syscall (SYS_setgroups, (size_t) to->ngroups, to->groups) < 0)
    return -errno;
  syscall (SYS_setfsgid, to->gid);
  syscall (SYS_setfsuid, to->uid);
  if ((gid_t) syscall (SYS_setfsgid, -1) != to->gid
      || (uid_t) syscall (SYS_setfsuid, -1) != to->uid)
    return -EPERM;
  if ((r = cap_eff (to->eff)) < 0)
    return r;
  cur = *to, known = true;
  return 0;
}

int
vr_cred_enter (pid_t tid, bool real)
{
  int r;
  load_self ();
  tag = 0;
  if (!me.priv)
    return 0;
  if ((r = load_caller (tid, real, &caller)) < 0)
    return r;
  /* The supervisor's own: tag 0, as its own (no system call when the
   * thread has them already). */
  if (same_cred (&caller, &me.self))
    {
      vr_cred_leave ();
      return 1;
    }
  tag = tag_of (&caller);
  if ((r = apply (&caller)) < 0)
    {
      if (apply (&me.self) < 0)
        _exit (70);             /* half switched: fail closed */
      in = false;
      return r;
    }
  in = true;
  return 1;
}

/* Back to the supervisor's own.  A call does not end with it: the thread
 * keeps its last caller's credentials until the next call needs others,
 * or the supervisor acts on its own (rt_notify_ops.idle: its kill, its
 * exit).  Neither direction fails once the first switch of the call worked (the same ids, the same permitted set); if it
 * did, going on would act with the wrong rights: the supervisor exits,
 * and its death kills the container. */
void
vr_cred_leave (void)
{
  if (in && apply (&me.self) < 0)
    _exit (70);
  in = false;
  tag = 0;
}

uint64_t
vr_cred_tag (void)
{
  return tag;
}

/* The call's tag stays: the thread steps back into the same credentials. */
bool
vr_cred_out (void)
{
  bool was = in;
  uint64_t t = tag;
  vr_cred_leave ();
  tag = t;
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

/* process_vm_readv/writev check ptrace access with the *real* ids
 * (PTRACE_MODE_ATTACH_REALCREDS), which the switch never changes, and
 * CAP_SYS_PTRACE: only that capability is raised, one capset each way
 * instead of a whole switch out and back. */
bool
vr_cred_mem_out (void)
{
  uint32_t eff[2] = { caller.eff[0], caller.eff[1] };
  if (!in)
    return false;
  eff[CAP_TO_INDEX (CAP_SYS_PTRACE)] |= CAP_TO_MASK (CAP_SYS_PTRACE);
  if (cap_eff (eff) < 0)
    _exit (70);
  return true;
}

void
vr_cred_mem_back (bool was)
{
  if (was && cap_eff (caller.eff) < 0)
    _exit (70);
}
