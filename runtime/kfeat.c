/* What this kernel offers: one probe per fact, run the first time a group
 * of facts is asked for and kept for the life of the process (the style
 * guide's "probe once, degrade per feature, and report it").  `check` and
 * `features` print from it; code that branches on the kernel asks it.
 *
 * Every probe is a call the kernel rejects before it changes anything
 * (bad arguments it checks after the feature is known, a NULL pointer it
 * would have to read), a file read, or a process that exits at once. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/openat2.h"
#include "common/util.h"
#include "kfeat-internal.h"
#include "runtime.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif

static struct rt_kfeat kf;

/* ---- parsing (unit-tested: tests/unit/test_kfeat.c) --------------------- */

bool
rt_kf_has_filesystem (const char *proc_filesystems, const char *name)
{
  size_t n = strlen (name);
  for (const char *l = proc_filesystems; l && *l;
       l = strchr (l, '\n'), l = l ? l + 1 : l)
    {
      const char *tab = strchr (l, '\t'), *eol = strchrnul (l, '\n');
      if (tab && tab < eol && (size_t) (eol - tab - 1) == n
          && strncmp (tab + 1, name, n) == 0)
        return true;
    }
  return false;
}

bool
rt_kf_userns_allowed (const char *max_user_namespaces)
{
  const char *p = max_user_namespaces;
  if (p == NULL)
    return false;
  while (*p == ' ')
    p++;
  return *p >= '1' && *p <= '9';
}

char *
rt_kf_v1_controllers (const struct cg_host *h)
{
  char *r = xstrdup ("");
  for (size_t i = 0; i < h->v1_len; i++)
    {
      _cleanup_free_ char *c = xstrdup (h->v1[i].ctrls);
      char *save = NULL;
      for (char *t = strtok_r (c, ",", &save); t;
           t = strtok_r (NULL, ",", &save))
        {
          char *n;
          if (cm_startswith (t, "name="))
            continue;
          n = xasprintf ("%s%s%s", r, *r ? " " : "", t);
          free (r);
          r = n;
        }
    }
  return r;
}

/* ---- probes -------------------------------------------------------------- */

static int
read_small (const char *path, char **out)
{
  struct cm_err *e = NULL;
  int r = cm_read_file_at (AT_FDCWD, path, 1 << 16, out, NULL, &e);
  cm_err_free (&e);
  return r;
}

static void
probe_landlock (void)
{
  long r = syscall (__NR_landlock_create_ruleset, NULL, 0,
                    1U /* LANDLOCK_CREATE_RULESET_VERSION */);
  kf.landlock_abi = r < 0 ? 0 : (int) r;
}

/* The kernel checks the flags before it reads the (NULL) program: EFAULT
 * means the flags are accepted, EINVAL that they are not.  No filter is
 * installed either way. */
static bool
seccomp_flag_ok (unsigned flag)
{
  if (flag & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;   /* only valid together */
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL) < 0
         && errno == EFAULT;
}

static void
probe_seccomp (void)
{
  uint32_t action = SECCOMP_RET_KILL_PROCESS;
  struct seccomp_notif_sizes sz;
  unsigned flag = 0;

  kf.seccomp_filter = syscall (SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0,
                               &action) == 0;
  kf.seccomp_notify = syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz)
                      == 0;
  for (size_t i = 0; kf.seccomp_filter && rt_feature_seccomp_flag (i, &flag);
       i++)
    if (seccomp_flag_ok (flag))
      kf.seccomp_flags |= flag;
}

/* Present unless the call fails with ENOSYS. */
static bool
implemented (long r)
{
  return r >= 0 || errno != ENOSYS;
}

/* clone_args grew `cgroup` (the last 8 of its 88 bytes) with
 * CLONE_INTO_CGROUP: an older clone3 refuses the non-zero tail with E2BIG;
 * a newer one takes it and refuses the invalid exit signal with EINVAL.
 * No process is created either way. */
static void
probe_clone3 (void)
{
  struct clone_args ca = { .exit_signal = 0xff, .cgroup = 1 };
  long r;
  kf.clone3 = implemented (syscall (SYS_clone3, NULL, 0));
  if (!kf.clone3)
    return;
  r = syscall (SYS_clone3, &ca, sizeof ca);
  kf.clone_into_cgroup = r < 0 && errno == EINVAL;
}

/* MOUNT_ATTR_IDMAP is checked before its user namespace fd (INT_MAX: not
 * open), and both before the (empty) path is looked up: EBADF means
 * idmapped mounts exist.  EPERM: only a mount-capable process can ask. */
static void
probe_mount_api (void)
{
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = INT_MAX };
  long r;
  kf.fsopen = implemented (syscall (SYS_fsopen, NULL, 0));
  r = syscall (SYS_mount_setattr, -1, "", AT_EMPTY_PATH, &a, sizeof a);
  kf.mount_setattr = implemented (r);
  if (!kf.mount_setattr)
    kf.idmapped_mounts = 0;
  else if (errno == EPERM)
    kf.idmapped_mounts = RT_KF_UNKNOWN;
  else
    kf.idmapped_mounts = errno == EBADF;
}

static void
probe_syscalls (void)
{
  int fd;
  kf.openat2 = cm_openat2_supported ();   /* the probe cm_openat2 uses */
  fd = (int) syscall (SYS_pidfd_open, getpid (), 0);
  kf.pidfd = fd >= 0;
  if (fd >= 0)
    close (fd);
  /* An empty range above every fd: closes nothing. */
  kf.close_range = syscall (SYS_close_range, ~0U, ~0U, 0) == 0;
  probe_clone3 ();
  probe_mount_api ();
}

/* A child in a new user namespace that exits at once: what the sysctl
 * allows and what this user may do (AppArmor, a chroot, a seccomp
 * profile) in one answer. */
static bool
userns_clone_ok (void)
{
  int st;
  pid_t pid = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL,
                               NULL, 0);
  if (pid == 0)
    _exit (0);
  if (pid < 0)
    return false;
  while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
    ;
  return true;
}

static void
probe_namespaces (void)
{
  _cleanup_free_ char *max = NULL;
  kf.userns = read_small ("/proc/sys/user/max_user_namespaces", &max) == 0
              && rt_kf_userns_allowed (max) && userns_clone_ok ();
  kf.timens = access ("/proc/self/ns/time", F_OK) == 0;
}

static void
probe_cgroup (void)
{
  struct cm_err *e = NULL;
  const struct cg_host *h = cg_host_get (&e);
  _cleanup_free_ char *v2 = NULL;

  cm_err_free (&e);
  kf.cgroup_layout = h ? cg_layout_name (h->layout) : "none";
  kf.cgroup_v1_controllers = h ? rt_kf_v1_controllers (h) : xstrdup ("");
  if (h && h->v2_mount && cg_read (h->v2_mount, "cgroup.controllers", &v2,
                                   &e) == 0 && v2)
    v2[strcspn (v2, "\n")] = '\0';
  cm_err_free (&e);
  kf.cgroup_v2_controllers = v2 ? cm_steal_ptr (&v2) : xstrdup ("");
}

/* overlayfs parses its options at fsconfig() time since it moved to the
 * new mount API (Linux 6.5, well after userxattr came in 5.11): a known
 * flag is taken, an unknown one refused.  An older overlay takes any flag
 * and cannot say.  A process without the right to mount here asks in a
 * user namespace of its own (a forked child: the one probe that is not a
 * rejected call; only unprivileged callers pay it, once). */
static void
probe_overlay (void)
{
  _cleanup_free_ char *fs = NULL;
  _cleanup_fd_ int fd = -1;

  /* fsopen loads the module when it can: a listed overlay is one that
   * a mount would find. */
  fd = (int) syscall (SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  int en = fd < 0 ? errno : 0;
  kf.overlay_userxattr = fd < 0 && en != ENODEV ? RT_KF_UNKNOWN : 0;
  kf.overlay = read_small ("/proc/filesystems", &fs) == 0
               && rt_kf_has_filesystem (fs, "overlay");
  if (fd < 0 && kf.overlay && en == EPERM)
    kf.overlay_userxattr = rt_kf_overlay_userns ();
  if (fd < 0)
    return;
  if (syscall (SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "sandlock-probe", NULL, 0)
      == 0)
    return;
  kf.overlay_userxattr = syscall (SYS_fsconfig, fd, FSCONFIG_SET_FLAG,
                                  "userxattr", NULL, 0) == 0;
}

static void
probe_bpf_device (void)
{
  kf.bpf_device = cg_dev_bpf_probe ();
}

/* In the order of the RT_KF_* bits. */
static void (*const probes[]) (void) = {
  probe_landlock, probe_seccomp, probe_syscalls,    probe_namespaces,
  probe_cgroup,   probe_overlay, probe_bpf_device,
};
_Static_assert (1u << ARRAY_SIZE (probes) == RT_KF_ALL + 1,
                "kfeat: one probe per RT_KF_* bit");

const struct rt_kfeat *
rt_kfeat (unsigned what)
{
  int saved = errno;
  for (size_t i = 0; i < ARRAY_SIZE (probes); i++)
    {
      unsigned bit = 1u << i;
      if (!(what & bit) || (kf.probed & bit))
        continue;
      probes[i] ();
      kf.probed |= bit;
    }
  errno = saved;
  return &kf;
}

/* For `check`: how device access is restricted on this host. */
char *
rt_cgroup_devices_describe (void)
{
  static const char closed[] = "a container that keeps CAP_MKNOD without a "
                               "user namespace is refused";
  struct cm_err *e = NULL;
  const struct cg_host *h = cg_host_get (&e);
  int en;

  cm_err_free (&e);
  if (h && cg_v1_index (h, "devices") >= 0)
    return xstrdup ("cgroup v1 devices controller (deny all, default "
                    "devices, linux.resources.devices)");
  if (h == NULL || h->v2_mount == NULL)
    return xasprintf ("not restricted: no devices cgroup; %s", closed);
  en = rt_kfeat (RT_KF_BPF_DEVICE)->bpf_device;
  if (en == 0)
    return xstrdup ("cgroup v2 BPF device program (deny all, default "
                    "devices, linux.resources.devices)");
  return xasprintf ("not restricted: bpf(2) refuses the device program "
                    "(%s); %s", strerror (en), closed);
}
