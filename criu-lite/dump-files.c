/* File descriptors, cwd, umask, rlimits, auxv and personality of a
 * stopped process, from /proc/PID and prlimit(2).  An fd that cannot be
 * restored fails the capture with its number and kind, or, when the caller
 * allows it, is recorded as skipped so that restore lists it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int
fdinfo (pid_t pid, int fd, struct cl_fd *f, uint64_t *mnt_id,
        struct cm_err **err)
{
  char path[64];
  _cleanup_free_ char *s = NULL;
  char *p;
  snprintf (path, sizeof path, "%d/fdinfo/%d", pid, fd);
  if (cm_read_file_at (cl_proc_dir (), path, 1 << 16, &s, NULL, err) < 0)
    return -1;
  p = strstr (s, "pos:");
  f->pos = p ? strtoull (p + 4, NULL, 10) : 0;
  p = strstr (s, "flags:");
  f->flags = p ? (uint32_t) strtoul (p + 6, NULL, 8) : 0;
  p = strstr (s, "mnt_id:");
  *mnt_id = p ? strtoull (p + 7, NULL, 10) : 0;
  return 0;
}

static const char *
kind_of (mode_t m, const char *link)
{
  if (S_ISSOCK (m))
    return "socket";
  if (S_ISFIFO (m))
    return "pipe";
  if (cm_startswith (link, "anon_inode:"))
    return link;
  if (S_ISBLK (m))
    return "block device";
  return "unsupported file";
}

/* Whether |st| (through mount |mnt_id|) is stdio object |k|. */
static bool
is_stdio (const struct cl_dump *d, int k, const struct stat *st,
          uint64_t mnt_id)
{
  const uint64_t *id = d->stdio[k];
  return id[1] && id[0] == (uint64_t) st->st_dev
         && id[1] == (uint64_t) st->st_ino && (id[2] == 0 || id[2] == mnt_id);
}

/* Which of the objects the caller gave the tree as its stdio |st| is, or
 * 3: |fd| itself when it is one (an engine may give all three the same
 * file, /dev/null: stderr must not come back as stdin), else the first
 * that suits the fd's access mode (a write-only fd: stdout, stderr). */
static uint64_t
stdio_of (const struct cl_dump *d, const struct stat *st, uint64_t mnt_id,
          int fd, uint32_t flags)
{
  static const int order[2][3] = { { 0, 1, 2 }, { 1, 2, 0 } };
  const int *o = order[(flags & O_ACCMODE) == O_WRONLY];
  if (fd >= 0 && fd < 3 && is_stdio (d, fd, st, mnt_id))
    return (uint64_t) fd;
  for (int k = 0; k < 3; k++)
    if (is_stdio (d, o[k], st, mnt_id))
      return (uint64_t) o[k];
  return 3;
}

/* Without the caller's record (criu_dump_opts.stdio): the root's fds 0-2
 * when the capture starts, through whatever mount. */
void
cl_stdio_of_root (struct cl_dump *d)
{
  for (int k = 0; k < 3; k++)
    {
      char path[64];
      struct stat st;
      snprintf (path, sizeof path, "%d/fd/%d", d->pid, k);
      if (fstatat (cl_proc_dir (), path, &st, 0) == 0)
        {
          d->stdio[k][0] = (uint64_t) st.st_dev;
          d->stdio[k][1] = (uint64_t) st.st_ino;
          d->stdio[k][2] = 0;
        }
    }
}

static int
dump_fd (struct cl_dump *d, int fd, bool skip, struct cm_err **err)
{
  char path[64], link[4096], what[256];
  const char *why = NULL;
  struct stat st;
  struct cl_fd f;
  uint64_t mnt_id, k;
  ssize_t n;
  int r;

  snprintf (path, sizeof path, "%d/fd/%d", d->pid, fd);
  n = readlinkat (cl_proc_dir (), path, link, sizeof link - 1);
  if (n >= 0 && fstatat (cl_proc_dir (), path, &st, 0) < 0)
    n = -1;
  if (n < 0 && errno == ENOENT)
    return 0;  /* closed meanwhile */
  if (n < 0)
    return cm_err_set (err, errno, "inspect fd %d", fd);
  link[n] = '\0';
  memset (&f, 0, sizeof f);
  f.fd = fd;
  if (fdinfo (d->pid, fd, &f, &mnt_id, err) < 0)
    return -1;
  if (link[0] == '/' && strstr (link, " (deleted)"))
    return cm_err_set (err, 0, "fd %d: `%s` was deleted since it was opened",
                       fd, link);
  if ((k = stdio_of (d, &st, mnt_id, fd, f.flags)) <= 2)
    {
      /* the very object the caller gave the tree as its stdio (the
       * engine's pipe, pty or /dev/null), at whatever number: rebound to
       * the restorer's (CRIU's inherit-fd) */
      f.kind = CL_FD_INHERIT;
      f.pos = k;
    }
  else if (link[0] == '/' && S_ISREG (st.st_mode))
    f.kind = CL_FD_FILE;
  else if (link[0] == '/' && S_ISDIR (st.st_mode))
    f.kind = CL_FD_DIR;
  else if (link[0] == '/' && S_ISCHR (st.st_mode))
    f.kind = CL_FD_DEV;
  else if (S_ISFIFO (st.st_mode))
    {
      /* an anonymous pipe, or a named FIFO reopened by its path */
      if (cl_dump_pipe (d, fd, &st, &f, link[0] == '/', err) < 0)
        return -1;
    }
  else if ((r = cl_dump_fdx (d, fd, link, &st, &f, &why, err)) < 0)
    return -1;
  else if (r == 0)
    ;
  else if (skip)
    {
      f.kind = CL_FD_SKIPPED;
      snprintf (what, sizeof what, "fd %d (%.200s)", fd,
                why ? why : kind_of (st.st_mode, link));
      f.path = cl_str_add (&d->strings, what);
      cl_buf_add (&d->fds, &f, sizeof f);
      return 0;
    }
  else
    return cm_err_set (err, 0, "fd %d is a %s (`%s`), which criu-lite cannot "
                       "restore", fd, why ? why : kind_of (st.st_mode, link), link);
  f.path = cl_str_add (&d->strings, link);
  cl_buf_add (&d->fds, &f, sizeof f);
  return 0;
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *) a - *(const int *) b;
}

int
cl_dump_files (struct cl_dump *d, bool skip, struct cm_err **err)
{
  char path[64];
  struct dirent *e;
  DIR *dir;
  _cleanup_free_ int *fds = NULL;
  size_t n = 0;

  snprintf (path, sizeof path, "%d/fd", d->pid);
  dir = cl_opendir (path);
  if (dir == NULL)
    return cm_err_set (err, errno, "open `%s`", path);
  while ((e = readdir (dir)) != NULL)
    if (e->d_name[0] != '.')
      {
        fds = xrealloc (fds, (n + 1) * sizeof *fds);
        fds[n++] = atoi (e->d_name);
      }
  closedir (dir);
  qsort (fds, n, sizeof *fds, cmp_int);
  for (size_t i = 0; i < n; i++)
    if (dump_fd (d, fds[i], skip, err) < 0)
      return -1;
  return 0;
}

static int
status_field (pid_t pid, const char *key, int base, uint32_t *out,
              struct cm_err **err)
{
  char path[64];
  _cleanup_free_ char *s = NULL;
  char *p;
  snprintf (path, sizeof path, "%d/status", pid);
  if (cm_read_file_at (cl_proc_dir (), path, 1 << 16, &s, NULL, err) < 0)
    return -1;
  p = strstr (s, key);
  if (p == NULL)
    return cm_err_set (err, 0, "`%s` has no %s", path, key);
  *out = (uint32_t) strtoul (p + strlen (key), NULL, base);
  return 0;
}

static int
dump_cwd_auxv (struct cl_dump *d, struct cm_err **err)
{
  char path[64], cwd[4096];
  _cleanup_free_ char *auxv = NULL, *pers = NULL;
  size_t len;
  ssize_t n;

  snprintf (path, sizeof path, "%d/cwd", d->pid);
  n = readlinkat (cl_proc_dir (), path, cwd, sizeof cwd - 1);
  if (n < 0)
    return cm_err_set (err, errno, "readlink `%s`", path);
  cwd[n] = '\0';
  d->proc.cwd = cl_str_add (&d->strings, cwd);
  snprintf (path, sizeof path, "%d/auxv", d->pid);
  if (cm_read_file_at (cl_proc_dir (), path, 4096, &auxv, &len, err) < 0)
    return -1;
  if (len > sizeof d->proc.auxv)
    len = sizeof d->proc.auxv;
  memcpy (d->proc.auxv, auxv, len);
  d->proc.auxv_len = (uint32_t) len;
  snprintf (path, sizeof path, "%d/personality", d->pid);
  if (cm_read_file_at (cl_proc_dir (), path, 64, &pers, NULL, err) < 0)
    return -1;
  d->proc.personality = (uint32_t) strtoul (pers, NULL, 16);
  snprintf (path, sizeof path, "%d/comm", d->pid);
  free (auxv);
  auxv = NULL;
  if (cm_read_file_at (cl_proc_dir (), path, 64, &auxv, &len, err) < 0)
    return -1;
  auxv[strcspn (auxv, "\n")] = '\0';
  snprintf (d->proc.comm, sizeof d->proc.comm, "%s", auxv);
  return 0;
}

/* prlimit on another process needs its uids to be ours, or
 * CAP_SYS_RESOURCE (which root lacks on some hosts): a container running
 * as a user is asked itself, by an injected prlimit64 on itself. */
static int
rlimit_of (struct cl_dump *d, int r, struct rlimit *rl, struct cm_err **err)
{
  long a[6] = { 0, r, 0, (long) d->scratch, 0, 0 }, ret;
  if (prlimit (d->pid, r, NULL, rl) == 0)
    return 0;
  if (errno != EPERM)
    return cm_err_set (err, errno, "read rlimit %d", r);
  if (cl_inject (d, 0, SYS_prlimit64, a, &ret, err) < 0)
    return -1;
  if (ret < 0)
    return cm_err_set (err, (int) -ret, "read rlimit %d", r);
  return cl_peek (d, d->scratch, rl, sizeof *rl, err);
}

int
cl_dump_misc (struct cl_dump *d, struct cm_err **err)
{
  for (int r = 0; r < 16; r++)
    {
      struct rlimit rl;
      if (rlimit_of (d, r, &rl, err) < 0)
        return -1;
      d->proc.rlim[r][0] = rl.rlim_cur;
      d->proc.rlim[r][1] = rl.rlim_max;
    }
  if (status_field (d->pid, "Umask:", 8, &d->proc.umask, err) < 0)
    return -1;
  return dump_cwd_auxv (d, err);
}
