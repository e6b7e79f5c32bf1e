/* The contents of the tree's tmpfs mounts, which vanish with it: each
 * mount point the caller names that /proc/PID/mountinfo of the root
 * process shows as a tmpfs (the container's config names them: a bind
 * of the host's tmpfs or a masked path is not the container's), walked
 * from the caller's root (the process's own: dump.c chroots into /proc/PID/root)
 * into tmpfs.img.  The container is hostile and other processes of it
 * (an `exec`) may still run: the walk follows no symlink (every component
 * opened O_NOFOLLOW, from a directory fd), stays on the mount's device,
 * and takes only directories, regular files, symlinks (as their target
 * text) and FIFOs.  Device nodes are the runtime's, sockets come back
 * with their listener; both are left out. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/internal.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#define MAX_DEPTH 128

struct out
{
  int fd;
  uint64_t len;
  dev_t dev;
};

static int
put (struct out *o, const void *p, size_t n, struct cm_err **err)
{
  if (n && cm_write_all (o->fd, p, n) != (ssize_t) n)
    return cm_err_set (err, errno, "tmpfs.img: write");
  o->len += n;
  return 0;
}

static int
pad8 (struct out *o, struct cm_err **err)
{
  static const char zero[8];
  return put (o, zero, (8 - o->len % 8) % 8, err);
}

static int
copy_file (struct out *o, int fd, uint64_t size, const char *name,
           struct cm_err **err)
{
  char buf[65536];
  uint64_t done = 0;
  while (done < size)
    {
      size_t want = size - done < sizeof buf ? (size_t) (size - done) : sizeof buf;
      ssize_t n = read (fd, buf, want);
      if (n <= 0)
        return cm_err_set (err, n < 0 ? errno : 0, "tmpfs: `%s` changed while "
                           "it was saved", name);
      if (put (o, buf, (size_t) n, err) < 0)
        return -1;
      done += (uint64_t) n;
    }
  return 0;
}

static int
entry (struct out *o, const struct stat *st, uint32_t type, const char *name,
       const void *data, uint64_t dlen, int fd, struct cm_err **err)
{
  struct cl_tmpfs_ent e = {
    .type = type, .mode = st->st_mode & 07777, .uid = st->st_uid,
    .gid = st->st_gid, .mtime_sec = st->st_mtim.tv_sec,
    .mtime_nsec = (uint32_t) st->st_mtim.tv_nsec,
    .name_len = (uint32_t) strlen (name), .data_len = dlen,
  };
  if (put (o, &e, sizeof e, err) < 0 || put (o, name, e.name_len, err) < 0)
    return -1;
  if (fd >= 0 ? copy_file (o, fd, dlen, name, err) < 0 : put (o, data, dlen, err) < 0)
    return -1;
  return pad8 (o, err);
}

static int walk (struct out *o, int dfd, const char *rel, int depth,
                 struct cm_err **err);

static int
one (struct out *o, int dfd, const char *name, const char *path, int depth,
     struct cm_err **err)
{
  struct stat st;
  char target[CL_TMPFS_NAME];
  _cleanup_fd_ int fd = -1;
  ssize_t n;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : cm_err_set (err, errno, "tmpfs: stat `%s`", path);
  if (st.st_dev != o->dev)
    return 0;  /* another mount below this one: saved on its own, if tmpfs */
  if (S_ISDIR (st.st_mode))
    {
      fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "tmpfs: open `%s`", path);
      if (entry (o, &st, CL_T_DIR, path, NULL, 0, -1, err) < 0)
        return -1;
      return walk (o, fd, path, depth + 1, err);
    }
  if (S_ISREG (st.st_mode))
    {
      struct stat now;
      fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &now) < 0 || !S_ISREG (now.st_mode)
          || now.st_ino != st.st_ino)
        return cm_err_set (err, errno, "tmpfs: `%s` changed while it was "
                           "saved", path);
      return entry (o, &now, CL_T_REG, path, NULL, (uint64_t) now.st_size, fd, err);
    }
  if (S_ISLNK (st.st_mode))
    {
      n = readlinkat (dfd, name, target, sizeof target - 1);
      if (n < 0)
        return cm_err_set (err, errno, "tmpfs: readlink `%s`", path);
      return entry (o, &st, CL_T_LNK, path, target, (uint64_t) n, -1, err);
    }
  if (S_ISFIFO (st.st_mode))
    return entry (o, &st, CL_T_FIFO, path, NULL, 0, -1, err);
  return 0;  /* device nodes (the runtime's), sockets (their listener's) */
}

static int
walk (struct out *o, int dfd, const char *rel, int depth, struct cm_err **err)
{
  DIR *d;
  struct dirent *e;
  int r = 0, fd;
  if (depth > MAX_DEPTH)
    return cm_err_set (err, 0, "tmpfs: `%s` nests deeper than %d", rel, MAX_DEPTH);
  fd = dup (dfd);
  d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, errno, "tmpfs: list `%s`", rel);
    }
  while (r == 0 && (e = readdir (d)) != NULL)
    {
      _cleanup_free_ char *path = NULL;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      path = rel[0] ? xasprintf ("%s/%s", rel, e->d_name) : xstrdup (e->d_name);
      if (strlen (path) >= CL_TMPFS_NAME)
        r = cm_err_set (err, 0, "tmpfs: a path longer than %u bytes", CL_TMPFS_NAME);
      else
        r = one (o, dfd, e->d_name, path, depth, err);
    }
  closedir (d);
  return r;
}

int
cl_open_dir_path (const char *path)
{
  _cleanup_free_ char *copy = xstrdup (path);
  char *save = NULL;
  int fd = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (char *c = strtok_r (copy, "/", &save); c && fd >= 0;
       c = strtok_r (NULL, "/", &save))
    {
      int next = openat (fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      fd = next;
    }
  return fd;
}

/* The mount point |path| (absolute), opened component by component. */
static int
open_mount (const char *path, struct cm_err **err)
{
  int fd = cl_open_dir_path (path);
  if (fd < 0)
    return cm_err_set (err, errno, "tmpfs: open its mount point `%s`", path);
  return fd;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void
unescape (char *s)
{
  char *w = s;
  for (char *r = s; *r; r++)
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] && r[3])
      {
        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
        r += 3;
      }
    else
      *w++ = *r;
  *w = '\0';
}

static int
save_mount (struct out *o, const char *path, unsigned maj, unsigned min,
            struct cl_tmpfs_mount *m, bool *kept, struct cm_err **err)
{
  _cleanup_fd_ int fd = open_mount (path, err);
  struct stat st;
  struct statfs sf;
  *kept = false;
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || fstatfs (fd, &sf) < 0)
    return cm_err_set (err, errno, "tmpfs: stat `%s`", path);
  if (st.st_dev != makedev (maj, min) || sf.f_type != TMPFS_MAGIC)
    return 0;  /* mounted over: hidden, nothing of it reachable */
  if (strlen (path) >= sizeof m->path)
    return cm_err_set (err, 0, "tmpfs: mount point `%.100s…` too long", path);
  snprintf (m->path, sizeof m->path, "%s", path);
  m->off = o->len;
  o->dev = st.st_dev;
  if (walk (o, fd, "", 0, err) < 0)
    return cm_err_wrap (err, "tmpfs at `%s`", path);
  m->len = o->len - m->off;
  *kept = true;
  return 0;
}

/* Whether |path| is a tmpfs mount point of |pid|'s namespace (the last
 * mount there, which hides any below it), and its device. */
static bool
tmpfs_mount (pid_t pid, const char *path, unsigned *maj, unsigned *min)
{
  char p[64], *save = NULL;
  _cleanup_free_ char *info = NULL;
  struct cm_err *e = NULL;
  bool found = false;
  snprintf (p, sizeof p, "%d/mountinfo", pid);
  if (cm_read_file_at (cl_proc_dir (), p, 4u << 20, &info, NULL, &e) < 0)
    {
      cm_err_free (&e);
      return false;
    }
  for (char *l = strtok_r (info, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      char mnt[4096], fstype[64];
      unsigned a, b;
      const char *dash = strstr (l, " - ");
      if (dash == NULL || sscanf (l, "%*d %*d %u:%u %*s %4095s", &a, &b, mnt) != 3
          || sscanf (dash + 3, "%63s", fstype) != 1)
        continue;
      unescape (mnt);
      if (strcmp (mnt, path) == 0)
        {
          found = strcmp (fstype, "tmpfs") == 0;
          *maj = a, *min = b;
        }
    }
  return found;
}

static int
save_all (struct out *o, pid_t pid, const char *const *paths, size_t n,
          struct cl_tmpfs_mount *m, uint32_t *count, struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    {
      unsigned maj, min;
      bool kept;
      if (paths[i][0] != '/' || !tmpfs_mount (pid, paths[i], &maj, &min))
        continue;
      if (*count == CL_TMPFS_MOUNTS)
        return cm_err_set (err, 0, "tmpfs: more than %u tmpfs mounts",
                           CL_TMPFS_MOUNTS);
      if (save_mount (o, paths[i], maj, min, &m[*count], &kept, err) < 0)
        return -1;
      *count += kept;
    }
  return 0;
}

static int
finish (struct out *o, struct cl_tmpfs_mount *m, uint32_t count,
        struct cm_err **err)
{
  struct cl_tmpfs_hdr h;
  void *map;
  memset (&h, 0, sizeof h);
  memcpy (h.magic, CL_TMPFS_MAGIC, 8);
  h.version = CL_VERSION;
  h.count = count;
  h.len = o->len;
  if (pwrite (o->fd, m, CL_TMPFS_MOUNTS * sizeof *m, sizeof h)
      != (ssize_t) (CL_TMPFS_MOUNTS * sizeof *m))
    return cm_err_set (err, errno, "tmpfs.img: write");
  map = mmap (NULL, o->len, PROT_READ, MAP_SHARED, o->fd, 0);
  if (map == MAP_FAILED)
    return cm_err_set (err, errno, "tmpfs.img: map for its checksum");
  if (cm_sha256 ((char *) map + sizeof h, o->len - sizeof h, h.sha256, err) < 0)
    {
      munmap (map, o->len);
      return -1;
    }
  munmap (map, o->len);
  if (pwrite (o->fd, &h, sizeof h, 0) != (ssize_t) sizeof h)
    return cm_err_set (err, errno, "tmpfs.img: write");
  return 0;
}

int
cl_tmpfs_dump (int dirfd, pid_t pid, const char *const *paths, size_t n,
               struct cm_err **err)
{
  struct out o = { -1, 0, 0 };
  _cleanup_free_ struct cl_tmpfs_mount *m = xcalloc (CL_TMPFS_MOUNTS, sizeof *m);
  uint32_t count = 0;
  int r;
  o.fd = openat (dirfd, "tmpfs.img", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (o.fd < 0)
    return cm_err_set (err, errno, "create tmpfs.img");
  /* the header and table are written last, in place */
  o.len = sizeof (struct cl_tmpfs_hdr) + CL_TMPFS_MOUNTS * sizeof *m;
  r = lseek (o.fd, (off_t) o.len, SEEK_SET) < 0
          ? cm_err_set (err, errno, "tmpfs.img: seek") : 0;
  if (r == 0)
    r = save_all (&o, pid, paths, n, m, &count, err);
  if (r == 0)
    r = finish (&o, m, count, err);
  close (o.fd);
  return r;
}
