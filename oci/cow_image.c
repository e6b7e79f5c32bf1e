/* run --image with a copy-on-write layer: the cached rootfs is the
 * read-only lower of an overlay the init mounts on the bundle's rootfs/
 * (runtime RT_ROOTFS_OVERLAY), and the container's writes land in
 * ROOT/image-bundles/ID/layer/upper, which goes with the container's image
 * bundle.  The layer is a cow branch (docs/cow.md) that is never
 * committed. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "runtime/runtime.h"

int
oci_cow_image_layer (const char *lower, const char *bundle,
                     struct rt_err **err)
{
  _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", bundle);
  _cleanup_free_ char *layer = xasprintf ("%s/layer", bundle);
  struct cow_branch *b = NULL;
  if (mkdir (rootfs, 0755) < 0 && errno != EEXIST)
    return rt_err_set (err, errno, "bundle rootfs `%s`", rootfs);
  if (cow_layer_create (lower, layer, &b, err) < 0)
    return rt_err_wrap (err, "image layer");
  cow_branch_free (b);
  return 0;
}

const char *
oci_cow_image_unusable (void)
{
  const struct rt_kfeat *kf = rt_kfeat (RT_KF_OVERLAY);
  if (!kf->overlay)
    return "this kernel has no overlayfs";
  /* rootless image bundles run in a user namespace of their own */
  if (geteuid () != 0 && kf->overlay_userxattr != 1)
    return "overlayfs here cannot be mounted in a user namespace "
           "(\"userxattr\", Linux >= 5.11)";
  return NULL;
}

int
oci_cow_image_source (const char *bundle, struct cow_branch **b,
                      const char *lowers[1], struct rt_rootfs_source *src,
                      struct rt_err **err)
{
  _cleanup_free_ char *layer = xasprintf ("%s/layer", bundle);
  _cleanup_free_ char *meta = xasprintf ("%s/meta", layer);
  if (access (meta, F_OK) < 0)
    return errno == ENOENT ? 0 : rt_err_set (err, errno, "`%s`", meta);
  if (cow_branch_open (layer, b, err) < 0)
    return -1;
  lowers[0] = (*b)->lower;
  src->kind = RT_ROOTFS_OVERLAY;
  src->lowers = lowers;
  src->lowers_len = 1;
  src->upper = (*b)->upper;
  src->work = (*b)->work;
  return 1;
}
