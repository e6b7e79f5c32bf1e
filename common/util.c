#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

void
cm_freep (void *p)
{
  free (*(void **) p);
}

void
cm_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
      *fd = -1;
    }
}

void
cm_strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free (*p);
  free (v);
}

void
cm_strv_freep (char ***v)
{
  cm_strv_free (*v);
  *v = NULL;
}

size_t
cm_strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

static void __attribute__ ((noreturn))
oom (void)
{
  static const char m[] = "sandlock-oci: out of memory\n";
  if (write (2, m, sizeof m - 1) < 0)
    _exit (1);
  abort ();
}

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xcalloc (size_t n, size_t sz)
{
  void *p = calloc (n ? n : 1, sz ? sz : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup (s);
  if (r == NULL)
    oom ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    oom ();
  va_end (ap);
  return s;
}

ssize_t
cm_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  size_t done = 0;
  while (done < len)
    {
      ssize_t r = write (fd, p + done, len - done);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      done += (size_t) r;
    }
  return (ssize_t) done;
}

ssize_t
cm_read_all (int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t done = 0;
  while (done < len)
    {
      ssize_t r = read (fd, p + done, len - done);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      if (r == 0)
        break;
      done += (size_t) r;
    }
  return (ssize_t) done;
}

/* Reads all of |fd| (named |path| in errors) into *|out|. */
static int
read_all (int fd, const char *path, size_t max, char **out, size_t *len_out,
          struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 0;

  for (;;)
    {
      ssize_t r;
      if (cap - len < 4096)
        {
          cap = cap ? cap * 2 : 8192;
          buf = xrealloc (buf, cap + 1);
        }
      r = read (fd, buf + len, cap - len);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return cm_err_set (err, errno, "read `%s`", path);
        }
      if (r == 0)
        break;
      len += (size_t) r;
      if (len > max)
        return cm_err_set (err, EFBIG, "read `%s`: larger than %zu bytes",
                           path, max);
    }
  if (buf == NULL)
    buf = xmalloc (1);
  buf[len] = '\0';
  *out = cm_steal_ptr (&buf);
  if (len_out)
    *len_out = len;
  return 0;
}

int
cm_read_file_at (int dirfd, const char *path, size_t max, char **out,
                 size_t *len_out, struct cm_err **err)
{
  _cleanup_fd_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  return read_all (fd, path, max, out, len_out, err);
}

int
cm_read_regular_at (int dirfd, const char *path, size_t max, char **out,
                    size_t *len_out, struct cm_err **err)
{
  struct stat st;
  _cleanup_fd_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW
                                                 | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  if (fstat (fd, &st) < 0)
    return cm_err_set (err, errno, "stat `%s`", path);
  if (!S_ISREG (st.st_mode))
    return cm_err_set (err, EINVAL, "`%s` is not a regular file", path);
  return read_all (fd, path, max, out, len_out, err);
}

int
cm_write_file_at (int dirfd, const char *path, const void *buf, size_t len,
                  struct cm_err **err)
{
  _cleanup_fd_ int fd = openat (dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  if (cm_write_all (fd, buf, len) < 0)
    return cm_err_set (err, errno, "write `%s`", path);
  return 0;
}

int
cm_atomic_write_at (int dirfd, const char *name, const void *buf, size_t len,
                    mode_t mode, struct cm_err **err)
{
  _cleanup_free_ char *tmp = xasprintf (".%s.%d.tmp", name, (int) getpid ());
  _cleanup_fd_ int fd = openat (dirfd, tmp,
                                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    return cm_err_set (err, errno, "create `%s`", tmp);
  if (cm_write_all (fd, buf, len) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return cm_err_set (err, e, "write `%s`", tmp);
    }
  if (renameat (dirfd, tmp, dirfd, name) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return cm_err_set (err, e, "rename `%s` to `%s`", tmp, name);
    }
  return 0;
}

int
cm_mkdir_p (const char *path, mode_t mode, struct cm_err **err)
{
  _cleanup_free_ char *p = xstrdup (path);
  size_t n = strlen (p);
  /* From index 1: a leading '/' is the root, and p + 1 of "" is past
   * its end. */
  for (size_t i = 1; i < n; i++)
    {
      if (p[i] != '/')
        continue;
      p[i] = '\0';
      if (mkdir (p, mode) < 0 && errno != EEXIST)
        return cm_err_set (err, errno, "mkdir `%s`", p);
      p[i] = '/';
    }
  if (mkdir (p, mode) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "mkdir `%s`", p);
  /* clang 14's analyzer does not model __attribute__((cleanup)). */
  return 0; // NOLINT(clang-analyzer-unix.Malloc): p is freed by _cleanup_free_
}

static int
rm_rf_children (int dfd, struct cm_err **err)
{
  DIR *d = fdopendir (dfd);
  struct dirent *de;
  int ret = 0;

  if (d == NULL)
    {
      close (dfd);
      return cm_err_set (err, errno, "fdopendir");
    }
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (cm_rm_rf_at (dirfd (d), de->d_name, err) < 0)
        {
          ret = -1;
          break;
        }
    }
  closedir (d);
  return ret;
}

int
cm_rm_rf_at (int dirfd, const char *name, struct cm_err **err)
{
  int fd;
  if (unlinkat (dirfd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR && errno != EPERM)
    return cm_err_set (err, errno, "unlink `%s`", name);
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : cm_err_set (err, errno, "open `%s`", name);
  if (rm_rf_children (fd, err) < 0)
    return -1;
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return cm_err_set (err, errno, "rmdir `%s`", name);
  return 0;
}
