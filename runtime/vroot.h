/* The namespace-less virtual root (issue 15, docs/nsless.md): a mount table
 * of pinned directory fds and a path resolver that walks a container path
 * through it, component by component, in user space.
 *
 * Nothing here ever resolves a host path string on the container's behalf:
 * every entry is an O_PATH fd pinned when the table is built, every step of
 * a walk is one name (no '/') opened O_NOFOLLOW under the previous step's
 * fd, `..` is applied to the canonical virtual path (so it cannot climb past
 * "/" of the view, nor out of a mount source), symlinks are read and their
 * targets walked again inside the view, and every final access is an
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)
 * from the entry's pinned fd.  A race that swaps a component for a symlink
 * therefore fails (ELOOP) or stays inside the entry; Landlock stays the
 * boundary either way (docs/security.md).
 *
 * runtime/-private: oci/ never includes this file. */
#ifndef SANDLOCK_RUNTIME_VROOT_H
#define SANDLOCK_RUNTIME_VROOT_H

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct rt_config;

enum vr_kind
{
  VR_ROOT,                      /* root.path */
  VR_BIND,                      /* a bind mount: the host source */
  VR_TMPFS,                     /* a private directory standing for a tmpfs */
  VR_PROC,                      /* the host's /proc, filtered to the caller */
};

struct vr_entry
{
  char *dest;                   /* canonical virtual path; "/" for the root */
  size_t dest_len;
  char *host;                   /* canonical host path (Landlock grants, fd→view) */
  int fd;                       /* O_PATH, pinned for the table's life */
  bool dir;                     /* false: a file bind mount */
  bool ro;
  bool noexec;                  /* the mount's "noexec": no exec from it */
  bool ioctl;                   /* a bound char device the config allows:
                                   its ioctls granted (vr_ll_translate) */
  enum vr_kind kind;
};

struct vroot
{
  struct vr_entry *e;           /* e[0] is the root */
  size_t n;
  /* linux.maskedPaths / readonlyPaths, canonical in the view: a masked
   * path (and what is under it) does not exist; a read-only one refuses
   * writes.  Owned; vr_set_paths. */
  char **masked, **readonly;
  size_t nmasked, nreadonly;
};

/* One mount as the table builder takes it (oci/-free: runtime/ fills these
 * from struct rt_config, the unit tests directly). */
struct vr_mount_spec
{
  const char *dest;             /* absolute container path */
  const char *source;           /* host path (bind), private dir (tmpfs), "/proc" */
  enum vr_kind kind;
  bool ro;
  bool noexec;
};

/* Builds the table: |rootfs| then each mount in order.  A destination is
 * resolved inside the view built so far (a symlink in the image moves the
 * mount, never out of the view); missing mount points are created in the
 * entry that holds them, as runc does.  On failure nothing is left open. */
int vr_build (struct vroot *v, const char *rootfs, bool root_ro,
              const struct vr_mount_spec *m, size_t n, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));

/* The mounts of |c| as vr_mount_specs (borrowed strings; |tmpfs_dir| is the
 * private directory under which tmpfs mount i becomes "tmpfs-i", created
 * here).  Refuses a mount type the view cannot draw, naming mounts[i].
 * *out is malloc'd. */
int vr_specs_from_config (const struct rt_config *c, const char *tmpfs_dir,
                          struct vr_mount_spec **out, size_t *n,
                          char ***owned, struct cm_err **err);

/* A mount's type as the view takes it ("bind" when its options say so),
 * and whether the view leaves that type out (sysfs, cgroup, devpts,
 * mqueue: the destination stays the rootfs's own directory). */
struct rt_mount;
const char *vr_mount_type (const struct rt_mount *m);
bool vr_mount_left_out (const char *type);

void vr_free (struct vroot *v);

/* Sets the view's masked and read-only paths (container paths; each is
 * resolved in the view without following a last symlink; one that does
 * not exist is dropped: nothing to hide). */
void vr_set_paths (struct vroot *v, char *const *masked, size_t nmasked,
                   char *const *readonly, size_t nreadonly);

/* Creates the missing components of |dest| in the view (directories, and
 * the last one as an empty file when |file|), each from the pinned fd of
 * the directory holding it.  0 or -errno. */
int vr_make_point (const struct vroot *v, const char *dest, bool file);
#define vr_mkdir_p(v, dest) vr_make_point ((v), (dest), false)

/* The Landlock rights the container's domain gets on entry |e|'s host
 * object (granted beneath it): the mount's rights, nothing wider. */
uint64_t vr_landlock_access (const struct vr_entry *e);

/* The entry holding canonical virtual path |vpath| (longest prefix). */
const struct vr_entry *vr_entry_for (const struct vroot *v, const char *vpath);

/* Maps a canonical host path back into the view (longest host prefix);
 * -ENOENT when it is outside every entry. */
int vr_host_to_virtual (const struct vroot *v, const char *host,
                        char out[PATH_MAX]);

/* Rewrites the container's Landlock policy |p| (rt_ll_policy_build's, which
 * names container paths) for the view: one rule per entry on its host
 * path with vr_landlock_access's rights, and each fs_readable/fs_writable
 * annotation resolved in the view to the host object it names, no wider
 * than its entry; root, mount and device rules are dropped.  Marks the
 * bound char devices whose ioctls the policy grants (vr_entry.ioctl).  A fs_denied
 * that would need a mask (a mount) is refused, naming the annotation.
 * vroot-policy.c. */
struct rt_ll_policy;
int vr_ll_translate (struct vroot *v, struct rt_ll_policy *p,
                     struct cm_err **err);

/* The container's TCP rules, for the supervisor to obey on-behalf. */
struct vr_net
{
  bool tcp;                     /* the container's domain restricts TCP */
  uint64_t handled;             /* which of bind/connect (0: both) */
  const uint16_t *bind, *connect;
  size_t nbind, nconnect;
};

/* Confines the calling process (the supervisor) to the union of the
 * entries' grants, plus /proc and |exec_dir|'s symlinks, |net|'s TCP
 * ports (NULL: TCP not restricted, as for the container) and the
 * abstract-unix scope (vroot-landlock.c).  Sets no_new_privs. */
int vr_landlock_self (const struct vroot *v, int exec_dir,
                      const struct vr_net *net, struct cm_err **err);

/* A grant beyond the view's, for what a supervisor in a create needs
 * (/dev/null, the container's cgroup): |fd| an O_PATH fd, |what| for
 * errors. */
struct vr_ll_extra
{
  int fd;
  uint64_t access;
  const char *what;
};

/* vr_landlock_self plus |n| |extra| grants. */
int vr_landlock_self_with (const struct vroot *v, int exec_dir,
                           const struct vr_net *net,
                           const struct vr_ll_extra *extra, size_t n,
                           struct cm_err **err);

/* ---- resolution ---- */

#define VR_NOFOLLOW 1           /* do not follow a final symlink */
#define VR_CREATE 2             /* the final component may be missing */

/* Who is asking: /proc/self and /proc/thread-self are the caller, foreign
 * pids are refused, /proc/<pid>/{cwd,root,fd/N,exe} are drawn by |magic|. */
struct vr_ctx
{
  pid_t tgid, tid;
  const char *cwd;              /* canonical virtual cwd */
  bool (*pid_ok) (void *ud, pid_t pid);   /* NULL: only tgid */
  /* Replaces the magic link /proc/<pid>/<name> (name: "cwd", "root",
   * "exe", "fd/N") with a virtual absolute path, or returns -errno. */
  int (*magic) (void *ud, pid_t pid, const char *name, char out[PATH_MAX]);
  void *ud;
};

struct vr_path
{
  const struct vr_entry *ent;   /* NULL: the caller's own fd, below */
  pid_t fd_pid;                 /* /proc/<fd_pid>/fd/<fd_num> followed last */
  int fd_num;
  char vpath[PATH_MAX];         /* canonical virtual path */
  char rel[PATH_MAX];           /* under ent; "." for the entry itself */
  bool missing;                 /* VR_CREATE and the last component is absent */
  bool ro;                      /* under one of the view's read-only paths */
  mode_t type;                  /* S_IFMT of the object; 0 when missing */
};

/* Resolves |path| (absolute, or relative to the virtual directory |base|,
 * canonical) in the view.  0, or -errno (ENOENT, ENOTDIR, ELOOP,
 * ENAMETOOLONG, EACCES for a refused /proc path). */
/* A /proc pid name: one or more decimal digits and nothing else. */
bool vr_all_digits (const char *s);
int vr_resolve (const struct vroot *v, const struct vr_ctx *ctx,
                const char *base, const char *path, int flags,
                struct vr_path *out) __attribute__ ((nonnull (1, 2, 3, 4, 6)));

/* Opens the resolved object from its entry's pinned fd with |oflags|
 * (O_NOFOLLOW added; EROFS for a write into a read-only entry).  Returns
 * the fd (O_CLOEXEC in the caller's process) or -errno. */
int vr_open (const struct vr_path *p, int oflags, mode_t mode);

/* An O_PATH|O_DIRECTORY fd of the directory holding the resolved object,
 * and its last name in |name| (for the *at() write family and lstat).
 * For an entry root (a mount point) returns -EBUSY. */
int vr_open_parent (const struct vroot *v, const struct vr_path *p,
                    char name[NAME_MAX + 1]);

/* O_CREAT, or O_TMPFILE — whose glibc spelling __O_TMPFILE includes
 * O_DIRECTORY, so it is tested whole: every directory open is not one. */
static inline bool
vr_creates (int oflags)
{
  return (oflags & O_CREAT) || (oflags & O_TMPFILE) == O_TMPFILE;
}

/* Device nodes in the view are the host's own inodes (the /dev defaults
 * are bound from the host, and the rootfs is a host directory): their
 * mode, owner, times and xattrs are never changed on the container's
 * behalf — a namespaced container changes only its private copies.  True
 * when |fd| (opened on the resolved object) is a char or block device. */
bool vr_host_node (int fd);

/* True when a write to the resolved object must be refused (EROFS). */
static inline bool
vr_readonly (const struct vr_path *p)
{
  return p->ent->ro || p->ro;
}

#endif
