/* cm_copy_tree, the one tree copier (image bundles, tmpcopyup): data,
 * modes, owners, times, xattrs, symlinks (not followed), hardlinks, FIFOs,
 * devices only when asked and clamped to 0600 when asked, sockets (the
 * inode), a FIFO with two names still one inode, an existing name
 * refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"
#include "tests/unit/tap.h"

static char top[] = "/tmp/test_copy.XXXXXX";
static bool is_root;

static int
sub (const char *name)
{
  char p[256];
  snprintf (p, sizeof p, "%s/%s", top, name);
  mkdir (p, 0755);
  return open (p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void
build (int s)
{
  struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd, sk;
  mkdirat (s, "d", 0750);
  fd = openat (s, "d/file", O_CREAT | O_WRONLY, 0640);
  if (fd < 0 || write (fd, "hello", 5) != 5)
    abort ();
  (void) fsetxattr (fd, "user.test", "v", 1, 0);
  futimens (fd, old);
  close (fd);
  linkat (s, "d/file", s, "hard", 0);
  symlinkat ("/etc/passwd", s, "abs");
  mkfifoat (s, "fifo", 0604);
  linkat (s, "fifo", s, "fifo2", 0);
  if (is_root)
    {
      mknodat (s, "null", S_IFCHR | 0666, makedev (1, 3));
      fchmodat (s, "null", 0666, 0);          /* past the umask */
    }
  fchmodat (s, "d", 0750, 0);
  utimensat (s, "d", old, 0);
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s/src/sock", top);
  sk = socket (AF_UNIX, SOCK_STREAM, 0);
  if (sk >= 0)
    {
      (void) bind (sk, (struct sockaddr *) &sa, sizeof sa);
      close (sk);
    }
}

static bool
mode_is (int d, const char *name, mode_t want)
{
  struct stat st;
  return fstatat (d, name, &st, AT_SYMLINK_NOFOLLOW) == 0
         && (st.st_mode & 07777) == want;
}

int
main (void)
{
  struct cm_err *e = NULL;
  struct stat a, b;
  char buf[16] = "";
  int s, d, fd;
  ssize_t n;

  is_root = geteuid () == 0;
  if (mkdtemp (top) == NULL)
    return 77;
  s = sub ("src");
  d = sub ("dst");
  build (s);

  ok (cm_copy_tree (s, d, CM_COPY_OWNERS * is_root | CM_COPY_DEVICES, "copy",
                    "", &e) == 0, "copied %s", e ? e->msg : "");
  cm_err_free (&e);
  fd = openat (d, "d/file", O_RDONLY);
  n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  ok (n == 5 && memcmp (buf, "hello", 5) == 0, "file data");
  ok (mode_is (d, "d/file", 0640) && mode_is (d, "d", 0750),
      "file and directory modes");
  ok (fstatat (d, "d/file", &a, 0) == 0 && a.st_mtim.tv_sec == 1000000000
      && fstatat (d, "d", &b, 0) == 0 && b.st_mtim.tv_sec == 1000000000,
      "file and directory times");
  buf[0] = '\0';
  ok (fd >= 0 && fgetxattr (fd, "user.test", buf, sizeof buf) == 1
      && buf[0] == 'v', "user xattr (or tmpfs without user xattrs: %s)",
      strerror (errno));
  if (fd >= 0)
    close (fd);
  ok (fstatat (d, "d/file", &a, 0) == 0 && fstatat (d, "hard", &b, 0) == 0
      && a.st_ino == b.st_ino, "a hardlink stays a hardlink");
  n = readlinkat (d, "abs", buf, sizeof buf - 1);
  ok (n == 11 && memcmp (buf, "/etc/passwd", 11) == 0,
      "a symlink is copied, not followed");
  ok (fstatat (d, "fifo", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO (a.st_mode)
      && mode_is (d, "fifo", 0604), "a FIFO with its mode");
  ok (fstatat (d, "sock", &a, AT_SYMLINK_NOFOLLOW) == 0
      && S_ISSOCK (a.st_mode),
      "a socket is copied (its inode), not dropped");
  ok (fstatat (d, "fifo", &a, AT_SYMLINK_NOFOLLOW) == 0
      && fstatat (d, "fifo2", &b, AT_SYMLINK_NOFOLLOW) == 0
      && a.st_ino == b.st_ino, "a FIFO with two names stays one inode");
  if (is_root)
    ok (fstatat (d, "null", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR (a.st_mode)
        && a.st_rdev == makedev (1, 3) && mode_is (d, "null", 0666),
        "CM_COPY_DEVICES: a device node with its mode");
  else
    skip ("device nodes need root");

  ok (cm_copy_tree (s, d, 0, "copy", "/where", &e) < 0 && e
      && e->errno_ == EEXIST && strstr (e->msg, "copy: ")
      && strstr (e->msg, " `/where/"),
      "an existing name is refused, named: %s", e ? e->msg : "copied");
  cm_err_free (&e);
  close (d);

  d = sub ("nodev");
  ok (cm_copy_tree (s, d, 0, "copy", "", &e) == 0
      && faccessat (d, "null", F_OK, AT_SYMLINK_NOFOLLOW) < 0,
      "without CM_COPY_DEVICES no device node %s", e ? e->msg : "");
  cm_err_free (&e);
  close (d);
  if (is_root)
    {
      d = sub ("dev600");
      ok (cm_copy_tree (s, d, CM_COPY_DEVICES | CM_COPY_DEVICES_0600, "copy",
                        "", &e) == 0 && mode_is (d, "null", 0600),
          "CM_COPY_DEVICES_0600 clamps the mode %s", e ? e->msg : "");
      cm_err_free (&e);
      close (d);
    }
  close (s);
  {
    char cmd[300];
    snprintf (cmd, sizeof cmd, "rm -rf %s", top);
    if (system (cmd) != 0)
      printf ("# could not remove %s\n", top);
  }
  return tap_done ();
}
