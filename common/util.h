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
#define _cleanup_free_ _cleanup_ (cm_freep)
#define _cleanup_fd_ _cleanup_ (cm_closep)
#define _cleanup_strv_ _cleanup_ (cm_strv_freep)
#define _cleanup_err_ _cleanup_ (cm_err_free)

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

void cm_freep (void *p);
void cm_closep (int *fd);            /* closes when >= 0; never retries EINTR */
void cm_strv_freep (char ***v);
void cm_strv_free (char **v);

static inline int
cm_steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

static inline void *
cm_steal_ptr_impl (void *pp)
{
  void **p = (void **) pp;
  void *r = *p;
  *p = NULL;
  return r;
}
/* Type-checked: the expression keeps the pointee type. */
#define cm_steal_ptr(pp) (0 ? *(pp) : cm_steal_ptr_impl (pp))

/* Allocation that aborts on OOM: a container runtime cannot do anything
 * useful after malloc fails, and checking every strdup hides real errors. */
void *xmalloc (size_t n);
void *xcalloc (size_t n, size_t sz);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Reads at most |max| bytes of the file at |dirfd|/|path| (AT_FDCWD ok) into
 * a NUL-terminated buffer.  Fails with EFBIG past |max|. */
int cm_read_file_at (int dirfd, const char *path, size_t max, char **out,
                     size_t *len_out, struct cm_err **err);

/* The same for a file that must be a regular file, reached without
 * following a final symlink and without blocking: a FIFO or device planted
 * where a record is expected fails (EINVAL) instead of hanging the reader. */
int cm_read_regular_at (int dirfd, const char *path, size_t max, char **out,
                        size_t *len_out, struct cm_err **err);

/* Writes |len| bytes to |path| (O_WRONLY|O_TRUNC, no create). */
int cm_write_file_at (int dirfd, const char *path, const void *buf, size_t len,
                      struct cm_err **err);

/* Atomically replaces |dirfd|/|name| with |buf|: temp file in the same
 * directory, fsync-free write, rename.  Readers see old or new, never half. */
int cm_atomic_write_at (int dirfd, const char *name, const void *buf,
                        size_t len, mode_t mode, struct cm_err **err);

/* mkdir -p with |mode| for the components it creates. */
int cm_mkdir_p (const char *path, mode_t mode, struct cm_err **err);

/* Removes a tree below dirfd/name without following symlinks; ENOENT ok. */
int cm_rm_rf_at (int dirfd, const char *name, struct cm_err **err);

/* write(2)/read(2) loops over EINTR and short counts. */
ssize_t cm_write_all (int fd, const void *buf, size_t len);
ssize_t cm_read_all (int fd, void *buf, size_t len);

/* Returns true when |s| starts with |prefix|. */
static inline bool
cm_startswith (const char *s, const char *prefix)
{
  while (*prefix)
    if (*s++ != *prefix++)
      return false;
  return true;
}

size_t cm_strv_len (char *const *v);

#endif
