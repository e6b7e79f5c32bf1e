/* Small helpers shared by every folder: cleanup attributes, owned-fd and
 * owned-pointer steals, whole-file I/O, atomic replace.  Nothing here knows
 * about containers. */
#ifndef SANDLOCK_COMMON_UTIL_H
#define SANDLOCK_COMMON_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/types.h>

#include "err.h"

#define _cleanup_(f) __attribute__ ((cleanup (f)))
#define _cleanup_free_ _cleanup_ (rt_freep)
#define _cleanup_fd_ _cleanup_ (rt_closep)
#define _cleanup_strv_ _cleanup_ (rt_strv_freep)
#define _cleanup_err_ _cleanup_ (rt_err_free)

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

void rt_freep (void *p);
void rt_closep (int *fd);            /* closes when >= 0; never retries EINTR */
void rt_strv_freep (char ***v);
void rt_strv_free (char **v);

static inline int
rt_steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

static inline void *
rt_steal_ptr_impl (void *pp)
{
  void **p = (void **) pp;
  void *r = *p;
  *p = NULL;
  return r;
}
/* Type-checked: the expression keeps the pointee type. */
#define rt_steal_ptr(pp) (0 ? *(pp) : rt_steal_ptr_impl (pp))

/* Allocation that aborts on OOM: a container runtime cannot do anything
 * useful after malloc fails, and checking every strdup hides real errors. */
void *xmalloc (size_t n);
void *xcalloc (size_t n, size_t sz);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Reads at most |max| bytes of the file at |dirfd|/|path| (AT_FDCWD ok) into
 * a NUL-terminated buffer.  Fails with EFBIG past |max|. */
int rt_read_file_at (int dirfd, const char *path, size_t max, char **out,
                     size_t *len_out, struct rt_err **err);

/* Writes |len| bytes to |path| (O_WRONLY|O_TRUNC, no create). */
int rt_write_file_at (int dirfd, const char *path, const void *buf, size_t len,
                      struct rt_err **err);

/* Atomically replaces |dirfd|/|name| with |buf|: temp file in the same
 * directory, fsync-free write, rename.  Readers see old or new, never half. */
int rt_atomic_write_at (int dirfd, const char *name, const void *buf,
                        size_t len, mode_t mode, struct rt_err **err);

/* mkdir -p with |mode| for the components it creates. */
int rt_mkdir_p (const char *path, mode_t mode, struct rt_err **err);

/* Removes a tree below dirfd/name without following symlinks; ENOENT ok. */
int rt_rm_rf_at (int dirfd, const char *name, struct rt_err **err);

/* write(2)/read(2) loops over EINTR and short counts. */
ssize_t rt_write_all (int fd, const void *buf, size_t len);
ssize_t rt_read_all (int fd, void *buf, size_t len);

/* Returns true when |s| starts with |prefix|. */
static inline bool
rt_startswith (const char *s, const char *prefix)
{
  while (*prefix)
    if (*s++ != *prefix++)
      return false;
  return true;
}

size_t rt_strv_len (char *const *v);

#endif
