/* A container without a "mount" entry in linux.namespaces inherits the
 * runtime's mount namespace (runtime-spec: a namespace not listed is
 * inherited).  It still gets root.path as its root, by chroot(2): runc
 * skips all rootfs setup then and runs the program in the host's root,
 * which the spec's root.path does not allow.  Nothing may be mounted:
 * in the host's namespace every mount (the rootfs bind, mounts[], masked
 * and read-only paths, root.readonly's remount, propagation) would change
 * the host's tree, so a config asking for one is refused with the reason.
 * Landlock and seccomp confine the process as always; Landlock's rules,
 * not the chroot, are what keep it inside the rootfs. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

#define WHY "needs a \"mount\" namespace (without one it would change the " \
            "host's mount table)"

int
rt_plan_host_mount_ns (const struct rt_plan *p, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  if (c->mounts_len)
    return cm_err_set (err, 0, "mounts: %zu entries: " WHY, c->mounts_len);
  if (c->masked_paths_len)
    return cm_err_set (err, 0, "linux.maskedPaths: " WHY);
  if (c->readonly_paths_len)
    return cm_err_set (err, 0, "linux.readonlyPaths: " WHY);
  if (c->root_readonly)
    return cm_err_set (err, 0, "root.readonly: " WHY);
  if (c->rootfs_propagation && *c->rootfs_propagation)
    return cm_err_set (err, 0, "linux.rootfsPropagation: " WHY);
  if (c->devices_len)
    return cm_err_set (err, 0, "linux.devices: " WHY " (nodes are bound in "
                       "a user namespace)");
  return 0;
}

int
rt_child_chroot (const char *rootfs, struct cm_err **err)
{
  _cleanup_fd_ int fd = open (rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open rootfs `%s`", rootfs);
  if (fchdir (fd) < 0)
    return cm_err_set (err, errno, "chdir to rootfs");
  if (chroot (".") < 0)
    return cm_err_set (err, errno, "chroot to rootfs `%s`", rootfs);
  if (chdir ("/") < 0)
    return cm_err_set (err, errno, "chdir /");
  return 0;
}
