/* The container's root as an overlay: annotation
 * run.oci.sandlock.cow.rootfs_lower names a read-only lower (run --image
 * and `bundle --cow` name the cached image rootfs), root.path is only the
 * mount point, and each container gets its own upper in a layer under its
 * state directory, ROOT/ID/layer, gone with the container.  The init
 * mounts the overlay in its own mount namespace (runtime
 * RT_ROOTFS_OVERLAY).  The layer is a cow branch (docs/cow.md) that is
 * never committed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "runtime/runtime.h"

int
oci_cow_rootfs_mountpoint (const char *rootfs, struct cm_err **err)
{
  if (mkdir (rootfs, 0755) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "bundle rootfs `%s`", rootfs);
  return 0;
}

const char *
oci_cow_image_unusable (void)
{
  const struct rt_kfeat *kf = rt_kfeat (RT_KF_OVERLAY);
  if (!kf->overlay)
    return "this kernel has no overlayfs";
  /* rootless image bundles run in a user namespace of their own */
  if (geteuid () != 0 && kf->overlay_userxattr == RT_KF_UNKNOWN)
    return "whether overlayfs mounts in a user namespace here is more than "
           "an unprivileged probe can tell";
  if (geteuid () != 0 && kf->overlay_userxattr != 1)
    return "overlayfs here cannot be mounted in a user namespace "
           "(\"userxattr\", Linux >= 5.11)";
  return NULL;
}

void
oci_cow_layer_release (int dirfd)
{
  if (dirfd < 0)
    return;
  fchmodat (dirfd, "layer/work/work", 0700, AT_SYMLINK_NOFOLLOW);
  fchmodat (dirfd, "layer/work", 0700, AT_SYMLINK_NOFOLLOW);
  /* max_disk: the layer's upper is on a tmpfs that must go first */
  cow_quota_release_at (dirfd, "layer");
}

const char *
oci_cow_rootfs_lower (const struct rt_config *cfg)
{
  for (size_t i = 0; i < cfg->annotations_len; i++)
    if (strcmp (cfg->annotations[i].key, OCI_COW_ANN "rootfs_lower") == 0)
      return cfg->annotations[i].value;
  return NULL;
}

int
oci_cow_rootfs_source (const struct oci_globals *g, const char *id,
                       const struct rt_config *cfg, struct cow_branch **b,
                       const char *lowers[1], struct rt_rootfs_source *src,
                       struct cm_err **err)
{
  const char *lower = oci_cow_rootfs_lower (cfg);
  struct cow_create_opts o = { .nosync = true };
  char root[PATH_MAX];
  if (lower == NULL)
    return 0;
  if (oci_cow_max_disk (cfg, &o.max_disk, err) < 0)
    return -1;
  if (realpath (g->root, root) == NULL)
    return cm_err_set (err, errno, "--root `%s`", g->root);
  _cleanup_free_ char *layer = xasprintf ("%s/%s/layer", root, id);
  if (cow_branch_create_opts (lower, layer, &o, b, err) < 0)
    return oci_cow_quota_wrap (err, o.max_disk,
                               "annotation " OCI_COW_ANN "rootfs_lower");
  lowers[0] = (*b)->lower;
  src->kind = RT_ROOTFS_OVERLAY;
  src->lowers = lowers;
  src->lowers_len = 1;
  src->upper = (*b)->upper;
  src->work = (*b)->work;
  /* The lower is the shared cache, whose tree may hold the device nodes a
   * `--allow-devices` pull created: only a copy (--allow-devices, 0600)
   * may hand them to a container. */
  src->nodev = true;
  return 1;
}
