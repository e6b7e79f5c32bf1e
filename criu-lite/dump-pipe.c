/* A pipe held by a captured process: which end, and the bytes in flight.
 * The bytes are read without taking them from the pipe: the pipe is
 * reopened through /proc/PID/fd (a new reader of the same pipe) and tee(2)
 * duplicates its buffers into a pipe of our own, which is then drained.
 * Every process holding the pipe records the same bytes (the whole tree is
 * stopped); restore fills each pipe once.  A named FIFO is one more
 * pipe, reopened by its path at restore. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int
pipe_bytes (int src, int cap, struct cl_buf *out, struct cm_err **err)
{
  _cleanup_fd_ int r = -1, w = -1;
  int p[2];
  ssize_t n;
  char buf[65536];

  if (pipe2 (p, O_CLOEXEC | O_NONBLOCK) < 0)
    return cm_err_set (err, errno, "pipe");
  r = p[0], w = p[1];
  if (fcntl (w, F_SETPIPE_SZ, cap) < 0)
    return cm_err_set (err, errno, "size a pipe to %d bytes", cap);
  n = tee (src, w, (size_t) cap, SPLICE_F_NONBLOCK);
  if (n < 0 && errno != EAGAIN)
    return cm_err_set (err, errno, "tee");
  while ((n = read (r, buf, sizeof buf)) > 0)
    cl_buf_add (out, buf, (size_t) n);
  return 0;
}

/* A named FIFO's pipe is keyed by its file: its device folded in, and
 * the top bit set so that it never meets an anonymous pipe's inode. */
static uint64_t
fifo_id (const struct stat *st)
{
  return ((uint64_t) st->st_ino ^ ((uint64_t) st->st_dev << 40)) | (1ull << 63);
}

int
cl_dump_pipe (struct cl_dump *d, int fd, const struct stat *st,
              struct cl_fd *f, bool named, struct cm_err **err)
{
  char path[64];
  _cleanup_fd_ int src = -1;
  struct cl_buf data = { 0 };
  struct cl_pipe rec = { .id = named ? fifo_id (st) : (uint64_t) st->st_ino };
  int cap, r;

  if (!named && (f->flags & O_ACCMODE) == O_RDWR)
    return cm_err_set (err, 0, "fd %d: a pipe opened for both reading and "
                       "writing, which criu-lite cannot restore", fd);
  f->kind = named ? CL_FD_FIFO : CL_FD_PIPE;
  f->pos = rec.id;
  snprintf (path, sizeof path, "%d/fd/%d", d->pid, fd);
  src = openat (cl_proc_dir (), path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (src < 0)
    return cm_err_set (err, errno, "fd %d: reopen the pipe to read its bytes", fd);
  cap = fcntl (src, F_GETPIPE_SZ);
  if (cap <= 0 || (unsigned) cap > CL_PIPE_MAX)
    return cm_err_set (err, cap < 0 ? errno : 0, "fd %d: pipe size %d", fd, cap);
  r = pipe_bytes (src, cap, &data, err);
  if (r == 0)
    {
      rec.len = (uint32_t) data.len;
      rec.cap = (uint32_t) cap;
      cl_buf_add (&d->pipes, &rec, sizeof rec);
      if (data.len)
        cl_buf_add (&d->pipes, data.p, data.len);
      cl_buf_pad (&d->pipes, 8);
    }
  free (data.p);
  return r < 0 ? cm_err_wrap (err, "fd %d: the bytes in its pipe", fd) : 0;
}
