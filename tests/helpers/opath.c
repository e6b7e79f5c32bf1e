/* opath: what tests/integration/nsless_opath.bats does with O_PATH fds
 * inside a container.  Static; copied into test root filesystems by
 * tests/lib/common.bash.
 *
 *   opath <path> <how> <op>...
 *
 * opens <path> with O_PATH | O_CLOEXEC plus <how> (a comma list of
 * "nofollow", "dir", "openat2" — openat2 with RESOLVE_NO_MAGICLINKS —
 * "rel" — openat of the last name from an O_PATH fd of its directory —
 * "rdonly" — O_RDONLY instead of O_PATH — "creat", "rdwr" — those
 * flags added — or "-"), prints "open=OK" or "open=<ERRNO>", then does each <op> on the
 * fd, one line "<op>=<result>" each:
 *
 *   type        fstat: dir, reg, lnk, chr, ...
 *   estat       fstatat(fd, "", AT_EMPTY_PATH): the type
 *   fchdir      fchdir(fd), then getcwd()
 *   at:NAME     openat(fd, NAME, O_RDONLY), then reads it: its first line
 *   ls          openat(fd, ".", O_RDONLY|O_DIRECTORY) and counts entries
 *   grep:TEXT   reads the fd whole (pread): yes if TEXT is in it, else no
 *   reopen      open("/proc/self/fd/N", O_RDONLY): OK
 *   readlink    readlinkat(fd, ""): the text
 *   chown       fchownat(fd, "", own uid, own gid, AT_EMPTY_PATH)
 *   chmod:MODE  fchmodat2(fd, "", MODE (octal), AT_EMPTY_PATH)
 *   utime       utimensat(fd, "", {0, 0}, AT_EMPTY_PATH)
 *   link:PATH   linkat(fd, "", AT_FDCWD, PATH, AT_EMPTY_PATH)
 *   exec        execveat(fd, "", {"echo", "exec-ran"}, AT_EMPTY_PATH):
 *               last (busybox prints exec-ran)
 *
 * A failing op prints its errno's name; the exit status is 0 either way.
 *
 *   opath --self             prints dumpable=<PR_GET_DUMPABLE>,
 *                            exe=<reading /proc/self/exe: OK or errno> and
 *                            mem=<a child opening this one's
 *                            /proc/<pid>/mem: OK or errno>
 *   opath --cofiles <prog> [args]   a child sharing this fd table
 *                            (CLONE_FILES) execs <prog>; once it is done,
 *                            what is left at fd 1023 (where the view
 *                            injects the file to exec): fd=<none|kind>,
 *                            read=, reopen=, fchmod= (0755) results
 *   opath --dgram-recv <path>    binds a unix datagram socket with
 *                            SO_PASSCRED, prints READY, then for one
 *                            datagram (a sender's pid): uid=, gid= and
 *                            pid=sender|other from SCM_CREDENTIALS
 *   opath --dgram-send <path> [explicit|mmsg]   sends its pid to <path>
 *                            (sendto; "explicit": sendmsg with its own
 *                            SCM_CREDENTIALS; "mmsg": sendmmsg, msg_len
 *                            checked): send=OK or the errno
 *   opath --stream-listen <path>   listens, prints READY, accepts one
 *                            connection: peer uid= gid= (SO_PEERCRED)
 *   opath --stream-connect <path>  connects: connect=OK or the errno
 * The receivers give up after 10 s (SO_RCVTIMEO): a test that fails does
 * not hang. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

extern char **environ;

static const char *
ename (int e)
{
  switch (e)
    {
    case EBADF: return "EBADF";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ELOOP: return "ELOOP";
    case ENOTDIR: return "ENOTDIR";
    case EINVAL: return "EINVAL";
    case EROFS: return "EROFS";
    case EXDEV: return "EXDEV";
    case EISDIR: return "EISDIR";
    case ENOEXEC: return "ENOEXEC";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPROTO: return "EPROTO";
    default: return strerror (e);
    }
}

static const char *
tname (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFDIR: return "dir";
    case S_IFREG: return "reg";
    case S_IFLNK: return "lnk";
    case S_IFCHR: return "chr";
    case S_IFBLK: return "blk";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "sock";
    default: return "?";
    }
}

static int
open_it (const char *path, const char *how)
{
  int flags = O_PATH | O_CLOEXEC;
  if (strstr (how, "rdonly"))
    flags = O_RDONLY | O_CLOEXEC;
  if (strstr (how, "creat"))
    flags |= O_CREAT;           /* dropped by open(O_PATH) */
  if (strstr (how, "rdwr"))
    flags |= O_RDWR;            /* openat2 refuses it with O_PATH */
  if (strstr (how, "nofollow"))
    flags |= O_NOFOLLOW;
  if (strstr (how, "dir"))
    flags |= O_DIRECTORY;
  if (strstr (how, "openat2"))
    {
      struct open_how h = { .flags = (unsigned) flags,
                            .resolve = RESOLVE_NO_MAGICLINKS };
      return (int) syscall (SYS_openat2, AT_FDCWD, path, &h, sizeof h);
    }
  if (strstr (how, "rel"))
    {
      char dir[4096];
      const char *slash = strrchr (path, '/');
      snprintf (dir, sizeof dir, "%.*s", slash == path ? 1 : (int) (slash - path),
                path);
      int d = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (d < 0)
        return -1;
      int fd = openat (d, slash + 1, flags);
      int e = errno;
      close (d);
      errno = e;
      return fd;
    }
  return open (path, flags);
}

static void
op (int fd, const char *o)
{
  struct stat st;
  char buf[4096];
  ssize_t n;
  int r = 0, f;
  printf ("%s=", o);
  if (strcmp (o, "type") == 0 && (r = fstat (fd, &st)) == 0)
    printf ("%s\n", tname (st.st_mode));
  else if (strcmp (o, "estat") == 0
           && (r = fstatat (fd, "", &st, AT_EMPTY_PATH)) == 0)
    printf ("%s\n", tname (st.st_mode));
  else if (strcmp (o, "fchdir") == 0 && (r = fchdir (fd)) == 0)
    printf ("%s\n", getcwd (buf, sizeof buf) ? buf : ename (errno));
  else if (strncmp (o, "at:", 3) == 0)
    {
      if ((f = openat (fd, o + 3, O_RDONLY | O_CLOEXEC)) < 0)
        r = -1;
      else
        {
          n = read (f, buf, sizeof buf - 1);
          buf[n > 0 ? n : 0] = '\0';
          buf[strcspn (buf, "\n")] = '\0';
          printf ("%s\n", buf);
          close (f);
        }
    }
  else if (strcmp (o, "ls") == 0)
    {
      if ((f = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        r = -1;
      else
        {
          long k = syscall (SYS_getdents64, f, buf, sizeof buf);
          printf (k > 0 ? "OK\n" : "%s\n", ename (errno));
          close (f);
        }
    }
  else if (strcmp (o, "reopen") == 0)
    {
      snprintf (buf, sizeof buf, "/proc/self/fd/%d", fd);
      if ((f = open (buf, O_RDONLY | O_CLOEXEC)) < 0)
        r = -1;
      else
        printf ("OK\n"), close (f);
    }
  else if (strncmp (o, "grep:", 5) == 0)
    {
      static char all[1 << 16];
      ssize_t got = 0;
      while ((n = pread (fd, all + got, sizeof all - 1 - (size_t) got, got)) > 0)
        got += n;
      all[got] = '\0';
      if (n < 0)
        r = -1;
      else
        printf ("%s\n", strstr (all, o + 5) ? "yes" : "no");
    }
  else if (strcmp (o, "readlink") == 0)
    {
      if ((n = readlinkat (fd, "", buf, sizeof buf - 1)) < 0)
        r = -1;
      else
        buf[n] = '\0', printf ("%s\n", buf);
    }
  else if (strcmp (o, "chown") == 0
           && (r = fchownat (fd, "", getuid (), getgid (), AT_EMPTY_PATH)) == 0)
    printf ("OK\n");
  else if (strncmp (o, "chmod:", 6) == 0
           && (r = (int) syscall (SYS_fchmodat2, fd, "",
                                  strtoul (o + 6, NULL, 8), AT_EMPTY_PATH)) == 0)
    printf ("OK\n");
  else if (strcmp (o, "utime") == 0)
    {
      struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };
      if ((r = utimensat (fd, "", ts, AT_EMPTY_PATH)) == 0)
        printf ("OK\n");
    }
  else if (strncmp (o, "link:", 5) == 0
           && (r = linkat (fd, "", AT_FDCWD, o + 5, AT_EMPTY_PATH)) == 0)
    printf ("OK\n");
  else if (strcmp (o, "exec") == 0)
    {
      char *argv[] = { "echo", "exec-ran", NULL };
      fflush (stdout);
      syscall (SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
      r = -1;
    }
  else if (r == 0)
    {
      printf ("unknown op\n");
      return;
    }
  if (r < 0)
    printf ("%s\n", ename (errno));
}

static int
self (void)
{
  char buf[64];
  int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC), st;
  printf ("dumpable=%d\n", prctl (PR_GET_DUMPABLE, 0, 0, 0, 0));
  if (fd >= 0 && read (fd, buf, sizeof buf) > 0)
    printf ("exe=OK\n");
  else
    printf ("exe=%s\n", ename (errno));
  fflush (stdout);
  /* Another process of the same uid (a child: it has no other mm to
   * lose) opens this one's memory. */
  pid_t me = getpid (), pid = fork ();
  if (pid == 0)
    {
      snprintf (buf, sizeof buf, "/proc/%d/mem", (int) me);
      fd = open (buf, O_RDONLY | O_CLOEXEC);
      printf ("mem=%s\n", fd >= 0 ? "OK" : ename (errno));
      fflush (stdout);
      _exit (0);
    }
  waitpid (pid, &st, 0);
  return 0;
}

static int
cofiles (char **argv)
{
  char link[64], buf[16];
  int st, f;
  fflush (stdout);
  pid_t pid = (pid_t) syscall (SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0)
    {
      execv (argv[0], argv);
      _exit (127);
    }
  if (pid < 0 || waitpid (pid, &st, 0) < 0)
    return perror ("clone"), 1;
  printf ("fd=%s\n", fcntl (1023, F_GETFD) < 0 ? "none" : "left");
  printf ("read=%s\n", pread (1023, buf, sizeof buf, 0) > 0 ? "OK" : ename (errno));
  snprintf (link, sizeof link, "/proc/self/fd/%d", 1023);
  f = open (link, O_RDONLY | O_CLOEXEC);
  printf ("reopen=%s\n", f >= 0 ? "OK" : ename (errno));
  printf ("fchmod=%s\n", fchmod (1023, 0755) == 0 ? "OK" : ename (errno));
  return 0;
}

static int
dgram (const char *path, struct sockaddr_un *a)
{
  int s = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  *a = (struct sockaddr_un) { .sun_family = AF_UNIX };
  snprintf (a->sun_path, sizeof a->sun_path, "%s", path);
  return s;
}

static int
dgram_recv (const char *path)
{
  struct sockaddr_un a;
  char buf[64], ctl[CMSG_SPACE (sizeof (struct ucred))];
  struct iovec io = { buf, sizeof buf - 1 };
  struct msghdr h = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl,
                      .msg_controllen = sizeof ctl };
  struct timeval tv = { 10, 0 };
  int s = dgram (path, &a), on = 1;
  ssize_t n;
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0
      || setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0
      || setsockopt (s, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
    return perror ("bind"), 1;
  printf ("READY\n");
  fflush (stdout);
  if ((n = recvmsg (s, &h, 0)) < 0)
    return perror ("recvmsg"), 1;
  buf[n] = '\0';
  struct cmsghdr *cm = CMSG_FIRSTHDR (&h);
  if (cm == NULL || cm->cmsg_type != SCM_CREDENTIALS)
    return printf ("no credentials\n"), 0;
  struct ucred u;
  memcpy (&u, CMSG_DATA (cm), sizeof u);
  printf ("uid=%u gid=%u pid=%s\n", u.uid, u.gid,
          u.pid == atoi (buf) ? "sender" : "other");
  return 0;
}

static int
dgram_send (const char *path, int mode)
{
  struct sockaddr_un a;
  char buf[32], ctl[CMSG_SPACE (sizeof (struct ucred))] = { 0 };
  int s = dgram (path, &a);
  ssize_t r;
  snprintf (buf, sizeof buf, "%d", (int) getpid ());
  if (mode == 2)
    {
      struct iovec io = { buf, strlen (buf) };
      struct mmsghdr mm = { .msg_hdr = { .msg_name = &a, .msg_namelen = sizeof a,
                                         .msg_iov = &io, .msg_iovlen = 1 } };
      r = sendmmsg (s, &mm, 1, 0);
      if (r == 1 && mm.msg_len != strlen (buf))
        r = -1, errno = EPROTO;
    }
  else if (mode == 0)
    r = sendto (s, buf, strlen (buf), 0, (struct sockaddr *) &a, sizeof a);
  else
    {
      struct iovec io = { buf, strlen (buf) };
      struct msghdr h = { .msg_name = &a, .msg_namelen = sizeof a,
                          .msg_iov = &io, .msg_iovlen = 1,
                          .msg_control = ctl, .msg_controllen = sizeof ctl };
      struct cmsghdr *cm = CMSG_FIRSTHDR (&h);
      struct ucred u = { getpid (), getuid (), getgid () };
      cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_CREDENTIALS;
      cm->cmsg_len = CMSG_LEN (sizeof u);
      memcpy (CMSG_DATA (cm), &u, sizeof u);
      r = sendmsg (s, &h, 0);
    }
  printf ("send=%s\n", r < 0 ? ename (errno) : "OK");
  return 0;
}

static int
stream (const char *path, bool listen_)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  struct timeval tv = { 10, 0 };
  struct ucred u;
  socklen_t len = sizeof u;
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c;
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  if (!listen_)
    {
      c = connect (s, (struct sockaddr *) &a, sizeof a);
      printf ("connect=%s\n", c < 0 ? ename (errno) : "OK");
      return 0;
    }
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0 || listen (s, 1) < 0
      || setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
    return perror ("listen"), 1;
  printf ("READY\n");
  fflush (stdout);
  if ((c = accept (s, NULL, NULL)) < 0
      || getsockopt (c, SOL_SOCKET, SO_PEERCRED, &u, &len) < 0)
    return perror ("accept"), 1;
  printf ("peer uid=%u gid=%u\n", u.uid, u.gid);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "--stream-listen") == 0)
    return stream (argv[2], true);
  if (argc == 3 && strcmp (argv[1], "--stream-connect") == 0)
    return stream (argv[2], false);
  if (argc == 3 && strcmp (argv[1], "--dgram-recv") == 0)
    return dgram_recv (argv[2]);
  if (argc >= 3 && strcmp (argv[1], "--dgram-send") == 0)
    return dgram_send (argv[2], argc < 4 ? 0
                       : strcmp (argv[3], "mmsg") == 0 ? 2 : 1);
  if (argc == 2 && strcmp (argv[1], "--self") == 0)
    return self ();
  if (argc >= 3 && strcmp (argv[1], "--cofiles") == 0)
    return cofiles (argv + 2);
  if (argc < 3)
    {
      fprintf (stderr, "usage: opath <path> <how> <op>...\n");
      return 2;
    }
  int fd = open_it (argv[1], argv[2]);
  printf ("open=%s\n", fd < 0 ? ename (errno) : "OK");
  if (fd < 0)
    return 0;
  for (int i = 3; i < argc; i++)
    op (fd, argv[i]);
  return 0;
}
