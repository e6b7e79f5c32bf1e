/* RT_ROOTFS_OVERLAY: the container's / is an overlayfs of read-only lower
 * directories and a writable upper, mounted by the init on the rootfs path
 * inside its own mount namespace (so the host never sees it, and it goes
 * away with the namespace).  In a user namespace of its own the kernel
 * mounts overlayfs only from 5.11 on, and only with "userxattr" (its
 * whiteouts and opaque markers then live in user.overlay.* xattrs, which
 * an unprivileged owner can write). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#include "internal.h"

/* overlayfs splits its options at ',' and lowerdir at ':'; a path holding
 * either (or a '\\' escape) could name layers the caller never gave. */
static int
check_layer (const char *path, const char *what, struct cm_err **err)
{
  if (path == NULL || path[0] != '/')
    return cm_err_set (err, EINVAL, "rootfs overlay %s: an absolute path is "
                       "required, got \"%s\"", what, path ? path : "");
  if (strpbrk (path, ",:\\"))
    return cm_err_set (err, EINVAL, "rootfs overlay %s `%s`: ',' ':' and "
                       "'\\' are not allowed in a layer path", what, path);
  return 0;
}

/* Before clone: the shape of the source; the layers themselves are looked
 * at by the child, where the mount names the one that failed. */
int
rt_plan_overlay (const struct rt_plan *p, struct cm_err **err)
{
  const struct rt_rootfs_source *src = &p->o->rootfs_source;
  char what[64];
  if (src->kind != RT_ROOTFS_OVERLAY)
    return 0;
  if (p->host_mount_ns)
    return cm_err_set (err, 0, "rootfs overlay: needs a \"mount\" namespace "
                       "(without one it would change the host's mount "
                       "table)");
  if (src->lowers_len == 0 || src->lowers == NULL)
    return cm_err_set (err, EINVAL, "rootfs overlay: at least one lower "
                       "directory is required");
  for (size_t i = 0; i < src->lowers_len; i++)
    {
      snprintf (what, sizeof what, "lowers[%zu]", i);
      if (check_layer (src->lowers[i], what, err) < 0)
        return -1;
    }
  if (check_layer (src->upper, "upper", err) < 0
      || check_layer (src->work, "work", err) < 0)
    return -1;
  return 0;
}

/* Before clone, from the kernel probe (runtime/kfeat.c): an overlay the
 * kernel cannot mount fails here with the reason, not in the child with a
 * bare EINVAL.  A fact the probe could not establish is left to the
 * mount. */
int
rt_prepare_overlay (const struct rt_plan *p, struct cm_err **err)
{
  const struct rt_kfeat *kf;
  if (p->o->rootfs_source.kind != RT_ROOTFS_OVERLAY)
    return 0;
  kf = rt_kfeat (RT_KF_OVERLAY);
  if (!kf->overlay)
    return cm_err_set (err, ENODEV, "rootfs overlay: this kernel has no "
                       "overlayfs");
  if ((p->new_user || p->joins_user) && rt_overlay_in_userns (p->c)
      && kf->overlay_userxattr == 0)
    return cm_err_set (err, EINVAL, "rootfs overlay in a user namespace: "
                       "overlayfs here lacks \"userxattr\" (Linux >= 5.11)");
  return 0;
}

static int
layer_is_dir (const char *path, const char *what, struct cm_err **err)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return cm_err_set (err, errno, "rootfs overlay %s `%s`", what, path);
  if (!S_ISDIR (st.st_mode))
    return cm_err_set (err, ENOTDIR, "rootfs overlay %s `%s`", what, path);
  return 0;
}

static char *
overlay_options (const struct rt_rootfs_source *src, bool userns,
                 struct cm_err **err)
{
  _cleanup_free_ char *lower = xstrdup ("");
  char what[64];
  for (size_t i = 0; i < src->lowers_len; i++)
    {
      char *n = xasprintf ("%s%s%s", lower, i ? ":" : "", src->lowers[i]);
      free (lower);
      lower = n;
      snprintf (what, sizeof what, "lowers[%zu]", i);
      if (layer_is_dir (src->lowers[i], what, err) < 0)
        return NULL;
    }
  if (layer_is_dir (src->upper, "upper", err) < 0
      || layer_is_dir (src->work, "work", err) < 0)
    return NULL;
  return xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s%s", lower,
                    src->upper, src->work, userns ? ",userxattr" : "");
}

/* The overlay rt_overlay_prepare made: attached here, in the init's own
 * mount namespace (the fd, close-on-exec, goes at once all the same). */
static int
attach_premade (const struct rt_rootfs_source *src, const char *rootfs,
                struct cm_err **err)
{
  int r = (int) syscall (SYS_move_mount, src->mount_fd, "", AT_FDCWD, rootfs,
                         MOVE_MOUNT_F_EMPTY_PATH);
  int e = errno;
  close (src->mount_fd);
  if (r < 0)
    return cm_err_set (err, e, "rootfs overlay: attach on `%s` (upper `%s`)",
                       rootfs, src->upper);
  return 0;
}

int
rt_rootfs_overlay (const struct rt_rootfs_source *src, const char *rootfs,
                   bool userns, struct cm_err **err)
{
  if (src->premade)
    return attach_premade (src, rootfs, err);
  _cleanup_free_ char *opts = overlay_options (src, userns, err);
  if (opts == NULL)
    return -1;
  if (mount ("overlay", rootfs, "overlay", src->nodev ? MS_NODEV : 0, opts)
      < 0)
    {
      int e = errno;
      if (userns && e == EINVAL)
        return cm_err_set (err, e, "rootfs overlay on `%s` (upper `%s`): "
                           "mount in a user namespace needs Linux >= 5.11 "
                           "and layers that support user xattrs", rootfs,
                           src->upper);
      return cm_err_set (err, e, "rootfs overlay on `%s` (upper `%s`, work "
                         "`%s`)", rootfs, src->upper, src->work);
    }
  return 0;
}
