/* Copies a cached rootfs into a bundle: reflink (FICLONE) when the file
 * system can, copy_file_range otherwise; modes, owners (root), xattrs,
 * times, symlinks, FIFOs and hardlinks within the tree kept.  Char and
 * block device nodes only on request (--allow-devices, root), owned by
 * root and at most 0600: the bundle is a directory the user chose. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"
#include "image/priv.h"

/* Copying over an existing tree would fail half-way (EEXIST) or mix two
 * trees: the destination must be empty before anything is copied. */
static bool
dir_has_entries (int dfd)
{
  int fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;
  bool any = false;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  while (!any && (de = readdir (d)))
    any = strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0;
  closedir (d);
  return any;
}

int
img_copy_rootfs (const struct img_image *im, const char *dir, bool allow_devices,
                 struct cm_err **err)
{
  bool root = geteuid () == 0;
  unsigned flags = CM_COPY_TOP_META;
  _cleanup_fd_ int src = open (im->rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int dst = -1;
  if (root)
    flags |= CM_COPY_OWNERS | CM_COPY_ALL_XATTRS;
  if (root && allow_devices)
    flags |= CM_COPY_DEVICES | CM_COPY_DEVICES_0600;
  if (src < 0)
    return cm_err_set (err, errno, "cached rootfs `%s`", im->rootfs);
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "bundle rootfs `%s`", dir);
  dst = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst < 0)
    return cm_err_set (err, errno, "bundle rootfs `%s`", dir);
  if (dir_has_entries (dst))
    return cm_err_set (err, ENOTEMPTY, "bundle rootfs `%s` is not empty: refusing to copy "
                       "the image over it", dir);
  return cm_copy_tree (src, dst, flags, "copy rootfs", "", err);
}
