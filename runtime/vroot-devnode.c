/* Device nodes met in the view.  The rootfs is a host directory, and it
 * may hold device nodes: an image unpacked by root carries them
 * (image/unpack.c makes them), a bundle prepared by root too.  In the view
 * such a node is the host's device, with the permissions the image gave
 * it: a container wrote the host's kernel log through a `c 1:11` node in
 * its rootfs, a `b 8:0` node would be the host's disk, a `c 136:N` node
 * another session's terminal.  The namespaced mode's device cgroup
 * refuses them; Landlock's file rights do not tell a device from a file.
 *
 * So an open (not O_PATH) that yields a char or block device is refused
 * (EPERM, the device cgroup's answer) unless it is a file bind mount of
 * the view — the /dev defaults, or a host device config.json binds, whose
 * ioctls follow linux.resources.devices (vroot-policy.c) — or one of the
 * runtime-spec defaults by number (null, zero, full, random, urandom,
 * tty: the caller's own terminal).  A node config.json's device rules
 * allow but that lies in the rootfs is refused too: bind it. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "vroot-sup.h"

static bool
default_device (dev_t rdev)
{
  unsigned ma = major (rdev), mi = minor (rdev);
  return (ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9))
         || (ma == 5 && mi == 0);
}

int
vr_devnode_type (const struct vr_entry *e, int fd, int oflags, mode_t *type)
{
  struct stat st;
  *type = 0;
  if ((oflags & O_PATH) || (e && !e->dir))
    return 0;
  /* fstat(2) itself: glibc's fstat is a newfstatat, which the view's
   * system-call budget counts as a lookup (nsless_perf.bats). */
  if (syscall (SYS_fstat, fd, &st) < 0)
    return -errno;
  *type = st.st_mode & S_IFMT;
  if (!S_ISCHR (st.st_mode) && !S_ISBLK (st.st_mode))
    return 0;
  return S_ISCHR (st.st_mode) && default_device (st.st_rdev) ? 0 : -EPERM;
}

int
vr_devnode_check (const struct vr_entry *e, int fd, int oflags)
{
  mode_t type;
  return vr_devnode_type (e, fd, oflags, &type);
}
