/* vrsys: the calls tests/integration/nsless_sys.bats makes from inside a
 * namespace-less container.  Prints "OK" (or a result) on success, else
 * the errno's name, and exits 0 either way (as sysc does).  Static;
 * copied into test root filesystems by tests/lib/common.bash.
 *
 *   vrsys asuser <uid> <gid> <prog> [args]   no groups, the ids, exec
 *   vrsys asuser-meta <uid> <gid> <file> <new>   the ids as asuser, then
 *                                        in the same process: chmod 04755,
 *                                        utimensat, truncate, setxattr of
 *                                        <file>, creat <new>: a line each
 *   vrsys access <path> <r|w|x>          access(2) (real ids)
 *   vrsys fd-meta <path>                 open O_RDONLY, then fchmod 04777,
 *                                        fchown to its own ids, fsetxattr
 *                                        user.x, futimens: one line each
 *   vrsys setxattr <path> <name> <value>
 *   vrsys xattrat set|get|list|remove <dir> <name-in-dir> [<xattr> [<value>]]
 *                                        the *xattrat calls (Linux 6.13) on
 *                                        open(<dir>) + a relative name
 *   vrsys xattrat-empty get <path> <xattr>   getxattrat(fd, "", AT_EMPTY_PATH)
 *   vrsys execveat-empty <path> [args]   execveat(open(path), "",
 *                                        AT_EMPTY_PATH)
 *   vrsys execveat-rel <dir> <name> [args]   execveat(open(dir), name, 0)
 *   vrsys dgram-send <path> <text>       unix datagram sendto
 *   vrsys dgram-sendmsg <path> <text>    unix datagram sendmsg
 *   vrsys dgram-recv <path>              bind, print READY, print one datagram
 *   vrsys ioctl-kvm <path>               KVM_GET_API_VERSION
 *   vrsys ioctl-tun <path>               TUNGETFEATURES
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <grp.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#define SYS_getxattrat 464
#define SYS_listxattrat 465
#define SYS_removexattrat 466
#endif

struct xattr_args
{
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

extern char **environ;

static int
report (long r)
{
  if (r < 0)
    {
      const char *n = strerrorname_np (errno);
      printf ("%s\n", n ? n : "E?");
    }
  else
    printf ("OK\n");
  return 0;
}

static int
unix_addr (const char *path, struct sockaddr_un *u)
{
  memset (u, 0, sizeof *u);
  u->sun_family = AF_UNIX;
  snprintf (u->sun_path, sizeof u->sun_path, "%s", path);
  return (int) (offsetof (struct sockaddr_un, sun_path) + strlen (path) + 1);
}

static int
xattrat (char **a, int n)
{
  char buf[256] = "";
  struct xattr_args x = { 0 };
  int dfd = open (a[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long r;
  if (dfd < 0)
    return report (-1);
  if (strcmp (a[0], "set") == 0 && n == 5)
    {
      x.value = (uintptr_t) a[4], x.size = (uint32_t) strlen (a[4]);
      return report (syscall (SYS_setxattrat, dfd, a[2], 0, a[3], &x, sizeof x));
    }
  if (strcmp (a[0], "get") == 0 && n == 4)
    {
      x.value = (uintptr_t) buf, x.size = sizeof buf - 1;
      r = syscall (SYS_getxattrat, dfd, a[2], 0, a[3], &x, sizeof x);
      if (r < 0)
        return report (r);
      printf ("%.*s\n", (int) r, buf);
      return 0;
    }
  if (strcmp (a[0], "list") == 0 && n == 3)
    {
      r = syscall (SYS_listxattrat, dfd, a[2], 0, buf, sizeof buf);
      if (r < 0)
        return report (r);
      for (long i = 0; i < r; i += (long) strlen (buf + i) + 1)
        printf ("%s\n", buf + i);
      return 0;
    }
  if (strcmp (a[0], "remove") == 0 && n == 4)
    return report (syscall (SYS_removexattrat, dfd, a[2], 0, a[3]));
  fprintf (stderr, "vrsys: bad xattrat arguments\n");
  return 2;
}

static int
dgram (const char *cmd, const char *path, const char *text)
{
  struct sockaddr_un u;
  int len = unix_addr (path, &u);
  int s = socket (AF_UNIX, SOCK_DGRAM, 0);
  char buf[256];
  if (s < 0)
    return report (-1);
  if (strcmp (cmd, "dgram-recv") == 0)
    {
      if (bind (s, (struct sockaddr *) &u, (socklen_t) len) < 0)
        return report (-1);
      printf ("READY\n");
      fflush (stdout);
      ssize_t n = recv (s, buf, sizeof buf - 1, 0);
      if (n < 0)
        return report (-1);
      printf ("%.*s\n", (int) n, buf);
      return 0;
    }
  if (strcmp (cmd, "dgram-send") == 0)
    return report (sendto (s, text, strlen (text), 0, (struct sockaddr *) &u,
                           (socklen_t) len));
  struct iovec io = { (void *) text, strlen (text) };
  struct msghdr m = { .msg_name = &u, .msg_namelen = (socklen_t) len,
                      .msg_iov = &io, .msg_iovlen = 1 };
  return report (sendmsg (s, &m, 0));
}

int
main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "";
  char **a = argv + 2;
  int n = argc - 2;
  if (strcmp (c, "asuser") == 0 && n >= 3)
    {
      uid_t u = (uid_t) atoi (a[0]);
      gid_t g = (gid_t) atoi (a[1]);
      if (setgroups (0, NULL) < 0 || setresgid (g, g, g) < 0
          || setresuid (u, u, u) < 0)
        return report (-1);
      execv (a[2], a + 2);
      return report (-1);
    }
  if (strcmp (c, "fd-meta") == 0 && n == 1)
    {
      struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
      int fd = open (a[0], O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return report (-1);
      report (fchmod (fd, 04777));
      report (fchown (fd, getuid (), getgid ()));
      report (fsetxattr (fd, "user.x", "y", 1, 0));
      return report (futimens (fd, ts));
    }
  if (strcmp (c, "asuser-meta") == 0 && n == 4)
    {
      uid_t u = (uid_t) atoi (a[0]);
      gid_t g = (gid_t) atoi (a[1]);
      struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
      if (setgroups (0, NULL) < 0 || setresgid (g, g, g) < 0
          || setresuid (u, u, u) < 0)
        return report (-1);
      report (chmod (a[2], 04755));
      report (utimensat (AT_FDCWD, a[2], ts, 0));
      report (truncate (a[2], 0));
      report (setxattr (a[2], "user.x", "y", 1, 0));
      return report (open (a[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    }
  if (strcmp (c, "access") == 0 && n == 2)
    return report (access (a[0], a[1][0] == 'r' ? R_OK
                                 : a[1][0] == 'w' ? W_OK : X_OK));
  if (strcmp (c, "setxattr") == 0 && n == 3)
    return report (setxattr (a[0], a[1], a[2], strlen (a[2]), 0));
  if (strcmp (c, "xattrat") == 0 && n >= 3)
    return xattrat (a, n);
  if (strcmp (c, "xattrat-empty") == 0 && n == 3)
    {
      char buf[256];
      struct xattr_args x = { (uintptr_t) buf, sizeof buf - 1, 0 };
      int fd = open (a[1], O_RDONLY | O_CLOEXEC);
      long r = fd < 0 ? -1 : syscall (SYS_getxattrat, fd, "", AT_EMPTY_PATH,
                                      a[2], &x, sizeof x);
      if (r < 0)
        return report (-1);
      printf ("%.*s\n", (int) r, buf);
      return 0;
    }
  if (strcmp (c, "execveat-empty") == 0 && n >= 1)
    {
      /* O_RDONLY: an O_PATH fd cannot be injected (ADDFD), so the view
       * cannot hand one out.  Inherited: a script reads it. */
      int fd = open (a[0], O_RDONLY);
      if (fd < 0)
        return report (-1);
      return report (syscall (SYS_execveat, fd, "", a + 1, environ,
                              AT_EMPTY_PATH));
    }
  if (strcmp (c, "execveat-rel") == 0 && n >= 2)
    {
      int fd = open (a[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        return report (-1);
      return report (syscall (SYS_execveat, fd, a[1], a + 2, environ, 0));
    }
  if (strncmp (c, "dgram-", 6) == 0 && n >= 1)
    return dgram (c, a[0], n > 1 ? a[1] : "");
  if (strcmp (c, "ioctl-kvm") == 0 && n == 1)
    {
      int fd = open (a[0], O_RDWR | O_CLOEXEC);
      long r = fd < 0 ? -1 : ioctl (fd, 0xAE00 /* KVM_GET_API_VERSION */, 0);
      if (r < 0)
        return report (-1);
      printf ("%ld\n", r);
      return 0;
    }
  if (strcmp (c, "ioctl-tun") == 0 && n == 1)
    {
      unsigned int f = 0;
      int fd = open (a[0], O_RDWR | O_CLOEXEC);
      long r = fd < 0 ? -1 : ioctl (fd, 0x800454cf /* TUNGETFEATURES */, &f);
      return report (r);
    }
  fprintf (stderr, "vrsys: unknown command or arguments: %s\n", c);
  return 2;
}
