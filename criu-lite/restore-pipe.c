/* The pipes of a restored tree: one per pipe captured, sized and filled
 * with its bytes in flight, made in the root restorer before it forks the
 * others so that every restorer inherits both ends; each takes the ends
 * its image names (restore.c) and the rest close at the point of no
 * return.  The table is process-wide: a process restores one tree once. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

struct made
{
  uint64_t id;
  int end[2];
};

static struct made *pipes;
static size_t npipes;

static struct made *
find (uint64_t id)
{
  for (size_t i = 0; i < npipes; i++)
    if (pipes[i].id == id)
      return &pipes[i];
  return NULL;
}

static int
make_one (const struct cl_pipe *p, struct cm_err **err)
{
  struct made *m;
  pipes = xrealloc (pipes, (npipes + 1) * sizeof *pipes);
  m = &pipes[npipes];
  m->id = p->id;
  if (pipe2 (m->end, O_CLOEXEC | O_NONBLOCK) < 0)
    return cm_err_set (err, errno, "pipe %llu", (unsigned long long) p->id);
  npipes++;
  if (fcntl (m->end[1], F_SETPIPE_SZ, (int) p->cap) < 0)
    return cm_err_set (err, errno, "pipe %llu: size it to %u bytes",
                       (unsigned long long) p->id, p->cap);
  if (p->len && write (m->end[1], p + 1, p->len) != (ssize_t) p->len)
    return cm_err_set (err, errno, "pipe %llu: refill its %u bytes",
                       (unsigned long long) p->id, p->len);
  /* the saved processes block on their pipes as before */
  if (fcntl (m->end[0], F_SETFL, 0) < 0 || fcntl (m->end[1], F_SETFL, 0) < 0)
    return cm_err_set (err, errno, "pipe %llu: blocking mode",
                       (unsigned long long) p->id);
  return 0;
}

int
cl_pipes_make (const struct cl_image *imgs, size_t n, struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < imgs[i].nfds; k++)
      {
        const struct cl_fd *f = &imgs[i].fds[k];
        if (f->kind != CL_FD_PIPE || find (f->pos) != NULL)
          continue;
        if (make_one (cl_image_pipe (&imgs[i], f->pos), err) < 0)
          {
            cl_pipes_close ();
            return -1;
          }
      }
  return 0;
}

int
cl_pipes_end (const struct cl_fd *f)
{
  struct made *m = find (f->pos);
  if (m == NULL)
    return -1;
  return m->end[(f->flags & O_ACCMODE) == O_WRONLY ? 1 : 0];
}

void
cl_pipes_close (void)
{
  for (size_t i = 0; i < npipes; i++)
    {
      close (pipes[i].end[0]);
      close (pipes[i].end[1]);
    }
  free (pipes);
  pipes = NULL;
  npipes = 0;
}
