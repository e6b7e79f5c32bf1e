/* cm_openat2: the same expectations run twice, once through the kernel's
 * openat2 and once through the fallback walk (forced with the test hook),
 * on a tree holding the escapes an image can carry: absolute and `..`
 * symlinks, `..` past the root, symlink loops, /proc magic links. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "tests/unit/tap.h"

static char top[] = "/tmp/test_openat2.XXXXXX";
static int rootfd;

static void
build_tree (void)
{
  char p[256];
  if (mkdtemp (top) == NULL)
    abort ();
  snprintf (p, sizeof p, "%s/root", top);
  if (mkdir (p, 0755) < 0)
    abort ();
  rootfd = open (p, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mkdirat (rootfd, "a", 0755) || mkdirat (rootfd, "a/b", 0755)
      || mkdirat (rootfd, "etc", 0755)
      || symlinkat ("/a/b", rootfd, "abs")
      || symlinkat ("../../../../../etc", rootfd, "a/up")
      || symlinkat ("a/b/file", rootfd, "rel")
      || symlinkat ("loop", rootfd, "loop")
      || symlinkat ("/outside", rootfd, "out"))
    abort ();
  close (openat (rootfd, "a/b/file", O_CREAT | O_WRONLY, 0644));
  close (openat (rootfd, "etc/marker", O_CREAT | O_WRONLY, 0644));
  snprintf (p, sizeof p, "%s/outside", top);
  close (open (p, O_CREAT | O_WRONLY, 0644));
}

/* Whether |fd| is the file at |rel| below the root (compared by inode). */
static bool
same (int fd, const char *rel)
{
  struct stat a, b;
  bool r = fd >= 0 && fstat (fd, &a) == 0
           && fstatat (rootfd, rel, &b, AT_SYMLINK_NOFOLLOW) == 0
           && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
  if (fd >= 0)
    close (fd);
  return r;
}

static bool
fails (int fd, int want)
{
  int e = errno;
  if (fd >= 0)
    {
      close (fd);
      return false;
    }
  if (e != want)
    printf ("#   errno %d, expected %d\n", e, want);
  return e == want;
}

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

static void
expectations (const char *mode)
{
  char proc[64];
  int fd;

  ok (same (cm_openat2 (rootfd, "a/b/file", O_RDONLY, IN_ROOT), "a/b/file"),
      "%s: a plain path", mode);
  ok (same (cm_openat2 (rootfd, "abs/file", O_RDONLY, IN_ROOT), "a/b/file"),
      "%s: an absolute symlink resolves inside the root", mode);
  ok (same (cm_openat2 (rootfd, "a/up/marker", O_RDONLY, IN_ROOT),
            "etc/marker"),
      "%s: a `..` symlink stops at the root", mode);
  ok (fails (cm_openat2 (rootfd, "../outside", O_RDONLY, IN_ROOT), ENOENT),
      "%s: `..` past the root stays inside it", mode);
  ok (fails (cm_openat2 (rootfd, "out", O_RDONLY, IN_ROOT), ENOENT),
      "%s: a symlink to a host path stays inside the root", mode);
  ok (same (cm_openat2 (rootfd, "/", O_PATH | O_DIRECTORY, IN_ROOT), "."),
      "%s: \"/\" is the root", mode);
  ok (same (cm_openat2 (rootfd, "rel", O_PATH, IN_ROOT), "a/b/file"),
      "%s: O_PATH follows a last symlink", mode);
  ok (same (cm_openat2 (rootfd, "abs", O_PATH | O_DIRECTORY, IN_ROOT), "a/b"),
      "%s: O_DIRECTORY follows a last symlink to a directory", mode);
  ok (fails (cm_openat2 (rootfd, "a/b/file", O_PATH | O_DIRECTORY, IN_ROOT),
             ENOTDIR),
      "%s: O_DIRECTORY on a file is ENOTDIR", mode);
  ok (same (cm_openat2 (rootfd, "rel", O_PATH | O_NOFOLLOW, IN_ROOT), "rel"),
      "%s: O_NOFOLLOW opens the link itself", mode);
  ok (fails (cm_openat2 (rootfd, "rel", O_RDONLY,
                         IN_ROOT | RESOLVE_NO_SYMLINKS), ELOOP),
      "%s: RESOLVE_NO_SYMLINKS refuses a symlink", mode);
  ok (fails (cm_openat2 (rootfd, "loop", O_RDONLY, IN_ROOT), ELOOP),
      "%s: a symlink loop ends in ELOOP", mode);
  ok (fails (cm_openat2 (rootfd, "abs/file", O_RDONLY, RESOLVE_BENEATH),
             EXDEV),
      "%s: RESOLVE_BENEATH refuses an absolute symlink", mode);
  ok (fails (cm_openat2 (rootfd, "a/../../outside", O_RDONLY,
                         RESOLVE_BENEATH), EXDEV),
      "%s: RESOLVE_BENEATH refuses `..` past the start", mode);
  ok (same (cm_openat2 (rootfd, "a/b/../b/./file", O_RDONLY, RESOLVE_BENEATH),
            "a/b/file"),
      "%s: `..` and `.` below the start", mode);
  ok (fails (cm_openat2 (rootfd, "a/b/file/x", O_RDONLY, IN_ROOT), ENOTDIR),
      "%s: a file in the middle is ENOTDIR", mode);
  ok (fails (cm_openat2 (rootfd, "", O_RDONLY, IN_ROOT), ENOENT),
      "%s: an empty path is ENOENT", mode);
  fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  ok (fails (cm_openat2 (AT_FDCWD, proc, O_RDONLY, RESOLVE_NO_MAGICLINKS),
             ELOOP),
      "%s: RESOLVE_NO_MAGICLINKS refuses /proc/self/fd/N", mode);
  {
    /* The same link named from the current directory (dirfd AT_FDCWD). */
    char cwd[4096], rel[32];
    if (getcwd (cwd, sizeof cwd) && chdir ("/proc/self/fd") == 0)
      {
        snprintf (rel, sizeof rel, "%d", fd);
        ok (fails (cm_openat2 (AT_FDCWD, rel, O_RDONLY, RESOLVE_NO_MAGICLINKS),
                   ELOOP),
            "%s: ... also relative to the current directory", mode);
        if (chdir (cwd) < 0)
          abort ();
      }
    else
      skip ("cannot enter /proc/self/fd");
  }
  close (fd);
  fd = cm_openat2 (AT_FDCWD, "/proc/self/status", O_RDONLY,
                   RESOLVE_NO_MAGICLINKS);
  ok (fd >= 0, "%s: /proc/self (an ordinary link) is followed", mode);
  if (fd >= 0)
    close (fd);
  fd = cm_openat2 (AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY,
                   RESOLVE_NO_XDEV);
  ok (fails (fd, EXDEV), "%s: RESOLVE_NO_XDEV refuses a mount crossing",
      mode);
  ok (fails (cm_openat2 (rootfd, "a", O_CREAT | O_RDONLY, IN_ROOT), EINVAL),
      "%s: O_CREAT is refused", mode);
}

int
main (void)
{
  char cmd[300];
  build_tree ();
  if (cm_openat2_supported ())
    expectations ("openat2");
  else
    skip ("this kernel has no openat2: the fallback runs below");
  cm_openat2_force_fallback (true);
  ok (!cm_openat2_supported (), "the test hook forces the fallback");
  expectations ("fallback");
  cm_openat2_force_fallback (false);
  close (rootfd);
  snprintf (cmd, sizeof cmd, "rm -rf %s", top);
  if (system (cmd) != 0)
    printf ("# could not remove %s\n", top);
  return tap_done ();
}
