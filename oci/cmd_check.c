/* check: what this kernel offers and what sandlock-oci will use. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "command.h"
#include "runtime/cgroup.h"
#include "runtime/confine.h"

static const char *
yesno (bool b)
{
  return b ? "yes" : "no";
}

static bool
has_fs (const char *name)
{
  _cleanup_free_ char *buf = NULL;
  struct rt_err *e = NULL;
  bool r;
  if (rt_read_file_at (AT_FDCWD, "/proc/filesystems", 1 << 16, &buf, NULL, &e)
      < 0)
    {
      rt_err_free (&e);
      return false;
    }
  r = strstr (buf, name) != NULL;
  return r;
}

static int
cmd_check (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  struct seccomp_notif_sizes sz;
  int fd;
  bool openat2_ok, pidfd_ok, notify_ok, userns_ok;
  _cleanup_free_ char *conf = NULL, *max_userns = NULL;
  struct rt_err *e = NULL;

  openat2_ok = cm_openat2_supported ();
  fd = (int) syscall (SYS_pidfd_open, getpid (), 0);
  pidfd_ok = fd >= 0;
  if (fd >= 0)
    close (fd);
  notify_ok = syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) == 0;
  userns_ok = rt_read_file_at (AT_FDCWD, "/proc/sys/user/max_user_namespaces",
                               64, &max_userns, NULL, &e) == 0
              && strcmp (max_userns, "0\n") != 0;
  rt_err_free (&e);
  conf = rt_confine_describe_host ();
  printf ("sandlock-oci %s\n", SANDLOCK_VERSION);
  printf ("%s", conf);
  printf ("seccomp user notification: %s\n", yesno (notify_ok));
  printf ("user namespaces: %s\n", yesno (userns_ok));
  printf ("time namespace: %s\n",
          yesno (access ("/proc/self/ns/time", F_OK) == 0));
  printf ("cgroup layout: %s\n", rt_cgroup_layout ());
  {
    _cleanup_free_ char *dev = rt_cgroup_devices_describe ();
    printf ("device access: %s; mknod of char/block nodes: refused by "
            "Landlock unless a linux.resources.devices rule allows \"m\"\n",
            dev);
  }
  printf ("overlay: %s\n", yesno (has_fs ("\toverlay\n")));
  printf ("pidfd: %s (used for kill and state)\n", yesno (pidfd_ok));
  printf ("openat2: %s (mount destinations resolved in root: %s)\n",
          yesno (openat2_ok),
          openat2_ok ? "yes" : "by a component-by-component walk");
  return 0;
}
OCI_COMMAND (check_command, "check",
             "print what the kernel offers and what will be used",
             "usage: sandlock-oci check\n", cmd_check)
