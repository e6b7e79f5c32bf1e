/* Propagation around the rootfs bind and pivot_root (runc's prepareRoot and
 * rootfsParentMountPrivate).  With linux.rootfsPropagation [r]shared the
 * container's mount namespace keeps the host's peer groups, so the mount
 * that holds the rootfs is shared: binding the rootfs onto itself would
 * propagate that bind to the host, and pivot_root refuses a new root whose
 * parent mount is shared (EINVAL).  That one mount — not the tree — is made
 * private in the container's namespace first. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "common/util.h"
#include "internal.h"

static int
mnt_id_of (const char *path, uint64_t *id)
{
  struct statx st;
  if (statx (AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) < 0)
    return -1;
  if (!(st.stx_mask & STATX_MNT_ID))
    {
      errno = ENOSYS;
      return -1;
    }
  *id = st.stx_mnt_id;
  return 0;
}

int
rt_rootfs_parent_private (const char *rootfs, struct cm_err **err)
{
  _cleanup_free_ char *mp = xstrdup (rootfs);
  uint64_t id, up;

  if (mnt_id_of (mp, &id) < 0)
    return cm_err_set (err, errno, "rootfs `%s`: mount id", rootfs);
  /* Walk up while the parent directory is on the same mount: the last
   * directory on it is its mount point (rootfs is a realpath). */
  for (;;)
    {
      char *slash = strrchr (mp, '/');
      if (slash == NULL || slash == mp)
        {
          if (strcmp (mp, "/") != 0
              && (mnt_id_of ("/", &up) < 0 || up == id))
            {
              free (mp);
              mp = xstrdup ("/");
            }
          break;
        }
      *slash = '\0';
      if (mnt_id_of (mp, &up) < 0)
        return cm_err_set (err, errno, "mount id of `%s`", mp);
      if (up != id)
        {
          *slash = '/';
          break;
        }
    }
  if (mount (NULL, mp, NULL, MS_PRIVATE, NULL) < 0)
    return cm_err_set (err, errno, "make `%s` (holding the rootfs) private",
                       mp);
  return 0;
}
