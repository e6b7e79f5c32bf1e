/* tmpfs.img checked and written back into the restored container's tmpfs
 * mounts, in its init, under its confinement, before any process is
 * restored (a FIFO or file the processes hold must be there to reopen).
 * The image is untrusted: its checksum, every mount path and every entry
 * are checked before anything is written (cl_tmpfs_check), and writing
 * follows no symlink and leaves no mount: every component is opened
 * O_NOFOLLOW from the mount's directory fd and must be on the mount's
 * device; an entry whose parent is not such a directory is refused by
 * name.  An entry that already exists is the fresh container's own (the
 * runtime's /dev symlinks): left as it is. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/internal.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#define TABLE_END (sizeof (struct cl_tmpfs_hdr) \
                   + CL_TMPFS_MOUNTS * sizeof (struct cl_tmpfs_mount))

struct map
{
  char *p;
  size_t len;
};

static void
unmap (struct map *m)
{
  if (m->p)
    munmap (m->p, m->len);
}

static int
map_file (int fd, struct map *m, struct cm_err **err)
{
  struct stat st;
  m->p = NULL;
  if (fstat (fd, &st) < 0)
    return cm_err_set (err, errno, "tmpfs.img: stat");
  if ((uint64_t) st.st_size < TABLE_END)
    return cm_err_set (err, 0, "tmpfs.img: truncated (%lld bytes)",
                       (long long) st.st_size);
  m->len = (size_t) st.st_size;
  m->p = mmap (NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m->p == MAP_FAILED)
    {
      m->p = NULL;
      return cm_err_set (err, errno, "tmpfs.img: map");
    }
  return 0;
}

/* A relative path of one or more components, none empty, "." or "..". */
static bool
name_ok (const char *n, size_t len)
{
  size_t i = 0;
  if (len == 0 || len >= CL_TMPFS_NAME || memchr (n, 0, len) != NULL)
    return false;
  while (i < len)
    {
      size_t j = i;
      while (j < len && n[j] != '/')
        j++;
      if (j == i || (j - i == 1 && n[i] == '.')
          || (j - i == 2 && n[i] == '.' && n[i + 1] == '.'))
        return false;
      i = j + 1;
      if (j + 1 == len)
        return false;  /* a trailing slash */
    }
  return true;
}

static const struct cl_tmpfs_mount *
mounts (const struct map *m)
{
  return (const void *) (m->p + sizeof (struct cl_tmpfs_hdr));
}

/* The entry at |*off| of |mnt|, checked; NULL with *why set. */
static const struct cl_tmpfs_ent *
ent_next (const struct map *m, const struct cl_tmpfs_mount *mnt, uint64_t *off,
          const char **why)
{
  const struct cl_tmpfs_ent *e;
  uint64_t end = mnt->off + mnt->len, left = end - *off, need;
  *why = "overruns its mount's records";
  if (left < sizeof *e || *off % 8)
    return NULL;
  e = (const void *) (m->p + *off);
  if (e->name_len > left - sizeof *e || e->data_len > left - sizeof *e - e->name_len)
    return NULL;
  need = (sizeof *e + e->name_len + e->data_len + 7) & ~7ull;
  *why = "has a bad type, mode or size";
  if (e->type < CL_T_DIR || e->type > CL_T_FIFO || e->mode & ~07777u
      || ((e->type == CL_T_DIR || e->type == CL_T_FIFO) && e->data_len)
      || (e->type == CL_T_LNK && (e->data_len == 0 || e->data_len >= CL_TMPFS_NAME)))
    return NULL;
  *why = "has a name that is not a plain relative path";
  if (!name_ok ((const char *) (e + 1), e->name_len))
    return NULL;
  if (e->type == CL_T_LNK && memchr ((const char *) (e + 1) + e->name_len, 0,
                                     e->data_len) != NULL)
    return NULL;
  *off += need < left ? need : left;
  return e;
}

static int
check_mount (const struct map *m, const struct cl_tmpfs_mount *mnt, uint32_t i,
             struct cm_err **err)
{
  uint64_t off;
  size_t n = 0;
  const char *why;
  if (memchr (mnt->path, 0, sizeof mnt->path) == NULL || mnt->path[0] != '/'
      || (mnt->path[1] && !name_ok (mnt->path + 1, strlen (mnt->path + 1))))
    return cm_err_set (err, 0, "tmpfs.img: mount %u has a bad path", i);
  if (mnt->off < TABLE_END || mnt->off > m->len || mnt->len > m->len - mnt->off)
    return cm_err_set (err, 0, "tmpfs.img: mount `%s` lies outside the file",
                       mnt->path);
  for (off = mnt->off; off < mnt->off + mnt->len; n++)
    if (ent_next (m, mnt, &off, &why) == NULL)
      return cm_err_set (err, 0, "tmpfs.img: entry %zu of `%s` %s", n,
                         mnt->path, why);
  return 0;
}

static int
check_map (const struct map *m, struct cm_err **err)
{
  struct cl_tmpfs_hdr h;
  uint8_t md[32];
  memcpy (&h, m->p, sizeof h);
  if (memcmp (h.magic, CL_TMPFS_MAGIC, 8) != 0)
    return cm_err_set (err, 0, "tmpfs.img: not a criu-lite tmpfs image (bad magic)");
  if (h.version != CL_VERSION)
    return cm_err_set (err, 0, "tmpfs.img: format version %u, this build reads %u",
                       h.version, CL_VERSION);
  if (h.len != m->len)
    return cm_err_set (err, 0, "tmpfs.img: %s (%zu of %llu bytes)",
                       m->len < h.len ? "truncated" : "too long", m->len,
                       (unsigned long long) h.len);
  if (cm_sha256 (m->p + sizeof h, m->len - sizeof h, md, err) < 0)
    return -1;
  if (memcmp (md, h.sha256, 32) != 0)
    return cm_err_set (err, 0, "tmpfs.img: checksum mismatch (corrupted)");
  if (h.count > CL_TMPFS_MOUNTS)
    return cm_err_set (err, 0, "tmpfs.img: %u mounts", h.count);
  for (uint32_t i = 0; i < h.count; i++)
    if (check_mount (m, &mounts (m)[i], i, err) < 0)
      return -1;
  return (int) h.count;
}

int
cl_tmpfs_check (int fd, struct cm_err **err)
{
  struct map m;
  int r = map_file (fd, &m, err);
  if (r == 0)
    r = check_map (&m, err) < 0 ? -1 : 0;
  unmap (&m);
  return r;
}

/* ---- writing into the container's tmpfs ------------------------------ */

struct place
{
  int root;
  dev_t dev;
  const char *mnt;
};

/* The directory holding |name| (its last component in *last), opened
 * from the mount's root without following a symlink or leaving it. */
static int
parent_of (const struct place *p, char *name, char **last, struct cm_err **err)
{
  char *slash = strrchr (name, '/'), *save = NULL;
  int fd = dup (p->root);
  *last = slash ? slash + 1 : name;
  if (slash == NULL)
    return fd < 0 ? cm_err_set (err, errno, "dup") : fd;
  *slash = '\0';
  for (char *c = strtok_r (name, "/", &save); c && fd >= 0;
       c = strtok_r (NULL, "/", &save))
    {
      struct stat st;
      int next = openat (fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      fd = next;
      if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_dev != p->dev))
        {
          close (fd);
          fd = -1;
          errno = EXDEV;
        }
    }
  *slash = '/';
  if (fd < 0)
    return cm_err_set (err, errno, "tmpfs at `%s`: entry `%s`: its parent is "
                       "not a directory of this tmpfs", p->mnt, name);
  return fd;
}

static int
own (int dfd, const char *last, const struct cl_tmpfs_ent *e)
{
  struct timespec ts[2] = { { e->mtime_sec, e->mtime_nsec },
                            { e->mtime_sec, e->mtime_nsec } };
  struct stat st;
  if (fstatat (dfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if ((st.st_uid != e->uid || st.st_gid != e->gid)
      && fchownat (dfd, last, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (e->type != CL_T_LNK && fchmodat (dfd, last, e->mode, 0) < 0)
    return -1;
  return e->type == CL_T_DIR ? 0 : utimensat (dfd, last, ts, AT_SYMLINK_NOFOLLOW);
}

static int
write_file (int dfd, const char *last, const struct cl_tmpfs_ent *e,
            const char *data)
{
  _cleanup_fd_ int fd = openat (dfd, last, O_WRONLY | O_CREAT | O_EXCL
                                               | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  if (e->data_len && cm_write_all (fd, data, e->data_len) != (ssize_t) e->data_len)
    return -1;
  return 0;
}

/* Makes |e|; 1 when it existed already (left as it is). */
static int
make (int dfd, const char *last, const struct cl_tmpfs_ent *e, const char *data)
{
  int r;
  switch (e->type)
    {
    case CL_T_DIR:
      r = mkdirat (dfd, last, 0700);
      break;
    case CL_T_REG:
      r = write_file (dfd, last, e, data);
      break;
    case CL_T_LNK:
      {
        _cleanup_free_ char *target = xmalloc (e->data_len + 1);
        memcpy (target, data, e->data_len);
        target[e->data_len] = '\0';
        r = symlinkat (target, dfd, last);
        break;
      }
    default:
      r = mknodat (dfd, last, S_IFIFO | 0600, 0);
      break;
    }
  if (r < 0 && errno == EEXIST)
    return 1;
  return r;
}

static int
place_one (const struct place *p, const struct cl_tmpfs_ent *e, struct cm_err **err)
{
  _cleanup_free_ char *name = xmalloc (e->name_len + 1);
  const char *data = (const char *) (e + 1) + e->name_len;
  _cleanup_fd_ int dfd = -1;
  char *last;
  struct stat st;
  int r;
  memcpy (name, e + 1, e->name_len);
  name[e->name_len] = '\0';
  dfd = parent_of (p, name, &last, err);
  if (dfd < 0)
    return -1;
  r = make (dfd, last, e, data);
  if (r == 1 && e->type == CL_T_DIR
      && (fstatat (dfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode)))
    return cm_err_set (err, EEXIST, "tmpfs at `%s`: entry `%s`: a directory "
                       "where the container has something else", p->mnt, name);
  if (r == 1 && (e->type != CL_T_DIR || st.st_dev != p->dev))
    return 0;  /* the fresh container's own, or another mount */
  if (r < 0 || own (dfd, last, e) < 0)
    return cm_err_set (err, errno, "tmpfs at `%s`: restore `%s`", p->mnt, name);
  return 0;
}

/* The mount point, opened component by component: a tmpfs, or refused. */
static int
open_mount (const char *path, struct place *p, struct cm_err **err)
{
  struct stat st;
  struct statfs sf;
  int fd = cl_open_dir_path (path);
  if (fd < 0)
    return cm_err_set (err, errno, "tmpfs at `%s`: open it in the restored "
                       "container", path);
  if (fstat (fd, &st) < 0 || fstatfs (fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
    {
      close (fd);
      return cm_err_set (err, 0, "tmpfs at `%s`: not a tmpfs in the restored "
                         "container (the image saved one there)", path);
    }
  p->root = fd;
  p->dev = st.st_dev;
  p->mnt = path;
  return 0;
}

static int
restore_mount (const struct map *m, const struct cl_tmpfs_mount *mnt,
               struct cm_err **err)
{
  struct place p;
  uint64_t off = mnt->off;
  const char *why;
  const struct cl_tmpfs_ent *e;
  int r = 0;
  if (open_mount (mnt->path, &p, err) < 0)
    return -1;
  while (r == 0 && off < mnt->off + mnt->len
         && (e = ent_next (m, mnt, &off, &why)) != NULL)
    r = place_one (&p, e, err);
  close (p.root);
  return r;
}

int
cl_tmpfs_restore (int fd, struct cm_err **err)
{
  struct map m;
  int n = map_file (fd, &m, err);
  if (n == 0)
    n = check_map (&m, err);
  for (int i = 0; n > 0 && i < n; i++)
    if (restore_mount (&m, &mounts (&m)[i], err) < 0)
      n = -1;
  unmap (&m);
  return n < 0 ? -1 : 0;
}
