/* /dev/tty in the view (docs/nsless.md "process.terminal").  The kernel
 * answers an open of char 5:0 with the opener's controlling terminal; the
 * opener here is the supervisor, which leads a session of its own with no
 * terminal (ENXIO for every caller).  So an open that resolves to 5:0 is
 * answered with the *caller's* controlling terminal: its device number
 * from /proc/<tid>/stat (tty_nr; 0: none, ENXIO as the kernel says), and
 * an fd the caller holds of that very device, taken from it
 * (vr_caller_fd, the supervisor's ptrace-class right) and reopened through
 * /proc/self/fd/N in the caller's credentials with its flags: a fresh open
 * file description, as the kernel's.  Nothing else is ever handed over:
 * a controlling terminal the caller has no fd of (it closed them all) is
 * ENXIO too, and no path of the host is looked up.
 *
 * The reopen is a new open of the host's /dev/pts/N, which the
 * supervisor's Landlock domain allows only for the init's own terminal
 * (process.terminal: the runtime grants that one inode, vroot-run.c).  A
 * pty made later (exec -t) is not in the domain, which cannot grow: the
 * caller's own description is injected then (a dup: it shares the file
 * status flags, O_NONBLOCK included, with the fd it came from), and only
 * when its access mode covers the one asked for (else EACCES). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define DEVTTY makedev (5, 0)

/* A file bind mount (the default /dev/tty is one) shows as S_IFREG in
 * the walk: its pinned fd says what it is. */
int
vr_devtty_is (const struct vr_path *p)
{
  struct stat st;
  _cleanup_fd_ int fd = -1;
  if (p->ent == NULL)
    return 0;
  if (!p->ent->dir && strcmp (p->rel, ".") == 0)
    {
      if (fstat (p->ent->fd, &st) < 0)
        return -errno;
    }
  else if (p->type != S_IFCHR)
    return 0;
  else if ((fd = vr_open (p, O_PATH, 0)) < 0)
    return fd;
  else if (fstat (fd, &st) < 0)
    return -errno;
  return S_ISCHR (st.st_mode) && st.st_rdev == DEVTTY;
}

/* The caller's controlling terminal (field 7 of /proc/<tid>/stat, in the
 * kernel's encoding) in |out|: 1, 0 for none, -ENXIO when unreadable. */
static int
ctty_of (pid_t tid, dev_t *out)
{
  char path[64], buf[1024];
  int nr = 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) tid);
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -ENXIO;
  buf[n] = '\0';
  /* The name (field 2) may hold anything: count from its closing paren. */
  char *p = strrchr (buf, ')');
  if (p == NULL || sscanf (p + 1, " %*c %*d %*d %*d %d", &nr) != 1)
    return -ENXIO;
  *out = makedev (((unsigned) nr >> 8) & 0xfff,
                  ((unsigned) nr & 0xff) | (((unsigned) nr >> 12) & 0xfff00));
  return nr != 0;
}

/* An fd of the caller's thread group on device |tty|, taken from it
 * (owned), or -ENXIO. */
static int
caller_tty_fd (struct vr_call *c, dev_t tty)
{
  char path[64];
  struct stat st;
  int found = -ENXIO;
  snprintf (path, sizeof path, "/proc/%d/fd", (int) c->task->tgid);
  bool was = vr_cred_out ();
  DIR *d = opendir (path);
  vr_cred_back (was);
  if (d == NULL)
    return -ENXIO;
  for (struct dirent *de; found < 0 && (de = readdir (d)) != NULL;)
    {
      if (!vr_all_digits (de->d_name))
        continue;
      int fd = vr_caller_fd (c, c->task->tgid, atoi (de->d_name));
      if (fd < 0)
        continue;
      if (fstat (fd, &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == tty)
        found = fd;
      else
        close (fd);
    }
  closedir (d);
  return found;
}

/* The caller's own description |fd| may be handed over when its access
 * mode covers the one |flags| asks for. */
static int
covers (int fd, int flags)
{
  int have = fcntl (fd, F_GETFL);
  if (have < 0)
    return -errno;
  have &= O_ACCMODE;
  return have == O_RDWR || have == (flags & O_ACCMODE) ? 0 : -EACCES;
}

/* The fd to inject: a fresh description of the caller's terminal, or
 * its own where the supervisor's domain refuses the reopen. */
static int
devtty_fd (struct vr_call *c, int flags)
{
  char link[64];
  dev_t tty;
  int r;
  if ((r = ctty_of (c->tid, &tty)) <= 0)
    return r < 0 ? r : -ENXIO;
  _cleanup_fd_ int own = caller_tty_fd (c, tty);
  if (own < 0)
    return own;
  snprintf (link, sizeof link, "/proc/self/fd/%d", own);
  /* O_NOCTTY: the supervisor leads a session with no terminal, and must
   * not take this one as its own. */
  int fd = open (link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_TRUNC))
                       | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0)
    return fd;
  if (errno != EACCES)
    return -errno;
  r = covers (own, flags);
  return r < 0 ? r : cm_steal_fd (&own);
}

int64_t
vr_devtty_open (struct vr_call *c, int flags)
{
  if (flags & O_DIRECTORY)
    return -ENOTDIR;
  int fd = devtty_fd (c, flags);
  if (fd < 0)
    return fd;
  int64_t ret = vr_inject (c, fd, flags & O_CLOEXEC);
  close (fd);
  return ret;
}
