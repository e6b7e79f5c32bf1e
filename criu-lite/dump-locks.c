/* File locks: criu-lite does not save them (docs/checkpoint.md), so a
 * process holding one fails the checkpoint, naming the fd, rather than
 * coming back without it — another process could then take the lock the
 * restored one believes it holds.  /proc/PID/fdinfo/N lists, as "lock:"
 * lines, the flock, POSIX (record) and OFD locks and the leases held
 * through that open file (fs/locks.c, show_fd_locks). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int
fd_lock (struct cl_dump *d, int fd, struct cm_err **err)
{
  char path[64], *l;
  _cleanup_free_ char *info = NULL;
  struct cm_err *e = NULL;

  snprintf (path, sizeof path, "%d/fdinfo/%d", d->pid, fd);
  if (cm_read_file_at (cl_proc_dir (), path, 1 << 16, &info, NULL, &e) < 0)
    {
      int en = e->errno_;
      cm_err_free (&e);
      if (en == ENOENT)
        return 0;  /* closed meanwhile */
      return cm_err_set (err, en, "read `%s`", path);
    }
  l = strstr (info, "\nlock:");
  if (l == NULL)
    return 0;
  /* "lock:\t1: FLOCK  ADVISORY  WRITE 1234 00:3d:2 0 EOF": from the kind */
  l += strlen ("\nlock:");
  l += strspn (l, " \t0123456789:");
  l[strcspn (l, "\n")] = '\0';
  return cm_err_set (err, 0, "fd %d holds a file lock (%s), which criu-lite "
                     "cannot save or restore", fd, l);
}

/* A lock held through a mapping only: flock and OFD locks (and leases)
 * belong to the open file description, which a mapping keeps after its
 * fd is closed, so fdinfo no longer lists them.  /proc/locks lists every
 * lock of the host ("1: FLOCK  ADVISORY  WRITE 1234 00:3d:2 0 EOF", the
 * device in hex; POSIX locks carry the owner's pid, flock and OFD locks
 * only the inode: fs/locks.c, lock_get_status), so a lock on an inode
 * this process maps is taken as its own.  That errs on the side of
 * refusing: another process's lock on a file this one maps fails the
 * checkpoint too. */
struct mapped
{
  dev_t dev;
  ino_t ino;
  const struct cl_vma *v;
};

static void
add_stat (struct mapped *m, size_t *n, int rc, const struct stat *st,
          const struct cl_vma *v)
{
  if (rc == 0)
    m[(*n)++] = (struct mapped) { st->st_dev, st->st_ino, v };
}

/* Every mapped file's inode: the one really mapped (map_files) and, for
 * a file of an overlay, the one its path names (which the lock is on). */
static size_t
mapped_inodes (const struct cl_dump *d, struct mapped *m)
{
  const struct cl_vma *v = (const void *) d->vmas.p;
  size_t nv = d->vmas.len / sizeof *v, n = 0;
  for (size_t i = 0; i < nv; i++)
    {
      char p[4200];
      struct stat st;
      snprintf (p, sizeof p, "%d/map_files/%" PRIx64 "-%" PRIx64, d->pid,
                v[i].start, v[i].end);
      add_stat (m, &n, fstatat (cl_proc_dir (), p, &st, 0), &st, &v[i]);
      if (v[i].kind == CL_VMA_FILE || v[i].kind == CL_VMA_FILE_SHARED)
        {
          snprintf (p, sizeof p, "%d/root%s", d->pid, d->strings.p + v[i].path);
          add_stat (m, &n, fstatat (cl_proc_dir (), p, &st, 0), &st, &v[i]);
        }
    }
  return n;
}

static const struct mapped *
lock_of (const char *line, pid_t pid, const struct mapped *m, size_t n)
{
  char kind[16];
  int lpid;
  unsigned maj, min;
  unsigned long ino;
  if (strstr (line, "->") != NULL  /* a waiter, not a holder */
      || sscanf (line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &lpid, &maj,
                 &min, &ino) != 5)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (m[i].ino == ino && major (m[i].dev) == maj && minor (m[i].dev) == min
        && (strcmp (kind, "POSIX") != 0 || lpid == pid))
      return &m[i];
  return NULL;
}

static int
mapped_lock (struct cl_dump *d, struct cm_err **err)
{
  _cleanup_free_ char *locks = NULL;
  _cleanup_free_ struct mapped *m = NULL;
  char *save = NULL;
  size_t n;

  if (cm_read_file_at (cl_proc_dir (), "locks", 1 << 24, &locks, NULL, err) < 0)
    return -1;
  m = calloc (2 * (d->vmas.len / sizeof (struct cl_vma)) + 1, sizeof *m);
  if (m == NULL)
    return cm_err_set (err, ENOMEM, "file locks");
  n = mapped_inodes (d, m);
  for (char *l = strtok_r (locks, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      const struct mapped *hit = lock_of (l, d->pid, m, n);
      if (hit == NULL)
        continue;
      l += strspn (l, " \t0123456789:");
      return cm_err_set (err, 0, "a file lock (%s) is held on `%s`, mapped "
                         "at %" PRIx64 "-%" PRIx64 " with no fd, which "
                         "criu-lite cannot save or restore", l,
                         hit->v->kind == CL_VMA_FILE || hit->v->kind == CL_VMA_FILE_SHARED
                         ? d->strings.p + hit->v->path : "shared memory",
                         hit->v->start, hit->v->end);
    }
  return 0;
}

int
cl_dump_locks (struct cl_dump *d, struct cm_err **err)
{
  const struct cl_fd *f = (const void *) d->fds.p;
  size_t n = d->fds.len / sizeof *f;
  for (size_t i = 0; i < n; i++)
    if (fd_lock (d, f[i].fd, err) < 0)
      return -1;
  return mapped_lock (d, err);
}
