/* The pipes of a restored tree: one per pipe or named FIFO captured,
 * sized and filled with its bytes in flight, made in the root restorer
 * before it forks the others so that every restorer inherits the ends;
 * each takes the ends its image names (restore.c) and the rest close at
 * the point of no return.  An end comes back with its saved status flags
 * (O_NONBLOCK, O_APPEND, O_DIRECT): ends of one pipe that had different
 * flags get open file descriptions of their own.  A FIFO is reopened by
 * its path (held open read-write while its ends are opened, so no open
 * blocks).  The table is process-wide: a process restores one tree once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

struct made
{
  uint64_t id;
  int end[3];                  /* read, write, read-write (a FIFO's) */
};

struct variant
{
  uint64_t id;
  int end;
  uint32_t status;             /* CL_FD_STATUS bits */
  int fd;
};

static struct made *pipes;
static size_t npipes;
static struct variant *vars;
static size_t nvars;

static struct made *
find (uint64_t id)
{
  for (size_t i = 0; i < npipes; i++)
    if (pipes[i].id == id)
      return &pipes[i];
  return NULL;
}

static int
end_of (const struct cl_fd *f)
{
  switch (f->flags & O_ACCMODE)
    {
    case O_WRONLY:
      return 1;
    case O_RDWR:
      return 2;
    default:
      return 0;
    }
}

static int
fill (const struct cl_pipe *p, int w, struct cm_err **err)
{
  if (fcntl (w, F_SETPIPE_SZ, (int) p->cap) < 0)
    return cm_err_set (err, errno, "pipe %llu: size it to %u bytes",
                       (unsigned long long) p->id, p->cap);
  if (p->len && write (w, p + 1, p->len) != (ssize_t) p->len)
    return cm_err_set (err, errno, "pipe %llu: refill its %u bytes",
                       (unsigned long long) p->id, p->len);
  return 0;
}

static int
open_fifo (const char *path, int how, struct cm_err **err)
{
  struct stat st;
  int fd = open (path, how | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "FIFO `%s`: reopen", path);
  if (fstat (fd, &st) < 0 || !S_ISFIFO (st.st_mode))
    {
      close (fd);
      return cm_err_set (err, 0, "FIFO `%s`: not a FIFO in the restored "
                         "container", path);
    }
  return fd;
}

static int
make_one (const struct cl_image *img, const struct cl_fd *f, struct cm_err **err)
{
  const struct cl_pipe *p = cl_image_pipe (img, f->pos);
  const char *path = cl_image_str (img, f->path);
  struct made *m;
  int e[2];
  pipes = xrealloc (pipes, (npipes + 1) * sizeof *pipes);
  m = &pipes[npipes];
  *m = (struct made) { f->pos, { -1, -1, -1 } };
  npipes++;
  if (f->kind == CL_FD_PIPE)
    {
      if (pipe2 (e, O_CLOEXEC | O_NONBLOCK) < 0)
        return cm_err_set (err, errno, "pipe %llu", (unsigned long long) p->id);
      m->end[0] = e[0], m->end[1] = e[1];
      return fill (p, m->end[1], err);
    }
  if ((m->end[2] = open_fifo (path, O_RDWR, err)) < 0
      || fill (p, m->end[2], err) < 0
      || (m->end[0] = open_fifo (path, O_RDONLY, err)) < 0
      || (m->end[1] = open_fifo (path, O_WRONLY, err)) < 0)
    return -1;
  return 0;
}

/* The end |f| names with its status flags: the first end asked for
 * takes the pipe's own, another with other flags a new one. */
static int
make_variant (const struct cl_image *img, const struct cl_fd *f,
              struct cm_err **err)
{
  struct made *m = find (f->pos);
  int end = end_of (f), fd, first = 1;
  uint32_t status = f->flags & CL_FD_STATUS;
  char self[64];
  for (size_t i = 0; i < nvars; i++)
    if (vars[i].id == f->pos && vars[i].end == end)
      {
        if (vars[i].status == status)
          return 0;
        first = 0;
      }
  if (end == 2 && f->kind == CL_FD_PIPE)
    return cm_err_set (err, 0, "fd %d: a pipe end read-write", f->fd);
  if (first)
    fd = m->end[end];
  else if (f->kind == CL_FD_FIFO)
    fd = open_fifo (cl_image_str (img, f->path), (int) (f->flags & O_ACCMODE), err);
  else
    {
      snprintf (self, sizeof self, "/proc/self/fd/%d", m->end[end]);
      fd = open (self, (int) (f->flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "fd %d: reopen its pipe through "
                           "/proc/self/fd for its own status flags", f->fd);
    }
  if (fd < 0)
    return -1;
  vars = xrealloc (vars, (nvars + 1) * sizeof *vars);
  vars[nvars++] = (struct variant) { f->pos, end, status, first ? -1 : fd };
  if (fcntl (fd, F_SETFL, (int) status) < 0)
    return cm_err_set (err, errno, "fd %d: status flags %#o of its pipe",
                       f->fd, status);
  if (first)
    vars[nvars - 1].fd = fd;
  return 0;
}

int
cl_pipes_make (const struct cl_image *imgs, size_t n, struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < imgs[i].nfds; k++)
      {
        const struct cl_fd *f = &imgs[i].fds[k];
        if (f->kind != CL_FD_PIPE && f->kind != CL_FD_FIFO)
          continue;
        if ((find (f->pos) == NULL && make_one (&imgs[i], f, err) < 0)
            || make_variant (&imgs[i], f, err) < 0)
          {
            cl_pipes_close ();
            return cm_err_wrap (err, "fd %d", f->fd);
          }
      }
  return 0;
}

int
cl_pipes_end (const struct cl_fd *f)
{
  for (size_t i = 0; i < nvars; i++)
    if (vars[i].id == f->pos && vars[i].end == end_of (f)
        && vars[i].status == (f->flags & CL_FD_STATUS))
      return vars[i].fd;
  return -1;
}

void
cl_pipes_close (void)
{
  for (size_t i = 0; i < npipes; i++)
    for (int e = 0; e < 3; e++)
      if (pipes[i].end[e] >= 0)
        close (pipes[i].end[e]);
  for (size_t i = 0; i < nvars; i++)
    {
      bool base = false;
      for (size_t j = 0; j < npipes; j++)
        for (int e = 0; e < 3; e++)
          base |= pipes[j].end[e] == vars[i].fd;
      if (!base)
        close (vars[i].fd);
    }
  free (pipes);
  free (vars);
  pipes = NULL;
  vars = NULL;
  npipes = nvars = 0;
}
