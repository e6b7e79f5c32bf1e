/* check: what this kernel offers and what sandlock-oci will use, from the
 * runtime's one probe of it (rt_kfeat). */
#include <stdio.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "command.h"
#include "runtime/runtime.h"

static const char *
yesno (bool b)
{
  return b ? "yes" : "no";
}

static const char *
tristate (int v)
{
  return v == RT_KF_UNKNOWN ? "unknown (needs CAP_SYS_ADMIN)" : yesno (v);
}

static void
print_cgroup (const struct rt_kfeat *k)
{
  _cleanup_free_ char *dev = rt_cgroup_devices_describe ();
  printf ("cgroup layout: %s\n", k->cgroup_layout);
  printf ("device access: %s; mknod of char/block nodes: refused by "
          "Landlock unless a linux.resources.devices rule allows \"m\"\n",
          dev);
}

/* After the lines tests and users already read, in their order. */
static void
print_more (const struct rt_kfeat *k)
{
  unsigned flag = 0;
  printf ("cgroup controllers: v1: %s; v2: %s\n",
          *k->cgroup_v1_controllers ? k->cgroup_v1_controllers : "none",
          *k->cgroup_v2_controllers ? k->cgroup_v2_controllers : "none");
  printf ("overlay userxattr: %s\n", tristate (k->overlay_userxattr));
  printf ("seccomp filter flags:");
  for (size_t i = 0; rt_feature_seccomp_flag (i, &flag); i++)
    if ((k->seccomp_flags & flag) == flag)
      printf (" %s", rt_feature_seccomp_flag (i, &flag));
  printf ("\n");
  printf ("seccomp notify sync wakeup: %s\n", yesno (k->seccomp_notify_sync));
  printf ("clone3: %s (into its cgroup: %s)\n", yesno (k->clone3),
          yesno (k->clone_into_cgroup));
  printf ("mount API: fsopen %s, mount_setattr %s, idmapped mounts %s\n",
          yesno (k->fsopen), yesno (k->mount_setattr),
          tristate (k->idmapped_mounts));
  printf ("close_range: %s\n", yesno (k->close_range));
  const char *why = oci_cow_image_unusable ();
  printf ("run --image rootfs: %s%s\n", why ? "copy of the cached rootfs: "
          : "overlay over the cached rootfs (docs/cow.md)", why ? why : "");
}

/* Which --isolation modes this user has here (docs/nsless.md). */
static void
print_isolation (const struct rt_kfeat *k)
{
  bool ns = geteuid () == 0 || k->userns;
  bool ll = k->landlock_abi >= 1 && k->seccomp_notify && k->openat2
            && k->pidfd;
  printf ("isolation namespaces: %s\n", ns ? "yes" : geteuid () == 0 ? "no"
          : "no (this user cannot make a user namespace)");
  printf ("isolation landlock (no namespaces): %s\n", ll ? "yes"
          : "no (needs Landlock, seccomp user notification, openat2, "
            "pidfd)");
  printf ("isolation auto: %s\n", ns ? "namespaces" : ll ? "landlock"
          : "none: create will fail");
}

static int
cmd_check (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  const struct rt_kfeat *k = rt_kfeat (RT_KF_ALL);
  _cleanup_free_ char *conf = rt_confine_describe_host ();

  printf ("sandlock-oci %s\n", SANDLOCK_VERSION);
  printf ("%s", conf);
  printf ("seccomp user notification: %s\n", yesno (k->seccomp_notify));
  printf ("user namespaces: %s\n", yesno (k->userns));
  printf ("time namespace: %s\n", yesno (k->timens));
  print_cgroup (k);
  printf ("overlay: %s\n", yesno (k->overlay));
  printf ("pidfd: %s (used for kill and state)\n", yesno (k->pidfd));
  printf ("openat2: %s (mount destinations resolved in root: %s)\n",
          yesno (k->openat2),
          k->openat2 ? "yes" : "by a component-by-component walk");
  print_more (k);
  print_isolation (k);
  return 0;
}
OCI_COMMAND (check_command, "check",
             "print what the kernel offers and what will be used",
             "usage: sandlock-oci check\n", cmd_check)
