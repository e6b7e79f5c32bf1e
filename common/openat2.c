#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"

#define KNOWN_RESOLVE                                                   \
  (RESOLVE_IN_ROOT | RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS              \
   | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define MAX_LINKS 40       /* the kernel's own limit (MAXSYMLINKS) */
#define MAX_DEPTH 4096

enum { PROBE_UNKNOWN, PROBE_YES, PROBE_NO };
static int probe_state;    /* the answer is the same for every thread */

bool
cm_openat2_supported (void)
{
  int s = __atomic_load_n (&probe_state, __ATOMIC_RELAXED);
  if (s == PROBE_UNKNOWN)
    {
      struct open_how how = { .flags = O_PATH | O_CLOEXEC,
                              .resolve = RESOLVE_IN_ROOT };
      /* Opening "/" cannot fail but for the syscall itself missing or
       * refused by a seccomp filter: either way the walk is the way. */
      int fd = (int) syscall (SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
      s = fd >= 0 ? PROBE_YES : PROBE_NO;
      if (fd >= 0)
        close (fd);
      __atomic_store_n (&probe_state, s, __ATOMIC_RELAXED);
    }
  return s == PROBE_YES;
}

void
cm_openat2_force_fallback (bool on)
{
  __atomic_store_n (&probe_state, on ? PROBE_NO : PROBE_UNKNOWN,
                    __ATOMIC_RELAXED);
}

/* ---- the fallback walk ------------------------------------------------ */

struct walk
{
  int dirfd;               /* the caller's, borrowed */
  int base;                /* where depth 0 is: dirfd, or owned when != dirfd */
  int stack[64];
  int *fds;                /* stack, or a heap copy past 64 entries */
  size_t depth, cap;
  uint64_t resolve;
  int links;
  dev_t dev;
  char *rest;              /* owned: what is left to resolve */
};

static int
cur (const struct walk *w)
{
  return w->depth ? w->fds[w->depth - 1] : w->base;
}

static void
drop_to_base (struct walk *w)
{
  while (w->depth)
    close (w->fds[--w->depth]);
}

static void
set_base (struct walk *w, int fd)
{
  drop_to_base (w);
  if (w->base != w->dirfd)
    close (w->base);
  w->base = fd;
}

static void
walk_free (struct walk *w)
{
  set_base (w, w->dirfd);
  if (w->fds != w->stack)
    free (w->fds);
  free (w->rest);
}

static int
push (struct walk *w, int fd)
{
  if (w->depth == w->cap)
    {
      if (w->cap >= MAX_DEPTH)
        {
          close (fd);
          errno = ENAMETOOLONG;
          return -1;
        }
      w->cap *= 2;
      if (w->fds == w->stack)
        {
          w->fds = xmalloc (w->cap * sizeof *w->fds);
          memcpy (w->fds, w->stack, sizeof w->stack);
        }
      else
        w->fds = xrealloc (w->fds, w->cap * sizeof *w->fds);
    }
  w->fds[w->depth++] = fd;
  return 0;
}

/* An absolute start: the root is |dirfd| in root mode, escaping in beneath
 * mode, and the process's root otherwise. */
static int
restart_at_root (struct walk *w)
{
  int fd;
  if (w->resolve & RESOLVE_IN_ROOT)
    {
      set_base (w, w->dirfd);
      return 0;
    }
  if (w->resolve & RESOLVE_BENEATH)
    {
      errno = EXDEV;
      return -1;
    }
  fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  set_base (w, fd);
  return 0;
}

static int
dotdot (struct walk *w)
{
  int fd;
  if (w->depth)
    {
      close (w->fds[--w->depth]);
      return 0;
    }
  if (w->resolve & RESOLVE_IN_ROOT)
    return 0;                       /* ".." of the root is the root */
  if (w->resolve & RESOLVE_BENEATH)
    {
      errno = EXDEV;
      return -1;
    }
  fd = openat (w->base, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  set_base (w, fd);
  return 0;
}

static int
check_xdev (const struct walk *w, int fd)
{
  struct stat st;
  if (!(w->resolve & RESOLVE_NO_XDEV))
    return 0;
  if (fstat (fd, &st) < 0)
    return -1;
  if (st.st_dev != w->dev)
    {
      errno = EXDEV;
      return -1;
    }
  return 0;
}

/* Replaces the symlink |name| (in cur) by its target in front of w->rest.
 * In /proc only a relative target is an ordinary link ("self"); anything
 * else there is a magic link to an open file, and is refused. */
static int
follow (struct walk *w, const char *name)
{
  char target[PATH_MAX];
  struct statfs sf;
  ssize_t n;
  char *rest;

  if ((w->resolve & RESOLVE_NO_SYMLINKS) || ++w->links > MAX_LINKS)
    {
      errno = ELOOP;
      return -1;
    }
  n = readlinkat (cur (w), name, target, sizeof target - 1);
  if (n < 0)
    return -1;
  target[n] = '\0';
  if ((w->resolve & RESOLVE_NO_MAGICLINKS)
      && (cur (w) == AT_FDCWD ? statfs (".", &sf) : fstatfs (cur (w), &sf)) == 0
      && sf.f_type == PROC_SUPER_MAGIC
      && (target[0] == '/' || strchr (target, ':') != NULL))
    {
      errno = ELOOP;
      return -1;
    }
  if (target[0] == '/' && restart_at_root (w) < 0)
    return -1;
  if (strlen (target) + strlen (w->rest) > 4 * PATH_MAX)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  rest = xasprintf ("%s/%s", target, w->rest);
  free (w->rest);
  w->rest = rest;
  return 0;
}

/* The last component: opened with the caller's flags, never following a
 * symlink by itself. */
static int
open_last (struct walk *w, const char *name, int flags, bool *again)
{
  bool nofollow = (flags & O_NOFOLLOW) != 0;
  struct stat st;
  int fd = openat (cur (w), name, flags | O_NOFOLLOW | O_CLOEXEC);

  *again = false;
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && !nofollow)
    {
      /* O_NOFOLLOW meets a symlink: ELOOP, or ENOTDIR with O_DIRECTORY. */
      int e = errno;
      if (fstatat (cur (w), name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || !S_ISLNK (st.st_mode))
        {
          errno = e;
          return -1;
        }
    }
  else if (fd >= 0 && (flags & O_PATH) && !nofollow)
    {
      if (fstat (fd, &st) < 0 || !S_ISLNK (st.st_mode))
        goto opened;
      close (fd);
    }
  else if (fd < 0)
    return -1;
  else
    goto opened;
  *again = true;
  return follow (w, name);

opened:
  if (check_xdev (w, fd) < 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

/* An inner component: must be a directory (or a link to one). */
static int
step (struct walk *w, const char *name)
{
  struct stat st;
  int fd = openat (cur (w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0)
    goto fail;
  if (S_ISLNK (st.st_mode))
    {
      close (fd);
      return follow (w, name);
    }
  if (!S_ISDIR (st.st_mode))
    {
      errno = ENOTDIR;
      goto fail;
    }
  if (check_xdev (w, fd) < 0)
    goto fail;
  return push (w, fd);
fail:
  {
    int e = errno;
    close (fd);
    errno = e;
  }
  return -1;
}

/* Splits the next component off w->rest into |name|; returns false at the
 * end.  *last is set when only slashes follow it. */
static bool
next_component (struct walk *w, char *name, char **tail, bool *last)
{
  char *p = w->rest, *e;
  size_t len;
  while (*p == '/')
    p++;
  if (*p == '\0')
    return false;
  e = strchrnul (p, '/');
  len = (size_t) (e - p);
  if (len >= NAME_MAX + 1)
    len = NAME_MAX + 1;                     /* openat says ENAMETOOLONG */
  memcpy (name, p, len);
  name[len] = '\0';
  while (*e == '/')
    e++;
  *tail = e;
  *last = *e == '\0';
  return true;
}

static int
walk_run (struct walk *w, int flags)
{
  char name[NAME_MAX + 2];
  char *tail;
  bool last, again;
  int fd;

  while (next_component (w, name, &tail, &last))
    {
      char *t = xstrdup (tail);
      free (w->rest);
      w->rest = t;                  /* follow() puts a target before it */
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        {
          if (name[1] == '.' && dotdot (w) < 0)
            return -1;
          if (last)
            return openat (cur (w), ".", flags | O_CLOEXEC);
          continue;
        }
      if (!last)
        {
          if (step (w, name) < 0)
            return -1;
          continue;
        }
      fd = open_last (w, name, flags, &again);
      if (!again)
        return fd;
      if (fd < 0)
        return -1;
    }
  /* The path named the start itself ("/" or only slashes). */
  return openat (cur (w), ".", flags | O_CLOEXEC);
}

static int
fallback (int dirfd, const char *path, int flags, uint64_t resolve)
{
  struct walk w = { .dirfd = dirfd, .base = dirfd, .resolve = resolve,
                    .cap = 64 };
  struct stat st;
  int fd, e;

  w.fds = w.stack;
  if (*path == '\0')
    {
      errno = ENOENT;
      return -1;
    }
  if (resolve & RESOLVE_NO_XDEV)
    {
      if (fstatat (dirfd, ".", &st, 0) < 0)
        return -1;
      w.dev = st.st_dev;
    }
  w.rest = xstrdup (path);
  if (path[0] == '/' && restart_at_root (&w) < 0)
    fd = -1;
  else
    fd = walk_run (&w, flags);
  e = errno;
  walk_free (&w);
  errno = e;
  return fd;
}

int
cm_openat2 (int dirfd, const char *path, int flags, uint64_t resolve)
{
  struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC),
                          .resolve = resolve };
  int fd, tries = 0;

  if ((resolve & ~(uint64_t) KNOWN_RESOLVE) || (flags & O_CREAT)
      || (flags & O_TMPFILE) == O_TMPFILE)
    {
      errno = EINVAL;
      return -1;
    }
  if (!cm_openat2_supported ())
    return fallback (dirfd, path, flags, resolve);
  /* EAGAIN: a rename raced the lookup (in-root and beneath modes); the
   * kernel asks for a retry, which cannot loop while nothing renames. */
  do
    fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
  while (fd < 0 && errno == EAGAIN && ++tries < 64);
  return fd;
}
