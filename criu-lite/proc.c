/* The /proc a capture reads, as a directory fd opened before the capture
 * may chroot into its target's root (criu_dump_opts.target_root), and
 * what is read through it by every capture file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int proc_dir = -1;

int
cl_proc_dir_open (struct cm_err **err)
{
  proc_dir = open ("/proc", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (proc_dir < 0)
    return cm_err_set (err, errno, "open /proc");
  return 0;
}

void
cl_proc_dir_close (void)
{
  if (proc_dir >= 0)
    close (proc_dir);
  proc_dir = -1;
}

int
cl_proc_dir (void)
{
  return proc_dir;
}

DIR *
cl_opendir (const char *rel)
{
  int fd = openat (proc_dir, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL && fd >= 0)
    close (fd);
  return d;
}

/* The innermost pid of a thread (NSpid's last field): the pid the process
 * has in its own pid namespace, which a restore in a fresh one gives back. */
pid_t
cl_ns_tid (pid_t pid, pid_t tid)
{
  char path[64];
  _cleanup_free_ char *s = NULL;
  struct cm_err *e = NULL;
  char *p, *end;
  pid_t last = tid;
  snprintf (path, sizeof path, "%d/task/%d/status", pid, tid);
  if (cm_read_file_at (proc_dir, path, 1 << 16, &s, NULL, &e) < 0)
    {
      cm_err_free (&e);
      return tid;
    }
  p = strstr (s, "NSpid:");
  if (p == NULL)
    return tid;
  p += 6;
  for (;;)
    {
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      last = (pid_t) v;
      p = end;
    }
  return last;
}

