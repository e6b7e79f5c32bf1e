/* Whether overlayfs takes these very layers, asked of the kernel before
 * clone (runtime.h rt_overlay_prepare): a filesystem context is made with
 * the new mount API and created (FSCONFIG_CMD_CREATE runs overlayfs's
 * whole mount-time check of the upper: xattrs, d_type, the upper not
 * itself an overlay, ...).
 *
 * Outside a user namespace (rootful) this runs in the caller, no fork, and
 * is the container's overlay itself: fsmount() makes it a detached mount
 * that the init only attaches (move_mount) in its own mount namespace, so
 * the answer costs no second superblock (dropping one syncs the upper's
 * whole filesystem).  A container in a user namespace mounts its overlay
 * there, with "userxattr": that is tried in a child that makes a user and
 * a mount namespace of its own, maps the caller to root, and reports back
 * over a pipe; the superblock it made goes with it (the only way an
 * unprivileged process learns whether overlayfs mounts in a user
 * namespace here: docs/cow.md). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"
#include "kfeat-internal.h"

#ifndef FSCONFIG_SET_FLAG
#define FSCONFIG_SET_FLAG 0
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 1
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 1
#endif
#ifndef MOUNT_ATTR_NODEV
#define MOUNT_ATTR_NODEV 0x4
#endif

/* The last error the filesystem context logged ("e overlayfs: ..."), or
 * strerror(|en|). */
static void
context_reason (int fd, int en, char *why, size_t len)
{
  char buf[512];
  ssize_t n;
  snprintf (why, len, "%s", strerror (en));
  while ((n = read (fd, buf, sizeof buf - 1)) > 0)
    {
      buf[n] = '\0';
      buf[strcspn (buf, "\n")] = '\0';
      if (buf[0] == 'e' && buf[1] == ' ')
        snprintf (why, len, "%.400s (%.80s)", buf + 2, strerror (en));
    }
}

static int
set_string (int fd, const char *key, const char *val)
{
  return (int) syscall (SYS_fsconfig, fd, FSCONFIG_SET_STRING, key, val, 0);
}

/* 1: the kernel made the overlay (with |mfd|: as a detached mount, its
 * fd there); 0: it refused, |why| says why. */
static char *
lowerdir (const struct rt_rootfs_source *src)
{
  char *lower = xstrdup ("");
  for (size_t i = 0; i < src->lowers_len; i++)
    {
      char *n = xasprintf ("%s%s%s", lower, i ? ":" : "", src->lowers[i]);
      free (lower);
      lower = n;
    }
  return lower;
}

/* No allocation here: it also runs in a forked child. */
static int
try_here (const struct rt_rootfs_source *src, const char *lower,
          bool userxattr, char *why, size_t len, int *mfd)
{
  _cleanup_fd_ int fd = (int) syscall (SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (fd < 0)
    {
      snprintf (why, len, "%s",
                errno == ENODEV ? "this kernel has no overlayfs"
                                : strerror (errno));
      return 0;
    }
  if (set_string (fd, "source", "overlay") < 0 /* as mount(2) names it */
      || set_string (fd, "lowerdir", lower) < 0
      || set_string (fd, "upperdir", src->upper) < 0
      || set_string (fd, "workdir", src->work) < 0
      || (userxattr
          && syscall (SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "userxattr", NULL,
                      0)
                 < 0)
      || syscall (SYS_fsconfig, fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      context_reason (fd, errno, why, len);
      return 0;
    }
  if (mfd == NULL)
    return 1;
  *mfd = (int) syscall (SYS_fsmount, fd, FSMOUNT_CLOEXEC,
                        src->nodev ? MOUNT_ATTR_NODEV : 0);
  if (*mfd < 0)
    {
      context_reason (fd, errno, why, len);
      return 0;
    }
  return 1;
}

static int
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC), r;
  if (fd < 0)
    return -1;
  r = write (fd, text, strlen (text)) == (ssize_t) strlen (text) ? 0 : -1;
  close (fd);
  return r;
}

/* In the child: a user namespace where the caller is root, and a mount
 * namespace it owns. */
static int
enter_userns (uid_t uid, gid_t gid, char *why, size_t len)
{
  char map[64];
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
    {
      snprintf (why, len, "no user namespace: %s", strerror (errno));
      return -1;
    }
  snprintf (map, sizeof map, "0 %u 1", (unsigned) uid);
  if (write_file ("/proc/self/uid_map", map) < 0
      || write_file ("/proc/self/setgroups", "deny") < 0)
    goto fail;
  snprintf (map, sizeof map, "0 %u 1", (unsigned) gid);
  if (write_file ("/proc/self/gid_map", map) < 0)
    goto fail;
  return 0;
fail:
  snprintf (why, len, "user namespace map: %s", strerror (errno));
  return -1;
}

/* The child's answer: one byte (1 can, 0 cannot) and the reason. */
static int
try_in_userns (const struct rt_rootfs_source *src, const char *lower,
               char *why, size_t len)
{
  int p[2];
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return -1;
    }
  if (pid == 0)
    {
      char msg[512] = "";
      char r = enter_userns (uid, gid, msg + 1, sizeof msg - 1) < 0
                   ? 0
                   : (char) try_here (src, lower, true, msg + 1,
                                      sizeof msg - 1, NULL);
      msg[0] = r;
      if (write (p[1], msg, 1 + strlen (msg + 1))) {}
      _exit (0);
    }
  close (p[1]);
  char msg[512];
  ssize_t n = read (p[0], msg, sizeof msg - 1);
  int en = errno, status;
  close (p[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (n < 1)
    {
      errno = n < 0 ? en : EPIPE;
      return -1;
    }
  msg[n] = '\0';
  snprintf (why, len, "%s", msg + 1);
  return msg[0] == 1;
}

int
rt_overlay_prepare (struct rt_rootfs_source *src, bool userns, char **why,
                    struct cm_err **err)
{
  _cleanup_free_ char *lower = lowerdir (src);
  char reason[512] = "";
  int mfd = -1;
  int r = userns ? try_in_userns (src, lower, reason, sizeof reason)
                 : try_here (src, lower, false, reason, sizeof reason, &mfd);
  if (r > 0 && mfd >= 0)
    {
      src->premade = true;
      src->mount_fd = mfd;
    }
  if (r < 0)
    return cm_err_set (err, errno, "rootfs overlay: trying the layers");
  if (r == 0)
    *why = xstrdup (reason);
  return r;
}

/* In a user namespace of the caller's: does overlayfs take "userxattr"?
 * (it parses its options at fsconfig() time since Linux 6.5; an older one
 * takes any flag, and cannot say). */
static char
userxattr_here (void)
{
  _cleanup_fd_ int fd = (int) syscall (SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (fd < 0)
    return 0;
  if (syscall (SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "sandlock-probe", NULL, 0)
      == 0)
    return 2;
  return syscall (SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0)
         == 0;
}

int
rt_kf_overlay_userns (void)
{
  int p[2], status;
  char r = 2, why[128];
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  if (pipe2 (p, O_CLOEXEC) < 0)
    return RT_KF_UNKNOWN;
  pid_t pid = fork ();
  if (pid == 0)
    {
      r = enter_userns (uid, gid, why, sizeof why) < 0 ? 0 : userxattr_here ();
      if (write (p[1], &r, 1)) {}
      _exit (0);
    }
  close (p[1]);
  if (pid < 0 || read (p[0], &r, 1) != 1)
    r = 2;
  close (p[0]);
  while (pid > 0 && waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  return r == 2 ? RT_KF_UNKNOWN : r;
}
