/* The container's filesystem view: mount options, every mount resolved
 * inside the rootfs (openat2 RESOLVE_IN_ROOT, so a symlink in the image can
 * never point a mount outside it), default devices, pivot_root, masked and
 * read-only paths. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/copy.h"
#include "common/openat2.h"
#include "common/util.h"
#include "internal.h"

static const struct
{
  const char *name;
  bool clear;
  unsigned long flag;
  uint64_t attr;                /* recursive variant (mount_setattr) */
} mount_opts[] = {
  { "defaults", false, 0, 0 },
  { "ro", false, MS_RDONLY, 0 },
  { "rw", true, MS_RDONLY, 0 },
  { "suid", true, MS_NOSUID, 0 },
  { "nosuid", false, MS_NOSUID, 0 },
  { "dev", true, MS_NODEV, 0 },
  { "nodev", false, MS_NODEV, 0 },
  { "exec", true, MS_NOEXEC, 0 },
  { "noexec", false, MS_NOEXEC, 0 },
  { "sync", false, MS_SYNCHRONOUS, 0 },
  { "async", true, MS_SYNCHRONOUS, 0 },
  { "dirsync", false, MS_DIRSYNC, 0 },
  { "remount", false, MS_REMOUNT, 0 },
  { "mand", false, MS_MANDLOCK, 0 },
  { "nomand", true, MS_MANDLOCK, 0 },
  { "atime", true, MS_NOATIME, 0 },
  { "noatime", false, MS_NOATIME, 0 },
  { "diratime", true, MS_NODIRATIME, 0 },
  { "nodiratime", false, MS_NODIRATIME, 0 },
  { "relatime", false, MS_RELATIME, 0 },
  { "norelatime", true, MS_RELATIME, 0 },
  { "strictatime", false, MS_STRICTATIME, 0 },
  { "nostrictatime", true, MS_STRICTATIME, 0 },
  { "silent", false, MS_SILENT, 0 },
  { "loud", true, MS_SILENT, 0 },
  { "nosymfollow", false, MS_NOSYMFOLLOW, 0 },
  { "rro", false, 0, MOUNT_ATTR_RDONLY },
  { "rnosuid", false, 0, MOUNT_ATTR_NOSUID },
  { "rnodev", false, 0, MOUNT_ATTR_NODEV },
  { "rnoexec", false, 0, MOUNT_ATTR_NOEXEC },
  { "rnoatime", false, 0, MOUNT_ATTR_NOATIME },
  { "rnodiratime", false, 0, MOUNT_ATTR_NODIRATIME },
  { "rrelatime", false, 0, MOUNT_ATTR_RELATIME },
  { "rstrictatime", false, 0, MOUNT_ATTR_STRICTATIME },
  { "rnosymfollow", false, 0, MOUNT_ATTR_NOSYMFOLLOW },
};

static const struct
{
  const char *name;
  unsigned long flag;
} propagations[] = {
  { "private", MS_PRIVATE },    { "rprivate", MS_PRIVATE | MS_REC },
  { "shared", MS_SHARED },      { "rshared", MS_SHARED | MS_REC },
  { "slave", MS_SLAVE },        { "rslave", MS_SLAVE | MS_REC },
  { "unbindable", MS_UNBINDABLE },
  { "runbindable", MS_UNBINDABLE | MS_REC },
};

static unsigned long
propagation_of (const char *s)
{
  for (size_t i = 0; i < ARRAY_SIZE (propagations); i++)
    if (strcmp (s, propagations[i].name) == 0)
      return propagations[i].flag;
  return 0;
}

static void
data_append (char **data, const char *opt)
{
  char *n = *data ? xasprintf ("%s,%s", *data, opt) : xstrdup (opt);
  free (*data);
  *data = n;
}

static int
plan_one (const struct rt_mount *m, size_t i, struct rt_mount_plan *mp,
          struct cm_err **err)
{
  mp->m = m;
  if (m->destination == NULL || m->destination[0] != '/')
    return cm_err_set (err, 0, "mounts[%zu].destination: must be an absolute "
                       "path, got \"%s\"", i, m->destination ? m->destination : "");
  for (size_t k = 0; k < m->options_len; k++)
    {
      const char *o = m->options[k];
      unsigned long prop;
      bool known = false;

      if (strcmp (o, "bind") == 0 || strcmp (o, "rbind") == 0)
        {
          mp->bind = true;
          mp->rec |= o[0] == 'r';
          continue;
        }
      if ((prop = propagation_of (o)) != 0)
        {
          mp->propagation = prop;
          continue;
        }
      for (size_t j = 0; j < ARRAY_SIZE (mount_opts); j++)
        if (strcmp (o, mount_opts[j].name) == 0)
          {
            known = true;
            if (mount_opts[j].attr)
              mp->attr_set |= mount_opts[j].attr;
            else if (mount_opts[j].clear)
              mp->flags &= ~mount_opts[j].flag;
            else
              mp->flags |= mount_opts[j].flag;
          }
      /* tmpcopyup (runc/crun extension; podman passes it for --tmpfs and
       * --read-only): the tmpfs starts with the content of the directory it
       * covers. */
      if (strcmp (o, "tmpcopyup") == 0)
        {
          mp->tmpcopyup = true;
          continue;
        }
      /* idmap is a crun/runc extension this runtime does not implement:
       * refuse rather than silently ignore it. */
      if (!known && (strcmp (o, "idmap") == 0 || strcmp (o, "ridmap") == 0))
        return cm_err_set (err, 0, "mounts[%zu].options[%zu]: \"%s\" is not "
                           "supported", i, k, o);
      if (!known)
        data_append (&mp->data, o);
    }
  if (m->type && strcmp (m->type, "bind") == 0)
    mp->bind = true;
  if (mp->tmpcopyup && (mp->bind || m->type == NULL
                        || strcmp (m->type, "tmpfs") != 0))
    return cm_err_set (err, 0, "mounts[%zu].options: \"tmpcopyup\" needs a "
                       "tmpfs mount", i);
  if (!mp->bind && (m->type == NULL || m->type[0] == '\0'))
    return cm_err_set (err, 0, "mounts[%zu].type: required for a non-bind "
                       "mount of \"%s\"", i, m->destination);
  if (mp->bind && (m->source == NULL || m->source[0] == '\0'))
    return cm_err_set (err, 0, "mounts[%zu].source: required for a bind "
                       "mount", i);
  mp->is_cgroup = !mp->bind && m->type
                  && (strcmp (m->type, "cgroup") == 0
                      || strcmp (m->type, "cgroup2") == 0);
  return 0;
}

/* A rootfs that is the host's root directory (compared by inode, so a
 * symlink or a bind mount of / counts too) is refused: every mount of the
 * config would land on the host's own paths, and the Landlock rule for the
 * rootfs would grant the whole host.  (It also made the v1 cgroup mount
 * below see its own mounts appear under /sys/fs/cgroup.) */
int
rt_check_rootfs (const char *rootfs, struct cm_err **err)
{
  struct stat r, h;
  if (rootfs == NULL)
    return 0;
  if (stat (rootfs, &r) < 0)
    return cm_err_set (err, errno, "root.path `%s`", rootfs);
  if (stat ("/", &h) < 0)
    return cm_err_set (err, errno, "stat /");
  if (r.st_dev == h.st_dev && r.st_ino == h.st_ino)
    return cm_err_set (err, 0, "root.path `%s` is the host's root directory: "
                       "a container needs a root filesystem of its own",
                       rootfs);
  return 0;
}

int
rt_plan_mounts (struct rt_plan *p, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  if (rt_check_rootfs (p->o->rootfs, err) < 0
      || (p->host_mount_ns && rt_plan_host_mount_ns (p, err) < 0))
    return -1;
  p->mounts = xcalloc (c->mounts_len, sizeof *p->mounts);
  p->mounts_len = c->mounts_len;
  p->first_cgroup_mount = c->mounts_len;
  for (size_t i = 0; i < c->mounts_len; i++)
    {
      const struct rt_mount *m = &c->mounts[i];
      if (plan_one (m, i, &p->mounts[i], err) < 0)
        return -1;
      if (p->mounts[i].is_cgroup && p->first_cgroup_mount == c->mounts_len)
        p->first_cgroup_mount = i;
      if (strcmp (m->destination, "/dev") == 0 && m->type
          && strcmp (m->type, "tmpfs") == 0)
        p->dev_is_tmpfs = true;
      if (strcmp (m->destination, "/dev/pts") == 0)
        p->has_devpts = true;
    }
  p->root_propagation = MS_SLAVE | MS_REC;
  if (c->rootfs_propagation && *c->rootfs_propagation)
    {
      p->root_propagation = propagation_of (c->rootfs_propagation);
      if (p->root_propagation == 0)
        return cm_err_set (err, 0, "linux.rootfsPropagation: unknown value "
                           "\"%s\"", c->rootfs_propagation);
    }
  return 0;
}

/* ---- child side ------------------------------------------------------ */

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/* Makes the last component of |path| under the directory |dirfd| (a file
 * when |file|) and opens it, resolved inside the root. */
static int
make_last (int dirfd, const char *path, const char *comp, bool file,
           struct cm_err **err)
{
  int fd;
  if (file)
    {
      int w = openat (dirfd, comp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC
                      | O_NOFOLLOW, 0644);
      if (w < 0 && errno != EEXIST)
        return cm_err_set (err, errno, "create `%s` in rootfs", path);
      if (w >= 0)
        close (w);
    }
  else if (mkdirat (dirfd, comp, 0755) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "mkdir `%s` in rootfs (at `%s`)", path,
                       comp);
  fd = cm_openat2 (dirfd, comp, O_PATH | O_CLOEXEC, IN_ROOT);
  if (fd < 0)
    return cm_err_set (err, errno, "resolve `%s` in rootfs (at `%s`)", path,
                       comp);
  return fd;
}

int
rt_open_in_root (int rootfd, const char *path, bool create, bool file,
                 struct cm_err **err)
{
  _cleanup_free_ char *dup = NULL;
  _cleanup_fd_ int parent = -1;
  char *slash;
  int fd = cm_openat2 (rootfd, path, O_PATH | O_CLOEXEC, IN_ROOT);

  if (fd >= 0 || errno != ENOENT || !create)
    {
      if (fd < 0)
        return cm_err_set (err, errno, "resolve `%s` in rootfs", path);
      return fd;
    }
  /* Create what is missing from the deepest existing parent down: each
   * step is resolved inside the root, so a symlink planted anywhere in
   * the path still cannot leave it; and most mount points miss only
   * their last component (one lookup, not one per component). */
  dup = xstrdup (path);
  while ((slash = strrchr (dup, '/')) != NULL && slash[1] == '\0'
         && slash != dup)
    *slash = '\0';
  slash = strrchr (dup, '/');
  if (slash == NULL || slash[1] == '\0')
    return cm_err_set (err, ENOENT, "resolve `%s` in rootfs", path);
  *slash = '\0';
  parent = *dup ? rt_open_in_root (rootfd, dup, true, false, err)
                : cm_openat2 (rootfd, "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
                              IN_ROOT);
  if (parent < 0)
    return *dup ? -1 : cm_err_set (err, errno, "open rootfs");
  return make_last (parent, path, slash + 1, file, err);
}

static const char *
fdpath (int fd, char buf[64])
{
  snprintf (buf, 64, "/proc/self/fd/%d", fd);
  return buf;
}

/* Flags a bind remount must keep: in a user namespace the kernel refuses to
 * drop nosuid/nodev/noexec/ro that the source mount has locked. */
static unsigned long
locked_flags (const char *path)
{
  struct statvfs s;
  unsigned long f = 0;
  if (statvfs (path, &s) < 0)
    return 0;
  if (s.f_flag & ST_NOSUID)
    f |= MS_NOSUID;
  if (s.f_flag & ST_NODEV)
    f |= MS_NODEV;
  if (s.f_flag & ST_NOEXEC)
    f |= MS_NOEXEC;
  return f;
}

static int
mount_attrs (int fd, uint64_t set, const char *dest, struct cm_err **err)
{
  struct mount_attr a = { .attr_set = set };
  if (set == 0)
    return 0;
  /* The atime mode is a field, not a bit: mount_setattr(2) refuses to set
   * it (EINVAL) unless the whole field is cleared in the same call. */
  if (set & MOUNT_ATTR__ATIME)
    a.attr_clr = MOUNT_ATTR__ATIME;
  if (syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a,
               sizeof a) < 0)
    return cm_err_set (err, errno, "recursive mount attributes on `%s`", dest);
  return 0;
}

static int
do_bind (const struct rt_child *ch, const struct rt_mount_plan *mp, int rootfd,
         struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_mount *m = mp->m;
  struct stat st;
  char buf[64];
  _cleanup_fd_ int fd = -1;
  const char *src = m->source;
  _cleanup_free_ char *abs_src = NULL;

  if (src[0] != '/')
    {
      abs_src = xasprintf ("%s/%s", p->o->bundle, m->source);
      src = abs_src;
    }
  if (stat (src, &st) < 0)
    return cm_err_set (err, errno, "mount `%s` on `%s`: source", src,
                       m->destination);
  fd = rt_open_in_root (rootfd, m->destination, true, !S_ISDIR (st.st_mode),
                        err);
  if (fd < 0)
    return -1;
  if (mount (src, fdpath (fd, buf), NULL, MS_BIND | (mp->rec ? MS_REC : 0),
             NULL) < 0)
    return cm_err_set (err, errno, "bind mount `%s` on `%s`", src,
                       m->destination);
  close (fd);
  fd = rt_open_in_root (rootfd, m->destination, false, false, err);
  if (fd < 0)
    return -1;
  if (mp->flags & ~(unsigned long) MS_REMOUNT)
    {
      unsigned long f = MS_BIND | MS_REMOUNT | mp->flags
                        | locked_flags (fdpath (fd, buf));
      if (mount (NULL, fdpath (fd, buf), NULL, f, NULL) < 0)
        return cm_err_set (err, errno, "remount `%s` with its options",
                           m->destination);
    }
  if (mp->propagation
      && mount (NULL, fdpath (fd, buf), NULL, mp->propagation, NULL) < 0)
    return cm_err_set (err, errno, "set propagation of `%s`", m->destination);
  return mount_attrs (fd, mp->attr_set, m->destination, err);
}

/* cgroup/cgroup2 mounts.  Inside a cgroup namespace the kernel shows the
 * container's own cgroup as the root; without one, bind the container's
 * cgroup directory so the host tree is never exposed. */
static int
mount_one_hierarchy (const struct rt_child *ch, int rootfd, const char *dest,
                     const char *host_root, const char *fstype,
                     const char *opts, unsigned long fl, struct cm_err **err)
{
  char buf[64];
  _cleanup_fd_ int dfd = rt_open_in_root (rootfd, dest, true, false, err);
  _cleanup_free_ char *src = NULL;

  if (dfd < 0)
    return -1;
  if (ch->p->new_cgroup
      && mount ("cgroup", fdpath (dfd, buf), fstype, fl, opts) == 0)
    return 0;
  src = xasprintf ("%s%s", host_root, ch->cgroup_path ? ch->cgroup_path : "");
  if (access (src, F_OK) < 0)
    {
      free (src);
      src = xstrdup (host_root);
    }
  if (mount (src, fdpath (dfd, buf), NULL, MS_BIND | MS_REC, NULL) < 0)
    return cm_err_set (err, errno, "bind cgroup `%s`", src);
  /* The remount must name the new mount, not the directory under it. */
  close (dfd);
  dfd = rt_open_in_root (rootfd, dest, false, false, err);
  if (dfd < 0)
    return -1;
  if (mount (NULL, fdpath (dfd, buf), NULL, MS_BIND | MS_REMOUNT | fl
             | locked_flags (fdpath (dfd, buf)), NULL) < 0)
    return cm_err_set (err, errno, "remount cgroup `%s`", src);
  return 0;
}

static int
do_cgroup (const struct rt_child *ch, const struct rt_mount_plan *mp, int rootfd,
           struct cm_err **err)
{
  const char *layout = rt_cgroup_layout ();
  unsigned long fl = mp->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
                                  | MS_RELATIME);
  char buf[64];
  _cleanup_fd_ int fd = rt_open_in_root (rootfd, mp->m->destination, true,
                                         false, err);
  _cleanup_free_ char *mi = NULL;
  char *lsave = NULL;
  size_t mi_len;

  if (fd < 0)
    return -1;
  if (strcmp (layout, "v2") == 0)
    return mount_one_hierarchy (ch, rootfd, mp->m->destination,
                                "/sys/fs/cgroup", "cgroup2", NULL, fl, err);
  /* The hierarchies are read once, before mounting anything: the mounts
   * made below must never feed the loop that makes them. */
  if (cm_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &mi,
                       &mi_len, err) < 0)
    return -1;
  /* v1 or hybrid: a tmpfs holding one directory per hierarchy, as runc. */
  if (mount ("tmpfs", fdpath (fd, buf), "tmpfs",
             MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") < 0)
    return cm_err_set (err, errno, "mount tmpfs on `%s`", mp->m->destination);
  close (cm_steal_fd (&fd));
  for (char *line = strtok_r (mi, "\n", &lsave); line;
       line = strtok_r (NULL, "\n", &lsave))
    {
      char mnt[1024], fstype[64], super[1024];
      const char *sep = strstr (line, " - ");
      const char *name;
      _cleanup_free_ char *dest = NULL, *opts = NULL;

      if (sep == NULL
          || sscanf (line, "%*s %*s %*s %*s %1023s", mnt) != 1
          || sscanf (sep + 3, "%63s %*s %1023s", fstype, super) != 2
          || !cm_startswith (mnt, "/sys/fs/cgroup/"))
        continue;
      if (strcmp (fstype, "cgroup") != 0 && strcmp (fstype, "cgroup2") != 0)
        continue;
      name = mnt + strlen ("/sys/fs/cgroup/");
      if (strchr (name, '/'))
        continue;
      dest = xasprintf ("%s/%s", mp->m->destination, name);
      if (strcmp (fstype, "cgroup") == 0)
        {
          /* keep only the controller names from the super options */
          char *save = NULL;
          for (char *o = strtok_r (super, ",", &save); o;
               o = strtok_r (NULL, ",", &save))
            if (strcmp (o, "rw") && strcmp (o, "ro"))
              data_append (&opts, o);
        }
      if (mount_one_hierarchy (ch, rootfd, dest, mnt, fstype, opts, fl, err)
          < 0)
        return -1;
    }
  fd = rt_open_in_root (rootfd, mp->m->destination, false, false, err);
  if (fd < 0)
    return -1;
  if ((fl & MS_RDONLY)
      && mount (NULL, fdpath (fd, buf), NULL,
                MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
                    | MS_NOEXEC, NULL) < 0)
    return cm_err_set (err, errno, "remount `%s` read-only",
                       mp->m->destination);
  return 0;
}

static int
do_mount (const struct rt_child *ch, const struct rt_mount_plan *mp, int rootfd,
          struct cm_err **err)
{
  const struct rt_mount *m = mp->m;
  char buf[64];
  _cleanup_fd_ int fd = -1;
  unsigned long fl = mp->flags;
  size_t i = (size_t) (mp - ch->p->mounts);
  /* an overlay the runtime made from the host (runtime/overlay-host.c) */
  int *hostfd = ch->pp->mount_fds && ch->pp->mount_fds[i] >= 0
                    ? &ch->pp->mount_fds[i] : NULL;

  if (mp->bind)
    return do_bind (ch, mp, rootfd, err);
  if (mp->is_cgroup)
    return do_cgroup (ch, mp, rootfd, err);
  fd = rt_open_in_root (rootfd, m->destination, true, false, err);
  if (fd < 0)
    return -1;
  if (hostfd ? rt_child_move_mount (hostfd, fd, "") < 0
                  : mount (m->source ? m->source : m->type, fdpath (fd, buf),
                           m->type, fl, mp->data) < 0)
    {
      int e = errno;
      /* sysfs cannot be mounted from a user namespace that does not own the
       * network namespace: fall back to a read-only recursive bind, as runc. */
      if (strcmp (m->type, "sysfs") == 0 && (e == EPERM || e == EBUSY))
        {
          if (mount ("/sys", fdpath (fd, buf), NULL, MS_BIND | MS_REC, NULL)
                  == 0
              && mount (NULL, fdpath (fd, buf), NULL,
                        MS_BIND | MS_REMOUNT | MS_RDONLY | locked_flags ("/sys"),
                        NULL) == 0)
            return 0;
        }
      /* mqueue needs an IPC namespace the user namespace owns; a bind of
       * the host's is what other runtimes do too. */
      if (strcmp (m->type, "mqueue") == 0 && (e == EPERM || e == EBUSY)
          && mount ("/dev/mqueue", fdpath (fd, buf), NULL, MS_BIND, NULL) == 0)
        return 0;
      return cm_err_set (err, e, "mount %s on `%s`", m->type, m->destination);
    }
  {
    /* |fd| still names the covered directory, not the new mount: the
     * propagation change and mount_setattr below must go through a fresh
     * open of the destination (through |fd| they fail with EINVAL, or would
     * change the mount underneath). */
    _cleanup_fd_ int top = rt_open_in_root (rootfd, m->destination, false,
                                            false, err);
    if (top < 0)
      return -1;
    if (mp->tmpcopyup)
      {
        /* Copy before any ro flag takes effect below. */
        _cleanup_fd_ int under = open (fdpath (fd, buf), O_RDONLY
                                                         | O_DIRECTORY
                                                         | O_CLOEXEC);
        _cleanup_fd_ int topdir = open (fdpath (top, buf), O_RDONLY
                                                           | O_DIRECTORY
                                                           | O_CLOEXEC);
        if (under < 0 || topdir < 0)
          return cm_err_set (err, errno, "tmpcopyup: open `%s`",
                             m->destination);
        if (cm_copy_tree (under, topdir, CM_COPY_OWNERS | CM_COPY_DEVICES,
                          "tmpcopyup", m->destination, err) < 0)
          return -1;
      }
    close (fd);
    fd = cm_steal_fd (&top);
  }
  if (mp->propagation
      && mount (NULL, fdpath (fd, buf), NULL, mp->propagation, NULL) < 0)
    return cm_err_set (err, errno, "set propagation of `%s`", m->destination);
  return mount_attrs (fd, mp->attr_set, m->destination, err);
}

static const struct
{
  const char *name;
  unsigned maj, min;
} default_devices[] = {
  { "null", 1, 3 },    { "zero", 1, 5 }, { "full", 1, 7 },
  { "random", 1, 8 },  { "urandom", 1, 9 }, { "tty", 5, 0 },
};

/* mknod where the kernel lets us (no user namespace), else a bind mount of
 * the host node over an empty file. */
static int
make_node (const struct rt_plan *p, int rootfd, const char *path, mode_t type,
           dev_t dev, mode_t mode, uid_t uid, gid_t gid, struct cm_err **err)
{
  _cleanup_fd_ int dirfd = -1;
  _cleanup_free_ char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  const char *base = slash ? slash + 1 : dir;
  char buf[64];

  if (slash)
    *slash = '\0';
  dirfd = rt_open_in_root (rootfd, slash && *dir ? dir : "/", true, false, err);
  if (dirfd < 0)
    return -1;
  {
    _cleanup_fd_ int d = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
      return cm_err_set (err, errno, "open `%s`", dir);
    unlinkat (d, base, 0);
    if (!p->new_user && mknodat (d, base, type | (mode & 07777), dev) == 0)
      {
        if (fchownat (d, base, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
          return cm_err_set (err, errno, "chown device `%s`", path);
        if (fchmodat (d, base, mode & 07777, 0) < 0)
          return cm_err_set (err, errno, "chmod device `%s`", path);
        return 0;
      }
    if (type != S_IFCHR && type != S_IFBLK)
      return cm_err_set (err, errno, "mknod `%s`", path);
    {
      /* The host's node at the same path, as runc does. */
      const char *host = path;
      _cleanup_fd_ int f = openat (d, base, O_CREAT | O_WRONLY | O_CLOEXEC
                                   | O_NOFOLLOW, 0600);
      if (f < 0)
        return cm_err_set (err, errno, "create `%s`", path);
      if (mount (host, fdpath (f, buf), NULL, MS_BIND, NULL) < 0)
        return cm_err_set (err, errno, "bind device `%s` on `%s`", host, path);
    }
  }
  return 0;
}

/* linux.devices[].path as the Landlock rule names it: "//" and "/./"
 * collapsed and a trailing "/" dropped ("/dev/fuse/" is /dev/fuse, not a
 * node with an empty name); NULL when nothing is left but "/". */
static char *
device_path (const char *in)
{
  char *out = xmalloc (strlen (in) + 1);
  size_t o = 0;
  for (const char *s = in; *s;)
    {
      const char *e;
      while (*s == '/')
        s++;
      e = strchrnul (s, '/');
      if (e - s == 1 && s[0] == '.')
        e = s + 1;
      else if (e > s)
        {
          out[o++] = '/';
          memcpy (out + o, s, (size_t) (e - s));
          o += (size_t) (e - s);
        }
      s = e;
    }
  out[o] = '\0';
  if (o == 0)
    {
      free (out);
      return NULL;
    }
  return out;
}

static int
setup_devices (const struct rt_plan *p, int rootfd, struct cm_err **err)
{
  static const char *const links[][2] = {
    { "/proc/self/fd", "/dev/fd" },     { "/proc/self/fd/0", "/dev/stdin" },
    { "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
    { "/proc/kcore", "/dev/core" },
  };
  const struct rt_config *c = p->c;

  if (p->dev_is_tmpfs)
    {
      _cleanup_fd_ int devfd = rt_open_in_root (rootfd, "/dev", true, false, err);
      _cleanup_fd_ int d = -1;
      char buf[64];
      if (devfd < 0)
        return -1;
      d = open (fdpath (devfd, buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (d < 0)
        return cm_err_set (err, errno, "open /dev in rootfs");
      for (size_t i = 0; i < ARRAY_SIZE (default_devices); i++)
        {
          _cleanup_free_ char *path
              = xasprintf ("/dev/%s", default_devices[i].name);
          if (make_node (p, rootfd, path, S_IFCHR,
                         makedev (default_devices[i].maj, default_devices[i].min),
                         0666, 0, 0, err) < 0)
            return -1;
        }
      for (size_t i = 0; i < ARRAY_SIZE (links); i++)
        if (symlinkat (links[i][0], d, links[i][1] + 5) < 0 && errno != EEXIST)
          return cm_err_set (err, errno, "symlink `%s`", links[i][1]);
      if (p->has_devpts)
        {
          unlinkat (d, "ptmx", 0);
          if (symlinkat ("pts/ptmx", d, "ptmx") < 0)
            return cm_err_set (err, errno, "symlink /dev/ptmx");
        }
      if (mkdirat (d, "shm", 01777) < 0 && errno != EEXIST)
        return cm_err_set (err, errno, "mkdir /dev/shm");
    }
  for (size_t i = 0; i < c->devices_len; i++)
    {
      const struct rt_device *dv = &c->devices[i];
      mode_t type = S_IFCHR;
      if (dv->type == NULL || dv->path == NULL || dv->path[0] != '/')
        return cm_err_set (err, 0, "linux.devices[%zu]: path and type are "
                           "required", i);
      switch (dv->type[0])
        {
        case 'c':
        case 'u':
          type = S_IFCHR;
          break;
        case 'b':
          type = S_IFBLK;
          break;
        case 'p':
          type = S_IFIFO;
          break;
        default:
          return cm_err_set (err, 0, "linux.devices[%zu].type: unknown \"%s\"",
                             i, dv->type);
        }
      _cleanup_free_ char *path = device_path (dv->path);
      if (path == NULL)
        return cm_err_set (err, 0, "linux.devices[%zu].path: \"%s\" names "
                           "no file", i, dv->path);
      if (make_node (p, rootfd, path, type,
                     makedev ((unsigned) dv->major, (unsigned) dv->minor),
                     dv->file_mode_present ? dv->file_mode : 0666,
                     dv->uid_present ? dv->uid : 0,
                     dv->gid_present ? dv->gid : 0, err) < 0)
        return cm_err_wrap (err, "linux.devices[%zu]", i);
    }
  return 0;
}

/* The rootfs becomes a mount point (pivot_root needs one): a bind of
 * root.path onto itself, or the overlay of the rootfs source. */
static int
mount_rootfs (const struct rt_plan *p, const char *rootfs,
              struct cm_err **err)
{
  const struct rt_rootfs_source *src = &p->o->rootfs_source;
  if (src->kind == RT_ROOTFS_OVERLAY)
    return rt_rootfs_overlay (src, rootfs, rt_overlay_in_userns (p->c), err);
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return cm_err_set (err, errno, "bind rootfs `%s`", rootfs);
  return 0;
}

int
rt_child_rootfs (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const char *rootfs = p->o->rootfs;

  if (p->host_mount_ns)
    return 0;                   /* nothing to mount */
  if (mount (NULL, "/", NULL, p->root_propagation, NULL) < 0)
    return cm_err_set (err, errno, "set propagation of /");
  /* Unless the whole tree was just made slave or private, the mount holding
   * the rootfs may still be shared (runtime/rootfs-prop.c). */
  if (p->root_propagation != (MS_SLAVE | MS_REC)
      && p->root_propagation != (MS_PRIVATE | MS_REC)
      && rt_rootfs_parent_private (rootfs, err) < 0)
    return -1;
  if (mount_rootfs (p, rootfs, err) < 0)
    return -1;
  ch->rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ch->rootfd < 0)
    return cm_err_set (err, errno, "open rootfs `%s`", rootfs);
  return 0;
}

static int
mounts_range (struct rt_child *ch, size_t from, size_t to,
              struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  for (size_t i = from; i < to; i++)
    if (do_mount (ch, &p->mounts[i], ch->rootfd, err) < 0)
      return cm_err_wrap (err, "mounts[%zu]", i);
  return 0;
}

/* Split at the first cgroup mount: the cgroup attach runs in the runtime
 * meanwhile, and a cgroup mount must see the container's own cgroup as
 * its root (the child waits for it between the two). */
int
rt_child_mounts_head (struct rt_child *ch, struct cm_err **err)
{
  return mounts_range (ch, 0, ch->p->first_cgroup_mount, err);
}

int
rt_child_mounts_tail (struct rt_child *ch, struct cm_err **err)
{
  return mounts_range (ch, ch->p->first_cgroup_mount, ch->p->mounts_len, err);
}

int
rt_child_devices (struct rt_child *ch, struct cm_err **err)
{
  int r;
  if (ch->p->host_mount_ns)
    return 0;
  r = setup_devices (ch->p, ch->rootfd, err);
  close (ch->rootfd);
  ch->rootfd = -1;
  return r;
}

int
rt_child_pivot (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const char *rootfs = p->o->rootfs;
  _cleanup_fd_ int newroot = open (rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int oldroot = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (p->host_mount_ns)
    return rt_child_chroot (rootfs, err);
  if (newroot < 0)
    return cm_err_set (err, errno, "open rootfs `%s`", rootfs);
  if (oldroot < 0)
    return cm_err_set (err, errno, "open /");
  if (fchdir (newroot) < 0)
    return cm_err_set (err, errno, "chdir to rootfs");
  if (p->o->no_pivot)
    {
      if (mount (rootfs, "/", NULL, MS_MOVE, NULL) < 0)
        return cm_err_set (err, errno, "move rootfs to /");
      if (chroot (".") < 0)
        return cm_err_set (err, errno, "chroot");
    }
  else
    {
      /* pivot_root(".", "."): the old root ends up on top of the new one
       * and is detached at once — no temporary directory needed. */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return cm_err_set (err, errno, "pivot_root");
      /* The old root, not the new one, goes rslave before it is detached:
       * under rootfsPropagation rshared the detach would otherwise reach
       * the host, and making the new root slave would cut the container's
       * shared mounts off from the host.  Where "." points after pivot_root
       * is the kernel's business: go to the old root by fd (runc). */
      if (fchdir (oldroot) < 0)
        return cm_err_set (err, errno, "chdir to the old root");
      if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return cm_err_set (err, errno, "make old root a slave");
      if (umount2 (".", MNT_DETACH) < 0)
        return cm_err_set (err, errno, "detach old root");
    }
  if (chdir ("/") < 0)
    return cm_err_set (err, errno, "chdir /");
  if (p->c->rootfs_propagation && *p->c->rootfs_propagation
      && mount (NULL, "/", NULL, p->root_propagation, NULL) < 0)
    return cm_err_set (err, errno, "linux.rootfsPropagation: apply \"%s\"",
                       p->c->rootfs_propagation);
  return 0;
}

static int
mask_path (const char *path, struct cm_err **err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : cm_err_set (err, errno, "maskedPaths `%s`", path);
  if (S_ISDIR (st.st_mode))
    {
      if (mount ("tmpfs", path, "tmpfs", MS_RDONLY, "size=0k") < 0)
        return cm_err_set (err, errno, "mask `%s`", path);
    }
  else if (mount ("/dev/null", path, NULL, MS_BIND, NULL) < 0)
    return cm_err_set (err, errno, "mask `%s`", path);
  return 0;
}

static int
readonly_path (const char *path, struct cm_err **err)
{
  if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
    return errno == ENOENT ? 0 : cm_err_set (err, errno, "readonlyPaths `%s`",
                                              path);
  if (mount (NULL, path, NULL,
             MS_BIND | MS_REMOUNT | MS_RDONLY | locked_flags (path), NULL) < 0)
    return cm_err_set (err, errno, "remount `%s` read-only", path);
  return 0;
}

int
rt_child_finish_rootfs (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_config *c = ch->p->c;
  for (size_t i = 0; i < c->masked_paths_len; i++)
    if (mask_path (c->masked_paths[i], err) < 0)
      return -1;
  for (size_t i = 0; i < c->readonly_paths_len; i++)
    if (readonly_path (c->readonly_paths[i], err) < 0)
      return -1;
  if (c->root_readonly
      && mount (NULL, "/", NULL,
                MS_BIND | MS_REMOUNT | MS_RDONLY | locked_flags ("/"), NULL) < 0)
    return cm_err_set (err, errno, "remount / read-only (root.readonly)");
  return 0;
}

/* For `features`: every mount option plan_one() accepts (flags, recursive
 * attributes, propagation, bind/rbind); NULL past the end. */
const char *
rt_feature_mount_option (size_t i)
{
  if (i < ARRAY_SIZE (mount_opts))
    return mount_opts[i].name;
  i -= ARRAY_SIZE (mount_opts);
  if (i < ARRAY_SIZE (propagations))
    return propagations[i].name;
  i -= ARRAY_SIZE (propagations);
  return i == 0 ? "bind" : i == 1 ? "rbind" : NULL;
}
