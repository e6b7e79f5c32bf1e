/* Overlay mounts of a container with a user namespace, made by a runtime
 * that is root of the initial user namespace (docs/cow.md "User
 * namespaces").
 *
 * Mounted by the container's init, an overlay is made with the creds of
 * the namespace's root: a host uid (100000 for a map "0 100000 65536")
 * without any right over the host.  It cannot look up its upper and work
 * directories under the runtime's 0700 state root (EACCES at the mount),
 * and overlayfs refuses to copy up a lower file whose owner its mounter's
 * namespace does not map (EOVERFLOW): host root's files.  Opening the
 * storage up to that uid would let the host user it is read every branch.
 *
 * So the runtime makes these mounts itself, before the clone, with its
 * own rights (fsopen/fsconfig/fsmount: a detached mount, not in any mount
 * table), and the init only moves them into place (move_mount) in its own
 * mount namespace.  The overlay rootfs gets the same from oci/ through
 * rt_overlay_prepare (runtime/overlay-try.c), told by rt_overlay_in_userns
 * that such a container's overlay is not made in its namespace.
 *
 * overlayfs still checks every access of the container with the
 * container's creds on the overlay inode first; the mounter's
 * rights only do what overlayfs does underneath (copy-up, whiteouts), so
 * the container can do nothing to the lower it could not do to a bind
 * mount of it, and the storage stays out of its view. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"
#include "runtime.h"

/* Root of the initial user namespace: uid 0 and the identity map. */
static bool
host_root (void)
{
  _cleanup_free_ char *map = NULL;
  struct cm_err *e = NULL;
  unsigned long a, b, n;
  int ok;
  if (geteuid () != 0)
    return false;
  ok = cm_read_file_at (AT_FDCWD, "/proc/self/uid_map", 4096, &map, NULL, &e)
       == 0;
  cm_err_free (&e);
  return ok && sscanf (map, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0
         && b == 0 && n == 4294967295UL;
}

static bool
has_user_ns (const struct rt_config *c)
{
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (strcmp (c->namespaces[i].type, "user") == 0)
      return true;
  return false;
}

bool
rt_overlay_in_userns (const struct rt_config *c)
{
  return has_user_ns (c) && !host_root ();
}

static uint64_t
mount_attr_of (unsigned long fl)
{
  uint64_t a = 0;
  a |= fl & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0;
  a |= fl & MS_NOSUID ? MOUNT_ATTR_NOSUID : 0;
  a |= fl & MS_NODEV ? MOUNT_ATTR_NODEV : 0;
  a |= fl & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0;
  a |= fl & MS_NOATIME ? MOUNT_ATTR_NOATIME : 0;
  a |= fl & MS_NODIRATIME ? MOUNT_ATTR_NODIRATIME : 0;
  a |= fl & MS_STRICTATIME ? MOUNT_ATTR_STRICTATIME : 0;
  a |= fl & MS_NOSYMFOLLOW ? MOUNT_ATTR_NOSYMFOLLOW : 0;
  return a;
}

/* One "key=value" or "flag" of the mount data into the fs context. */
static int
config_one (int fsfd, char *opt, const char *what, struct cm_err **err)
{
  char *eq = strchr (opt, '=');
  long r;
  if (eq)
    {
      *eq = '\0';
      r = syscall (SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, opt, eq + 1, 0);
      *eq = '=';
    }
  else
    r = syscall (SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
  if (r < 0)
    return cm_err_set (err, errno, "%s: overlay option \"%s\"", what, opt);
  return 0;
}

/* A detached overlay of |data| (comma-separated, as for mount(2)) with
 * the MS_* |flags|; an fd above |floor_| or -1 with *err. */
static int
make_overlay (const char *data, unsigned long flags, int floor_,
              const char *what, struct cm_err **err)
{
  _cleanup_fd_ int fsfd = (int) syscall (SYS_fsopen, "overlay",
                                         FSOPEN_CLOEXEC);
  _cleanup_free_ char *d = xstrdup (data ? data : "");
  char *save = NULL;
  int mfd;
  if (fsfd < 0)
    return cm_err_set (err, errno, "%s: fsopen overlay", what);
  for (char *o = strtok_r (d, ",", &save); o; o = strtok_r (NULL, ",", &save))
    if (config_one (fsfd, o, what, err) < 0)
      return -1;
  /* "ro" makes the superblock read-only too, as mount(2) does. */
  if ((flags & MS_RDONLY)
      && syscall (SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0)
    return cm_err_set (err, errno, "%s: overlay option \"ro\"", what);
  if (syscall (SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return cm_err_set (err, errno, "%s: mount overlay (%s)", what, data);
  mfd = (int) syscall (SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
                       mount_attr_of (flags));
  if (mfd < 0)
    return cm_err_set (err, errno, "%s: fsmount overlay", what);
  if (mfd < floor_)
    {
      int n = fcntl (mfd, F_DUPFD_CLOEXEC, floor_);
      close (mfd);
      if (n < 0)
        return cm_err_set (err, errno, "%s: dup mount fd", what);
      mfd = n;
    }
  return mfd;
}

int
rt_prepare_host_overlays (const struct rt_plan *p, struct rt_prepared *pp,
                          int floor_, struct cm_err **err)
{
  char what[64];
  if (!(p->new_user || p->joins_user) || rt_overlay_in_userns (p->c))
    return 0;
  for (size_t i = 0; i < p->mounts_len; i++)
    {
      const struct rt_mount_plan *mp = &p->mounts[i];
      if (mp->bind || mp->m->type == NULL
          || strcmp (mp->m->type, "overlay") != 0)
        continue;
      if (pp->mount_fds == NULL)
        {
          pp->mount_fds = xcalloc (p->mounts_len, sizeof *pp->mount_fds);
          pp->mount_fds_len = p->mounts_len;
          for (size_t k = 0; k < p->mounts_len; k++)
            pp->mount_fds[k] = -1;
        }
      snprintf (what, sizeof what, "mounts[%zu]", i);
      pp->mount_fds[i] = make_overlay (mp->data, mp->flags, floor_, what, err);
      if (pp->mount_fds[i] < 0)
        return cm_err_wrap (err, "on `%s`", mp->m->destination);
    }
  return 0;
}

int
rt_child_move_mount (int *mntfd, int destfd, const char *dest)
{
  long r = syscall (SYS_move_mount, *mntfd, "", destfd, dest,
                    MOVE_MOUNT_F_EMPTY_PATH
                        | (dest[0] ? 0 : MOVE_MOUNT_T_EMPTY_PATH));
  int e = errno;
  close (*mntfd);
  *mntfd = -1;
  errno = e;
  return r < 0 ? -1 : 0;
}

void
rt_prepare_host_overlays_undo (struct rt_prepared *pp)
{
  for (size_t i = 0; i < pp->mount_fds_len; i++)
    if (pp->mount_fds[i] >= 0)
      close (pp->mount_fds[i]);
  free (pp->mount_fds);
  pp->mount_fds = NULL;
  pp->mount_fds_len = 0;
}
