/* criu_dump: stop, read, write, let go (criu-lite/criu.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/criu.h"
#include "criu-lite/internal.h"

static void
dump_free (struct cl_dump *d)
{
  free (d->threads.p);
  free (d->vmas.p);
  free (d->runs.p);
  free (d->fds.p);
  free (d->strings.p);
  if (d->pages_fd >= 0)
    close (d->pages_fd);
}

static int
capture (struct cl_dump *d, int dirfd, const struct criu_dump_opts *o,
         struct rt_err **err)
{
  cl_str_add (&d->strings, "");
  d->pages_fd = openat (dirfd, "pages.img",
                        O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (d->pages_fd < 0)
    return rt_err_set (err, errno, "create pages.img");
  /* The memory first: the injections after it map a scratch page. */
  if (cl_seize (d, err) < 0 || cl_dump_mm (d, err) < 0
      || cl_inject_prepare (d, err) < 0 || cl_dump_threads (d, err) < 0
      || cl_dump_signals (d, err) < 0
      || cl_dump_files (d, o->skip_unsupported, err) < 0
      || cl_dump_misc (d, err) < 0)
    return -1;
  return cl_image_write (dirfd, d, err);
}

int
criu_dump (const struct criu_dump_opts *o, struct rt_err **err)
{
  struct cl_dump d;
  _cleanup_fd_ int dirfd = -1;
  int r;

  if (o->pid <= 0)
    return rt_err_set (err, EINVAL, "checkpoint: no process");
  if (rt_mkdir_p (o->image_dir, 0700, err) < 0)
    return -1;
  dirfd = open (o->image_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dirfd < 0)
    return rt_err_set (err, errno, "open image directory `%s`", o->image_dir);
  memset (&d, 0, sizeof d);
  d.pid = o->pid;
  d.pages_fd = -1;
  r = capture (&d, dirfd, o, err);
  /* On failure the process goes on as it was; on success it dies unless
   * asked to keep running, before anyone could see it move on. */
  cl_release (&d, r == 0 && !o->leave_running);
  if (r < 0)
    {
      unlinkat (dirfd, "pages.img", 0);
      unlinkat (dirfd, "core.img", 0);
      rt_err_wrap (err, "checkpoint of process %d", o->pid);
    }
  dump_free (&d);
  return r;
}
