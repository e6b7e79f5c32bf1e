/* Applies a layer tarball to a rootfs, safely.
 *
 * Every name is cleaned first (absolute names and ".." are refused, naming
 * the entry).  The parent directory of every entry is then opened with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) from the rootfs fd, so a
 * symlink planted by an earlier entry or layer resolves inside the rootfs
 * as it would in the container, never on the host.  The last component is
 * always created with O_EXCL/O_NOFOLLOW (or *at calls that do not follow),
 * after removing whatever was there.  Hardlink targets are resolved the
 * same way and never followed.  Bytes written are bounded (bomb guard). */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

struct dir_time
{
  char *path;
  struct timespec ts[2];
};

struct unpacker
{
  int rootfd;
  bool root;
  bool devices;                 /* IMG_UNPACK_DEVICES */
  uid_t euid;
  gid_t egid;
  /* The rootfs was empty when this layer started: nothing below it for
   * whiteouts to hide, nothing in the way of what it creates. */
  bool first;
  mode_t umask;                 /* the process umask, or 07777 when unknown */
  const char *what;
  char *cpath;                  /* cached parent: path and O_PATH fd, */
  int cfd;
  gid_t cgid;                   /* the group a file created in it gets */
  struct dir_time *dirs;
  size_t ndirs, cap_dirs;
  uint64_t written, limit;
  struct img_unpack_stats *st;
  uint64_t *inos;               /* open-addressing set: inodes this layer made */
  size_t inos_cap, inos_len;
};

/* An opaque marker hides what the lower layers put in its directory, not
 * what this layer already wrote there, so the layer's own inodes are
 * remembered. */
static void
ino_add (struct unpacker *u, uint64_t ino)
{
  size_t i;
  if (ino == 0)
    return;
  if (2 * (u->inos_len + 1) > u->inos_cap)
    {
      uint64_t *old = u->inos;
      size_t oc = u->inos_cap;
      u->inos_cap = oc ? 2 * oc : 1024;
      u->inos = xcalloc (u->inos_cap, sizeof *u->inos);
      u->inos_len = 0;
      for (size_t k = 0; k < oc; k++)
        if (old[k])
          ino_add (u, old[k]);
      free (old);
    }
  for (i = (ino * 0x9E3779B97F4A7C15ull) & (u->inos_cap - 1); u->inos[i];
       i = (i + 1) & (u->inos_cap - 1))
    if (u->inos[i] == ino)
      return;
  u->inos[i] = ino;
  u->inos_len++;
}

static bool
ino_has (const struct unpacker *u, uint64_t ino)
{
  if (u->inos_cap == 0 || ino == 0)
    return false;
  for (size_t i = (ino * 0x9E3779B97F4A7C15ull) & (u->inos_cap - 1); u->inos[i];
       i = (i + 1) & (u->inos_cap - 1))
    if (u->inos[i] == ino)
      return true;
  return false;
}

int
img_clean_path (const char *path, char **out)
{
  size_t n = strlen (path);
  char *r, *w;
  const char *p = path;

  if (*path == '/' || n >= PATH_MAX)
    return -1;
  r = w = xmalloc (n + 1);
  while (*p)
    {
      const char *e = strchrnul (p, '/');
      size_t l = e - p;
      if (l == 2 && p[0] == '.' && p[1] == '.')
        {
          free (r);
          return -1;
        }
      if (l > 0 && !(l == 1 && p[0] == '.'))
        {
          if (w != r)
            *w++ = '/';
          memcpy (w, p, l);
          w += l;
        }
      p = *e ? e + 1 : e;
    }
  *w = '\0';
  *out = r;
  return 0;
}

static int
open_in_root (int rootfd, const char *path, int flags)
{
  return cm_openat2 (rootfd, *path ? path : ".", flags,
                     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static void
cache_drop (struct unpacker *u)
{
  free (u->cpath);
  u->cpath = NULL;
  if (u->cfd >= 0)
    close (u->cfd);
  u->cfd = -1;
}

static int
fail (struct unpacker *u, struct cm_err **err, int errno_, const char *entry,
      const char *msg)
{
  return cm_err_set (err, errno_, "%s: entry `%s`: %s", u->what, entry, msg);
}

/* Returns a borrowed O_PATH fd of directory |dir| (inside the rootfs),
 * creating missing components (mode 0755). */
static int
open_parent (struct unpacker *u, const char *dir, const char *entry,
             struct cm_err **err)
{
  struct stat s;
  int fd;
  if (u->cpath && strcmp (u->cpath, dir) == 0)
    return u->cfd;
  fd = open_in_root (u->rootfd, dir, O_PATH | O_DIRECTORY);
  if (fd < 0 && errno == ENOENT)
    {
      _cleanup_free_ char *prefix = xstrdup (dir);
      for (char *p = prefix;; p++)
        {
          if (*p == '/' || *p == '\0')
            {
              char save = *p, *slash;
              _cleanup_fd_ int pfd = -1;
              *p = '\0';
              slash = strrchr (prefix, '/');
              if (slash)
                *slash = '\0';
              pfd = open_in_root (u->rootfd, slash ? prefix : "", O_PATH | O_DIRECTORY);
              if (slash)
                *slash = '/';
              if (pfd < 0)
                return fail (u, err, errno, entry, "open parent directory");
              if (mkdirat (pfd, slash ? slash + 1 : prefix, 0755) < 0 && errno != EEXIST)
                return fail (u, err, errno, entry, "create parent directory");
              *p = save;
              if (save == '\0')
                break;
            }
        }
      fd = open_in_root (u->rootfd, dir, O_PATH | O_DIRECTORY);
    }
  if (fd < 0)
    return fail (u, err, errno, entry, "open parent directory");
  if (fstat (fd, &s) < 0)
    {
      int e = errno;
      close (fd);
      return fail (u, err, e, entry, "stat parent directory");
    }
  cache_drop (u);
  u->cpath = xstrdup (dir);
  u->cfd = fd;
  /* A set-group-ID directory hands its group down (ext4, xfs, tmpfs). */
  u->cgid = (s.st_mode & S_ISGID) ? s.st_gid : u->egid;
  return fd;
}

/* Clears the way for an entry whose creation met EEXIST: a directory in
 * the way goes whole, anything else is unlinked (a directory entry meets
 * this only when the name is not a directory: make_dir keeps one). */
static int
remove_existing (struct unpacker *u, int pfd, const char *base, const char *entry,
                 struct cm_err **err)
{
  struct stat s;
  if (fstatat (pfd, base, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : fail (u, err, errno, entry, "stat");
  if (S_ISDIR (s.st_mode))
    return cm_rm_rf_at (pfd, base, err) < 0 ? cm_err_wrap (err, "%s: entry `%s`", u->what, entry) : 0;
  if (unlinkat (pfd, base, 0) < 0 && errno != ENOENT)
    return fail (u, err, errno, entry, "remove existing");
  return 0;
}

/* Whiteouts hide what the layers *below* put there (image-spec
 * layer.md), never what this layer itself created, whatever the order
 * of the entries: so nothing to do in a first layer, and what this
 * layer made is skipped (by inode) in the others. */
static int
whiteout (struct unpacker *u, const char *parent, const char *base,
          const char *entry, struct cm_err **err)
{
  _cleanup_fd_ int pfd = -1;
  const char *target = base + 4;
  struct stat s;

  if (strcmp (target, ".wh..opq") != 0 && cm_startswith (target, ".wh."))
    return 0;                   /* other AUFS metadata (.wh..wh.plnk) */
  if (*target == '\0' || strcmp (target, ".") == 0 || strcmp (target, "..") == 0)
    return fail (u, err, 0, entry, "invalid whiteout name");
  if (u->first)
    return 0;
  cache_drop (u);               /* it may be about to go */
  pfd = open_in_root (u->rootfd, parent, O_PATH | O_DIRECTORY);
  if (pfd < 0)
    return errno == ENOENT ? 0 : fail (u, err, errno, entry, "open whiteout directory");
  if (strcmp (target, ".wh..opq") == 0)
    {
      int dfd = openat (pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
      struct dirent *de;
      int ret = 0;
      if (d == NULL)
        {
          int e = errno;
          if (dfd >= 0)
            close (dfd);
          return fail (u, err, e, entry, "open opaque directory");
        }
      while (ret == 0 && (de = readdir (d)))
        if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
            && !ino_has (u, de->d_ino))
          ret = cm_rm_rf_at (dirfd (d), de->d_name, err);
      closedir (d);
      return ret < 0 ? cm_err_wrap (err, "%s: entry `%s`", u->what, entry) : 0;
    }
  if (fstatat (pfd, target, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : fail (u, err, errno, entry, "stat whiteout target");
  if (ino_has (u, (uint64_t) s.st_ino))
    return 0;
  if (cm_rm_rf_at (pfd, target, err) < 0)
    return cm_err_wrap (err, "%s: entry `%s`", u->what, entry);
  return 0;
}

static int
charge (struct unpacker *u, uint64_t n, const char *entry, struct cm_err **err)
{
  u->written += n;
  if (u->written > u->limit)
    return fail (u, err, EFBIG, entry,
                 "the image unpacks to more than its budget allows (a decompression "
                 "bomb?); if the image is legitimate, raise the limit with "
                 "--max-unpacked-size");
  return 0;
}

static void
set_xattrs (struct unpacker *u, struct archive_entry *e, int fd)
{
  const char *name;
  const void *val;
  size_t size;
  archive_entry_xattr_reset (e);
  while (archive_entry_xattr_next (e, &name, &val, &size) == ARCHIVE_OK)
    {
      if (!u->root && !cm_startswith (name, "user."))
        continue;
      /* Best effort, as tar does: a file system without xattrs still gets
       * the file. */
      (void) fsetxattr (fd, name, val, size, 0);
    }
}

/* The mode an entry ends with: its own, plus owner access when not root
 * (the cache must stay readable and removable by its owner). */
static mode_t
final_mode (const struct unpacker *u, struct archive_entry *e, bool dir)
{
  mode_t mode = archive_entry_perm (e);
  if (!u->root)
    mode |= dir ? S_IRWXU : S_IRUSR | S_IWUSR;
  return mode;
}

/* Creation in the cached parent already gave the entry its owner: the
 * creator's uid, and the egid or a set-group-ID parent's group. */
static bool
owner_as_created (const struct unpacker *u, struct archive_entry *e)
{
  return archive_entry_uid (e) == (la_int64_t) u->euid
         && archive_entry_gid (e) == (la_int64_t) u->cgid;
}

/* Owner, mode and xattrs of |fd|.  |created| says that this call made it
 * with final_mode() & 0777 in the cached parent: then the owner (the
 * creator's, with the parent's group rule) and the permission bits (less
 * the umask) are known, and the chown / chmod calls are made only when
 * they would change something -- two system calls per file saved on the
 * common case (root, uid/gid 0, no umask bits in the way). */
static int
set_meta_fd (struct unpacker *u, struct archive_entry *e, int fd, bool dir,
             bool created, const char *entry, struct cm_err **err)
{
  mode_t mode = final_mode (u, e, dir);
  bool chowned = false;
  if (u->root && !(created && owner_as_created (u, e)))
    {
      if (fchown (fd, archive_entry_uid (e), archive_entry_gid (e)) < 0)
        return fail (u, err, errno, entry, "chown");
      chowned = true;
    }
  /* chown clears set-ID bits, so they are set after it. */
  if (!created || chowned || (mode & 07000) || (mode & u->umask))
    if (fchmod (fd, mode) < 0)
      return fail (u, err, errno, entry, "chmod");
  set_xattrs (u, e, fd);
  return 0;
}

static struct timespec
entry_mtime (struct archive_entry *e)
{
  struct timespec t = { archive_entry_mtime (e), archive_entry_mtime_nsec (e) };
  return t;
}

/* Creates and fills a regular file.  Returns 1, having created nothing,
 * when the name is taken. */
static int
write_file (struct unpacker *u, struct archive *a, struct archive_entry *e,
            int pfd, const char *base, const char *entry, struct cm_err **err)
{
  _cleanup_fd_ int fd = openat (pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                final_mode (u, e, false) & 0777);
  const void *buf;
  size_t size;
  la_int64_t off;
  int r;
  int64_t total = archive_entry_size (e);
  uint64_t end = 0;
  struct timespec ts[2];

  if (fd < 0)
    return errno == EEXIST ? 1 : fail (u, err, errno, entry, "create");
  if (charge (u, total > 0 ? (uint64_t) total : 0, entry, err) < 0)
    return -1;
  while ((r = archive_read_data_block (a, &buf, &size, &off)) == ARCHIVE_OK)
    {
      if (off < 0 || (uint64_t) off + size > (uint64_t) (total > 0 ? total : 0))
        return fail (u, err, 0, entry, "data past the declared size");
      for (size_t w = 0; w < size;)
        {
          ssize_t n = pwrite (fd, (const char *) buf + w, size - w, off + (off_t) w);
          if (n < 0)
            {
              if (errno == EINTR)
                continue;
              return fail (u, err, errno, entry, "write");
            }
          w += (size_t) n;
        }
      if ((uint64_t) off + size > end)
        end = (uint64_t) off + size;
    }
  if (r != ARCHIVE_EOF)
    return fail (u, err, archive_errno (a) > 0 ? archive_errno (a) : 0, entry,
                 archive_error_string (a) ? archive_error_string (a) : "read data");
  if (total > 0 && end < (uint64_t) total && ftruncate (fd, total) < 0)  /* sparse tail */
    return fail (u, err, errno, entry, "truncate");
  if (set_meta_fd (u, e, fd, false, true, entry, err) < 0)
    return -1;
  ts[0] = ts[1] = entry_mtime (e);
  (void) futimens (fd, ts);
  u->st->files++;
  return 0;
}

/* Returns 1 when |base| exists and is not a directory (to be removed). */
static int
make_dir (struct unpacker *u, struct archive_entry *e, int pfd, const char *base,
          const char *rel, struct cm_err **err)
{
  _cleanup_fd_ int fd = -1;
  struct dir_time *dt;
  bool created = true;
  if (mkdirat (pfd, base, final_mode (u, e, true) & 0777) < 0)
    {
      if (errno != EEXIST)
        return fail (u, err, errno, rel, "mkdir");
      created = false;
    }
  fd = openat (pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      if (!created && (errno == ENOTDIR || errno == ELOOP))
        return 1;
      return fail (u, err, errno, rel, "open directory");
    }
  if (set_meta_fd (u, e, fd, true, created, rel, err) < 0)
    return -1;
  if (u->ndirs == u->cap_dirs)
    {
      u->cap_dirs = u->cap_dirs ? 2 * u->cap_dirs : 64;
      u->dirs = xrealloc (u->dirs, u->cap_dirs * sizeof *u->dirs);
    }
  dt = &u->dirs[u->ndirs++];
  dt->path = xstrdup (rel);
  dt->ts[0] = dt->ts[1] = entry_mtime (e);
  return 0;
}

/* Returns 1 when the name is taken. */
static int
make_hardlink (struct unpacker *u, const char *target, int pfd,
               const char *base, const char *entry, struct cm_err **err)
{
  _cleanup_free_ char *t = NULL;
  _cleanup_fd_ int tpfd = -1, tfd = -1;
  char *slash, proc[64];
  struct stat s;

  if (img_clean_path (target, &t) < 0 || *t == '\0')
    return fail (u, err, 0, entry, "hardlink target escapes the rootfs");
  slash = strrchr (t, '/');
  if (slash)
    *slash = '\0';
  tpfd = open_in_root (u->rootfd, slash ? t : "", O_PATH | O_DIRECTORY);
  if (tpfd < 0)
    return fail (u, err, errno, entry, "open hardlink target directory");
  tfd = openat (tpfd, slash ? slash + 1 : t, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (tfd < 0 || fstat (tfd, &s) < 0)
    return fail (u, err, errno, entry, "open hardlink target");
  if (S_ISDIR (s.st_mode))
    return fail (u, err, 0, entry, "hardlink to a directory");
  if (linkat (tfd, "", pfd, base, AT_EMPTY_PATH) == 0)
    return 0;
  if (errno == EEXIST)
    return 1;
  /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc link does not. */
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", tfd);
  if (linkat (AT_FDCWD, proc, pfd, base, AT_SYMLINK_FOLLOW) < 0)
    return errno == EEXIST ? 1 : fail (u, err, errno, entry, "link");
  return 0;
}

/* Returns 1 when the name is taken. */
static int
make_symlink (struct unpacker *u, struct archive_entry *e, int pfd, const char *base,
              const char *name, struct cm_err **err)
{
  const char *target = archive_entry_symlink (e);
  struct timespec ts[2];
  if (target == NULL)
    return fail (u, err, 0, name, "symlink without a target");
  if (symlinkat (target, pfd, base) < 0)
    return errno == EEXIST ? 1 : fail (u, err, errno, name, "symlink");
  if (u->root && !owner_as_created (u, e)
      && fchownat (pfd, base, archive_entry_uid (e), archive_entry_gid (e),
                   AT_SYMLINK_NOFOLLOW) < 0)
    return fail (u, err, errno, name, "chown symlink");
  ts[0] = ts[1] = entry_mtime (e);
  (void) utimensat (pfd, base, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* FIFOs always; char and block devices only as root with
 * IMG_UNPACK_DEVICES, and then owned by root with at most 0600: a layer's
 * `b 8:0` at 0666 would otherwise hand the host's disk to every user of
 * the cache (and of a bundle copied from it).  Returns 1 when the name is
 * taken. */
static int
make_node (struct unpacker *u, struct archive_entry *e, mode_t type, int pfd,
           const char *base, const char *name, struct cm_err **err)
{
  bool dev = type != AE_IFIFO;
  mode_t perm = archive_entry_perm (e);
  struct timespec ts[2];
  if (dev && !(u->root && u->devices))
    {
      u->st->devices_skipped++;
      return 0;
    }
  if (dev)
    perm &= 0600;
  if (mknodat (pfd, base, type | (perm & 0777), archive_entry_rdev (e)) < 0)
    return errno == EEXIST ? 1 : fail (u, err, errno, name, "mknod");
  if (u->root && !dev && fchownat (pfd, base, archive_entry_uid (e), archive_entry_gid (e),
                                   AT_SYMLINK_NOFOLLOW) < 0)
    return fail (u, err, errno, name, "chown node");
  /* The permission bits, exactly (mknod applied the umask). */
  if (fchmodat (pfd, base, perm, 0) < 0)
    return fail (u, err, errno, name, "chmod node");
  ts[0] = ts[1] = entry_mtime (e);
  (void) utimensat (pfd, base, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* Creates the entry in |pfd|; 1 when its name is taken (nothing made). */
static int
create_entry (struct unpacker *u, struct archive *a, struct archive_entry *e,
              int pfd, const char *base, const char *rel, const char *name,
              struct cm_err **err)
{
  const char *hl = archive_entry_hardlink (e);
  mode_t type = archive_entry_filetype (e);
  if (hl)
    return make_hardlink (u, hl, pfd, base, name, err);
  switch (type)
    {
    case AE_IFREG:
      return write_file (u, a, e, pfd, base, name, err);
    case AE_IFDIR:
      return make_dir (u, e, pfd, base, rel, err);
    case AE_IFLNK:
      return make_symlink (u, e, pfd, base, name, err);
    case AE_IFCHR:
    case AE_IFBLK:
    case AE_IFIFO:
      return make_node (u, e, type, pfd, base, name, err);
    default:
      return 0;                 /* sockets: nothing to create */
    }
}

/* Applies one entry.  Creation is tried first: the name is usually free
 * (always, in a first layer), and what is in the way is removed only
 * when EEXIST says so. */
static int
apply_entry (struct unpacker *u, struct archive *a, struct archive_entry *e,
             struct cm_err **err)
{
  const char *name = archive_entry_pathname (e);
  _cleanup_free_ char *rel = NULL;
  char *slash;
  const char *base, *dir;
  int pfd, r;
  struct stat s;

  if (name == NULL)
    return cm_err_set (err, 0, "%s: entry without a name", u->what);
  if (img_clean_path (name, &rel) < 0)
    return fail (u, err, 0, name, "path escapes the rootfs (absolute or `..`)");
  if (*rel == '\0')
    return 0;                   /* "./" itself: the rootfs keeps its mode */
  slash = strrchr (rel, '/');
  base = slash ? slash + 1 : rel;
  if (cm_startswith (base, ".wh."))
    {
      if (slash)
        *slash = '\0';
      return whiteout (u, slash ? rel : "", base, name, err);
    }
  /* |dir| is the parent's path: a copy, as |rel| stays whole for
   * make_dir. */
  _cleanup_free_ char *parent = slash ? xasprintf ("%.*s", (int) (slash - rel), rel) : NULL;
  dir = parent ? parent : "";
  pfd = open_parent (u, dir, name, err);
  if (pfd < 0)
    return -1;
  r = create_entry (u, a, e, pfd, base, rel, name, err);
  if (r == 1)
    {
      if (remove_existing (u, pfd, base, name, err) < 0)
        return -1;
      r = create_entry (u, a, e, pfd, base, rel, name, err);
      if (r == 1)
        return fail (u, err, EEXIST, name, "created concurrently");
    }
  if (r < 0)
    return -1;
  /* Remembered for later whiteouts of this same layer; a first layer has
   * none that act. */
  if (!u->first && fstatat (pfd, base, &s, AT_SYMLINK_NOFOLLOW) == 0)
    ino_add (u, (uint64_t) s.st_ino);
  return 0;
}

/* libarchive reads plain tar from the decompressor (image/decomp.c),
 * and each block is hashed on the way: the diff_id is the sha256 of the
 * layer *uncompressed*, taken without a second pass.
 *
 * A compressed layer is decompressed and hashed on a thread of its own,
 * a few blocks ahead of the tar reader, so that inflate and SHA-256 (user
 * time) overlap the file creation and writes (kernel time) instead of
 * taking turns: on a 190 MB layer of 12.6k files that is most of the
 * inflate time off the wall clock.  A plain tar is read inline: there is
 * nothing to overlap but the hash, and its blocks are the download's own
 * buffers. */
#define RING 4
/* Below this compressed size the thread, its hand-offs and its ring cost
 * more than they overlap: a 1 MB busybox layer took ~3 ms more CPU and
 * ~1 ms more wall threaded; a 37 MB one 27 % less wall. */
#define PIPE_MIN (8u << 20)

struct read_ctx
{
  struct img_decomp *dec;
  struct img_hash h;
  bool hash;
  bool threaded;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint8_t *ring[RING];
  size_t len[RING];
  unsigned produced, released;  /* blocks; the reader holds one at most */
  bool holding, eof, failed, stop;
};

static void *
producer (void *arg)
{
  struct read_ctx *c = arg;
  for (;;)
    {
      unsigned slot;
      ssize_t n;
      pthread_mutex_lock (&c->mu);
      while (c->produced - c->released == RING && !c->stop)
        pthread_cond_wait (&c->cv, &c->mu);
      slot = c->produced % RING;
      if (c->stop)
        {
          pthread_mutex_unlock (&c->mu);
          return NULL;
        }
      pthread_mutex_unlock (&c->mu);
      n = img_decomp_read_into (c->dec, c->ring[slot]);
      if (n > 0 && c->hash)
        img_hash_update (&c->h, c->ring[slot], (size_t) n);
      pthread_mutex_lock (&c->mu);
      if (n > 0)
        {
          c->len[slot] = (size_t) n;
          c->produced++;
        }
      else
        {
          c->eof = true;
          c->failed = n < 0;
        }
      pthread_cond_broadcast (&c->cv);
      pthread_mutex_unlock (&c->mu);
      if (n <= 0)
        return NULL;
    }
}

/* The next block of the uncompressed stream: > 0 bytes, 0 at the end,
 * < 0 on an error (img_decomp_error). */
static ssize_t
next_block (struct read_ctx *c, const void **buf)
{
  ssize_t n;
  if (!c->threaded)
    {
      n = img_decomp_read (c->dec, buf);
      if (n > 0 && c->hash)
        img_hash_update (&c->h, *buf, (size_t) n);
      return n;
    }
  pthread_mutex_lock (&c->mu);
  if (c->holding)
    {
      c->released++;
      c->holding = false;
      pthread_cond_broadcast (&c->cv);
    }
  while (c->released == c->produced && !c->eof)
    pthread_cond_wait (&c->cv, &c->mu);
  if (c->released != c->produced)
    {
      unsigned slot = c->released % RING;
      *buf = c->ring[slot];
      n = (ssize_t) c->len[slot];
      c->holding = true;
    }
  else
    n = c->failed ? -1 : 0;
  pthread_mutex_unlock (&c->mu);
  return n;
}

static void
reader_start (struct read_ctx *c, uint64_t size_hint)
{
  if (!img_decomp_compressed (c->dec) || size_hint < PIPE_MIN)
    return;
  pthread_mutex_init (&c->mu, NULL);
  pthread_cond_init (&c->cv, NULL);
  for (int i = 0; i < RING; i++)
    c->ring[i] = xmalloc (IMG_DECOMP_BLOCK);
  c->threaded = pthread_create (&c->th, NULL, producer, c) == 0;
  if (!c->threaded)
    {
      for (int i = 0; i < RING; i++)
        free (c->ring[i]);
      pthread_cond_destroy (&c->cv);
      pthread_mutex_destroy (&c->mu);
    }
}

/* Stops and joins the producer (it finishes the block in hand). */
static void
reader_stop (struct read_ctx *c)
{
  if (!c->threaded)
    return;
  pthread_mutex_lock (&c->mu);
  c->stop = true;
  pthread_cond_broadcast (&c->cv);
  pthread_mutex_unlock (&c->mu);
  pthread_join (c->th, NULL);
  for (int i = 0; i < RING; i++)
    free (c->ring[i]);
  pthread_cond_destroy (&c->cv);
  pthread_mutex_destroy (&c->mu);
  c->threaded = false;
}

static la_ssize_t
read_cb (struct archive *a, void *data, const void **buf)
{
  struct read_ctx *c = data;
  ssize_t n = next_block (c, buf);
  if (n < 0)
    {
      archive_set_error (a, EIO, "%s", img_decomp_error (c->dec));
      return -1;
    }
  return n;
}

/* Bytes allowed after the tar's end: writers pad to a 10 KiB record; a
 * compressed stream of zeros must not make us hash without bound. */
#define TRAILER_MAX (64u << 20)

/* zstd:chunked layers written by older containers/storage (2023) end after
 * the last entry's data (libarchive accepts a tar that stops on a block
 * boundary), while the config's diff_id hashes the tar with its
 * end-of-archive padding.  Padding is zeros the tar reader never uses, so
 * the digests of the stream with the usual paddings appended identify
 * the same tree: Go's archive/tar writes 1024 bytes, GNU tar and
 * tar-split fill a 10 KiB record. */
static void
padded_ids (struct read_ctx *c, struct img_diff_id *d)
{
  uint64_t n = c->h.n, rec = (10240 - n % 10240) % 10240;
  uint64_t pads[IMG_PAD_IDS] = { 1024, rec, rec + 10240 };
  memset (d->padded, 0, sizeof d->padded);
  if (n % 512 != 0)
    return;
  for (int i = 0; i < IMG_PAD_IDS; i++)
    if ((i != 1 || (rec > 0 && rec != 1024)) && (i != 2 || rec < 1024))
      img_hash_padded (&c->h, (size_t) pads[i], d->padded[i]);
}

bool
img_diff_id_matches (const struct img_diff_id *d, const char *want)
{
  if (strcmp (d->exact, want) == 0)
    return true;
  for (int i = 0; i < IMG_PAD_IDS; i++)
    if (d->padded[i][0] && strcmp (d->padded[i], want) == 0)
      return true;
  return false;
}

/* Hashes what the tar reader left (the end-of-archive padding and anything
 * after it) and writes the digests. */
static int
hash_finish (struct read_ctx *c, struct img_diff_id *diff_id, const char *what,
             struct cm_err **err)
{
  const void *buf;
  ssize_t n;
  uint64_t trailer = 0;
  while ((n = next_block (c, &buf)) > 0)
    if ((trailer += (uint64_t) n) > TRAILER_MAX)
      return cm_err_set (err, 0, "%s: more than %u MiB after the end of the tar",
                         what, TRAILER_MAX >> 20);
  if (n < 0)
    return cm_err_set (err, 0, "%s: %s", what, img_decomp_error (c->dec));
  reader_stop (c);
  padded_ids (c, diff_id);
  img_hash_final (&c->h, diff_id->exact);
  c->hash = false;
  return 0;
}

static bool
dir_is_empty (int dirfd)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  bool empty = d != NULL;
  if (d == NULL && fd >= 0)
    close (fd);
  while (d && (de = readdir (d)))
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        empty = false;
        break;
      }
  if (d)
    closedir (d);
  return empty;
}

/* The umask, read without changing it (umask(2) would, for a moment, for
 * every thread); 07777 -- "always chmod" -- when /proc cannot say. */
static mode_t
process_umask (void)
{
  _cleanup_free_ char *st = NULL;
  const char *p;
  unsigned long m;
  char *end;
  struct cm_err *e = NULL;
  if (cm_read_file_at (AT_FDCWD, "/proc/self/status", 1 << 16, &st, NULL, &e) < 0
      || (p = strstr (st, "\nUmask:")) == NULL)
    {
      cm_err_free (&e);
      return 07777;
    }
  m = strtoul (p + 7, &end, 8);
  return end == p + 7 ? 07777 : (mode_t) (m & 0777);
}

/* Directory times last: creating children moved them. */
static void
fix_dir_times (struct unpacker *u)
{
  for (size_t i = u->ndirs; i-- > 0;)
    {
      int fd = open_in_root (u->rootfd, u->dirs[i].path, O_RDONLY | O_DIRECTORY);
      if (fd >= 0)
        {
          (void) futimens (fd, u->dirs[i].ts);
          close (fd);
        }
      free (u->dirs[i].path);
    }
  free (u->dirs);
}

int
img_unpack_layer (int rootfd, img_read_fn rd, void *rd_data, uint64_t size_hint,
                  uint64_t limit, unsigned flags, const char *what,
                  struct img_diff_id *diff_id, struct img_unpack_stats *st,
                  struct cm_err **err)
{
  struct unpacker u = { .rootfd = rootfd, .euid = geteuid (), .egid = getegid (), .what = what,
                        .cfd = -1, .limit = limit, .st = st,
                        .devices = (flags & IMG_UNPACK_DEVICES) != 0 };
  struct read_ctx rc = { .hash = diff_id != NULL };
  struct archive *a;
  struct archive_entry *e;
  uint64_t entries = 0;
  int r, ret = 0;

  /* libarchive (~3 ms to load, the first time) and ISA-L are loaded
   * before the first read, which waits for the layer's first bytes. */
  a = archive_read_new ();
  (void) img_dl_try (IMG_LIB_ISAL);
  img_trace ("libarchive ready");
  if (img_decomp_open (&rc.dec, rd, rd_data, what, err) < 0)
    {
      archive_read_free (a);
      return -1;
    }
  img_trace ("layer: first bytes in");
  u.root = u.euid == 0;
  u.first = dir_is_empty (rootfd);
  u.umask = process_umask ();
  if (rc.hash)
    img_hash_init (&rc.h);
  reader_start (&rc, size_hint);
  archive_read_support_format_tar (a);
  archive_read_support_format_empty (a);
  if (archive_read_open (a, &rc, NULL, read_cb, NULL) != ARCHIVE_OK)
    ret = cm_err_set (err, 0, "%s: %s", what, archive_error_string (a));
  while (ret == 0 && (r = archive_read_next_header (a, &e)) != ARCHIVE_EOF)
    {
      if (r < ARCHIVE_WARN)
        {
          ret = cm_err_set (err, 0, "%s: %s", what,
                            archive_error_string (a) ? archive_error_string (a) : "bad tar");
          break;
        }
      ret = charge (&u, 512, archive_entry_pathname (e), err);
      if (ret == 0)
        ret = apply_entry (&u, a, e, err);
      if (ret == 0 && st->tick)
        st->tick (st->tick_data, ++entries, u.written);
    }
  img_trace ("layer: entries applied");
  if (ret == 0 && diff_id)
    ret = hash_finish (&rc, diff_id, what, err);
  reader_stop (&rc);
  cache_drop (&u);
  fix_dir_times (&u);
  free (u.inos);
  st->bytes += u.written;
  archive_read_free (a);
  img_decomp_free (rc.dec);
  if (rc.hash)
    img_hash_dispose (&rc.h);
  return ret;
}
