/* The container's root as an overlay: annotation
 * run.oci.sandlock.cow.rootfs_lower names a read-only lower (run --image
 * and `bundle --cow` name the cached image rootfs), root.path is only the
 * mount point, and each container gets its own upper in a layer under its
 * state directory, ROOT/ID/layer, gone with the container.  The init
 * mounts the overlay in its own mount namespace (runtime
 * RT_ROOTFS_OVERLAY).  The layer is a cow branch (docs/cow.md) that is
 * never committed.  A lower in the image cache is pinned there
 * (ROOT/ID/image-pin) so that rmi and prune leave it alone. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"
#include "cow_branch.h"
#include "image/image.h"
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
  img_unpin_at (dirfd, OCI_COW_IMAGE_PIN);
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

/* Whether the init mounts the overlay inside the container's user
 * namespace.  A root runtime makes it from the host even for a container
 * with a user namespace: that namespace's root could not reach the 0700
 * layer (docs/cow.md "User namespaces"). */
static bool
in_user_namespace (const struct rt_config *cfg)
{
  if (geteuid () != 0)
    return true; /* rootless: a user namespace of its own */
  return rt_overlay_in_userns (cfg);
}

/* The host id that container id 0 maps to in |m|, or 0 (unmapped). */
static uint32_t
host_root (const struct rt_idmap *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].container_id == 0 && m[i].size > 0)
      return m[i].host_id;
  return 0;
}

/* ROOT/ID/rootfs, 0700, holds the copy: the state directory is 0711, and
 * the copy's root takes the image root's mode (0755), so without it any
 * local user could run a setuid-root program the container (or its image)
 * put there.  Only the container's root, which mounts it, may enter:
 * root, or in a rootful user namespace the host id its root maps to
 * (rootless: the caller, whose --root it is). */
static int
guard_dir (const struct rt_config *cfg, const char *path, struct cm_err **err)
{
  if (mkdir (path, 0700) < 0)
    return cm_err_set (err, errno, "rootfs copy `%s`", path);
  if (geteuid () == 0 && in_user_namespace (cfg)
      && chown (path,
                host_root (cfg->uid_mappings, cfg->uid_mappings_len),
                host_root (cfg->gid_mappings, cfg->gid_mappings_len))
             < 0)
    return cm_err_set (err, errno, "rootfs copy `%s`: chown", path);
  return 0;
}

/* The kernel refused the overlay: the container gets a copy of the lower
 * of its own, ROOT/ID/rootfs/root (writable, as the overlay would have
 * been; no device nodes, as the overlay is nodev), gone with the state
 * directory like the layer it replaces.  One warning line says why. */
static int
copy_fallback (const struct oci_globals *g, const struct rt_config *cfg,
               const char *dir, struct cow_branch **b, const char *why,
               char **rootfs, struct cm_err **err)
{
  _cleanup_free_ char *guard = xasprintf ("%s/rootfs", dir);
  _cleanup_free_ char *copy = xasprintf ("%s/root", guard);
  _cleanup_free_ char *w
      = xasprintf ("create: copying the rootfs lower `%s`: overlayfs "
                   "refused the layer: %s",
                   (*b)->lower, why);
  unsigned flags = CM_COPY_TOP_META;
  _cleanup_fd_ int src = -1, dst = -1;
  oci_log_warning (g, w);
  if (geteuid () == 0)
    flags |= CM_COPY_OWNERS | CM_COPY_ALL_XATTRS;
  src = open ((*b)->lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0)
    return cm_err_set (err, errno, "rootfs lower `%s`", (*b)->lower);
  if (guard_dir (cfg, guard, err) < 0)
    return -1;
  if (mkdir (copy, 0700) < 0
      || (dst = open (copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
             < 0)
    return cm_err_set (err, errno, "rootfs copy `%s`", copy);
  if (cm_copy_tree (src, dst, flags, "copy rootfs", "", err) < 0
      || cow_abort (*b, err) < 0)
    return -1;
  cow_branch_free (*b);
  *b = NULL;
  *rootfs = cm_steal_ptr (&copy);
  return 0;
}

int
oci_cow_rootfs_source (const struct oci_globals *g, const char *id,
                       const struct rt_config *cfg, struct cow_branch **b,
                       const char *lowers[1], struct rt_rootfs_source *src,
                       char **rootfs, struct cm_err **err)
{
  const char *lower = oci_cow_rootfs_lower (cfg);
  struct cow_create_opts o = { .nosync = true };
  char root[PATH_MAX];
  _cleanup_free_ char *why = NULL;
  if (lower == NULL)
    return 0;
  if (oci_cow_max_disk (cfg, &o.max_disk, err) < 0)
    return -1;
  if (realpath (g->root, root) == NULL)
    return cm_err_set (err, errno, "--root `%s`", g->root);
  _cleanup_free_ char *dir = xasprintf ("%s/%s", root, id);
  _cleanup_free_ char *layer = xasprintf ("%s/layer", dir);
  _cleanup_free_ char *pin = xasprintf ("%s/" OCI_COW_IMAGE_PIN, dir);
  _cleanup_free_ char *who = xasprintf ("container %s", id);
  /* A cached rootfs is pinned under the container whose lower it is, for
   * as long as its state directory holds the pin (docs/image.md "Pins"):
   * rmi refuses it, prune keeps it. */
  if (img_pin (lower, pin, who, err) < 0)
    return cm_err_wrap (err, "annotation " OCI_COW_ANN "rootfs_lower");
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
  /* Asked of the kernel with these very layers (the upper's filesystem
   * decides too: not an overlayfs, ...), where the init will mount them:
   * outside a user namespace the answer is the overlay itself, made here
   * (no fork); the caller closes src->mount_fd. */
  int r = rt_overlay_prepare (src, in_user_namespace (cfg), &why, err);
  if (r < 0)
    return -1;
  if (r > 0)
    return 1;
  /* a copy cannot carry the quota: a caller who asked for one does not
   * get a root without it */
  if (o.max_disk)
    return cm_err_set (err, 0,
                       "annotation " OCI_COW_ANN "max_disk: overlayfs "
                       "refused the root's layer (%s), and a copied root "
                       "would have no quota",
                       why);
  src->kind = RT_ROOTFS_BIND;
  if (copy_fallback (g, cfg, dir, b, why, rootfs, err) < 0)
    return cm_err_wrap (err, "annotation " OCI_COW_ANN "rootfs_lower");
  img_unpin_at (AT_FDCWD, pin); /* the copy is the container's own */
  return 0;
}
