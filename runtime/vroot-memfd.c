/* See vroot-memfd.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-memfd.h"

int
vr_read_whole (int fd, size_t max, char **buf, size_t *len)
{
  size_t cap = 0;
  ssize_t n;
  *buf = NULL;
  *len = 0;
  do
    {
      if (*len == cap && (cap = cap ? cap * 2 : 65536) > max)
        return -EFBIG;
      *buf = xrealloc (*buf, cap);
      n = read (fd, *buf + *len, cap - *len);
      *len += n > 0 ? (size_t) n : 0;
    }
  while (n > 0);
  return n < 0 ? -errno : 0;
}

int
vr_memfd_writer (const char *name, FILE **out)
{
  int m = memfd_create (name, MFD_CLOEXEC);
  if (m < 0)
    return -errno;
  int d = dup (m);
  *out = d < 0 ? NULL : fdopen (d, "w");
  if (*out == NULL)
    {
      if (d >= 0)
        close (d);
      close (m);
      return -ENOMEM;
    }
  return m;
}

int
vr_memfd_done (int m, FILE *out)
{
  if (fclose (out) != 0 || lseek (m, 0, SEEK_SET) < 0)
    {
      close (m);
      return -EIO;
    }
  return m;
}
