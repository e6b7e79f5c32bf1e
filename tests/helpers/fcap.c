/* fcap: file capabilities from inside a test container (busybox has no
 * setcap).  Static; copied into test root filesystems by
 * tests/lib/common.bash.
 *
 *   fcap set <path>   security.capability = v2, cap_setuid permitted and
 *                     effective (the kernel turns it into a v3 with the
 *                     namespace's root for a writer in a user namespace);
 *                     prints OK or the errno's name
 *   fcap get <path>   prints "v2", "v3 rootid=N" or "none"
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

static int
set (const char *path)
{
  struct vfs_cap_data d = { 0 };
  d.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  d.data[0].permitted = 1u << CAP_SETUID;
  if (setxattr (path, "security.capability", &d, XATTR_CAPS_SZ_2, 0) < 0)
    printf ("%s\n", strerrorname_np (errno));
  else
    printf ("OK\n");
  return 0;
}

static int
get (const char *path)
{
  struct vfs_ns_cap_data d = { 0 };
  ssize_t n = getxattr (path, "security.capability", &d, sizeof d);
  if (n < 0)
    printf ("%s\n", errno == ENODATA ? "none" : strerrorname_np (errno));
  else if ((d.magic_etc & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_3)
    printf ("v3 rootid=%u\n", d.rootid);
  else
    printf ("v2\n");
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "set") == 0)
    return set (argv[2]);
  if (argc == 3 && strcmp (argv[1], "get") == 0)
    return get (argv[2]);
  fprintf (stderr, "usage: fcap set|get PATH\n");
  return 2;
}
