/* The "stdio" record of a container's state.json (oci/stdio_record.h):
 * one line per fd 0-2, "K DEV INO MNT_ID", INO 0 when the fd was closed,
 * MNT_ID 0 for a terminal. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "stdio_record.h"

/* "mnt_id:" of /proc/PID/fdinfo/FD (|pid| 0: self); 0 when unknown. */
static uint64_t
mnt_id_of (pid_t pid, int fd)
{
  _cleanup_free_ char *path = pid ? xasprintf ("/proc/%d/fdinfo/%d", pid, fd)
                                  : xasprintf ("/proc/self/fdinfo/%d", fd);
  _cleanup_free_ char *s = NULL;
  struct cm_err *e = NULL;
  const char *p;
  if (cm_read_file_at (AT_FDCWD, path, 1 << 16, &s, NULL, &e) < 0)
    {
      cm_err_free (&e);
      return 0;
    }
  p = strstr (s, "mnt_id:");
  return p ? strtoull (p + 7, NULL, 10) : 0;
}

/* fd |k| as the init got it; 1 when that cannot be known. */
static int
identity (pid_t pid, bool terminal, int k, struct criu_stdio *id,
          struct cm_err **err)
{
  struct stat st;
  memset (id, 0, sizeof *id);
  if (terminal)
    {
      /* the pty the runtime made in the init: its devpts inode is its
       * index in the container's devpts */
      _cleanup_free_ char *path = xasprintf ("/proc/%d/fd/%d", pid, k);
      if (stat (path, &st) < 0)
        {
          /* closed: none; a runtime without CAP_SYS_PTRACE over the
           * parked, non-dumpable init (rootless): no record, checkpoint
           * takes the init's fds of the moment */
          if (errno == ENOENT)
            return 0;
          if (errno == EACCES || errno == EPERM)
            return 1;
          return cm_err_set (err, errno, "stdio: stat `%s`", path);
        }
    }
  else
    {
      if (fstat (k, &st) < 0)
        return errno == EBADF ? 0 : cm_err_set (err, errno, "stdio: fstat fd %d", k);
      id->mnt_id = mnt_id_of (0, k);
    }
  id->dev = (uint64_t) st.st_dev;
  id->ino = (uint64_t) st.st_ino;
  return 0;
}

int
oci_stdio_record (pid_t pid, bool terminal, char **out, struct cm_err **err)
{
  char buf[256];
  size_t len = 0;
  *out = NULL;
  for (int k = 0; k < 3; k++)
    {
      struct criu_stdio id;
      int r = identity (pid, terminal, k, &id, err);
      if (r != 0)
        return r < 0 ? -1 : 0;
      len += (size_t) snprintf (buf + len, sizeof buf - len, "%d %llu %llu %llu\n",
                                k, (unsigned long long) id.dev,
                                (unsigned long long) id.ino,
                                (unsigned long long) id.mnt_id);
    }
  *out = xstrdup (buf);
  return 0;
}

int
oci_stdio_load (const char *rec, struct criu_stdio out[3], struct cm_err **err)
{
  const char *p = rec;
  if (rec == NULL)
    return 0;
  for (int k = 0; k < 3; k++)
    {
      unsigned long long dev, ino, mnt;
      int got, n = 0;
      if (sscanf (p, "%d %llu %llu %llu\n%n", &got, &dev, &ino, &mnt, &n) != 4
          || got != k || n == 0)
        return cm_err_set (err, 0, "state.json: stdio: line %d is not "
                           "\"%d DEV INO MNT_ID\"", k + 1, k);
      out[k] = (struct criu_stdio) { dev, ino, mnt };
      p += n;
    }
  return 1;
}
