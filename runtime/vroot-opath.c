/* open(O_PATH) in the view (docs/nsless.md "O_PATH").
 *
 * An open in the view is done here and its file injected with
 * SECCOMP_IOCTL_NOTIF_ADDFD, which takes its source with fget(): an O_PATH
 * file is refused there (EBADF), so an O_PATH fd cannot be given to the
 * caller at all.  What is injected instead is exactly what
 * open(path, O_RDONLY) through the view would have given it — reopened
 * from the O_PATH fd (the same inode, no second lookup) in the caller's
 * credentials (vroot-cred.c), under the supervisor's Landlock domain,
 * which is no wider than the container's: so nothing is reachable this way
 * that the caller could not open for reading itself.
 *
 *  - a directory: O_RDONLY | O_DIRECTORY (needs r on it, as getdents does);
 *  - a regular file: O_RDONLY;
 *  - anything else is never opened: a device's open runs its driver
 *    (side effects: a tty's, a tape's rewind), a FIFO's open releases a
 *    writer blocked in its own open, a socket cannot be opened.  EACCES,
 *    as for a file the caller may not read: a program that walks a tree
 *    skips it as it skips any unreadable entry;
 *  - a symlink (O_PATH | O_NOFOLLOW): ELOOP, what O_NOFOLLOW says without
 *    O_PATH, which programs already read as "a symlink: readlinkat() its
 *    name".
 *
 * What differs from a real O_PATH fd: fcntl(F_GETFL) shows O_RDONLY, and
 * read()/getdents() work where O_PATH gives EBADF (both only ever for an
 * object the caller may read); an O_RDONLY open breaks a write lease and
 * is seen by fanotify/inotify as an open. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vroot-sup.h"

int
vr_opath_fd (int pfd)
{
  char link[64];
  struct stat st;
  int flags, fd;
  if (fstat (pfd, &st) < 0)
    return -errno;
  switch (st.st_mode & S_IFMT)
    {
    case S_IFDIR:
      flags = O_RDONLY | O_DIRECTORY;
      break;
    case S_IFREG:
      flags = O_RDONLY | O_NOCTTY;
      break;
    case S_IFLNK:
      return -ELOOP;
    default:
      return -EACCES;
    }
  snprintf (link, sizeof link, "/proc/self/fd/%d", pfd);
  fd = open (link, flags | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}
