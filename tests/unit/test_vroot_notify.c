/* runtime/vroot-*.c end to end: a child installs the namespace-less
 * filter (vr_serviced_syscalls → SCMP_ACT_NOTIFY, vr_refused_syscalls →
 * EPERM) and this process supervises it with vr_sup_handle.  The child's
 * kernel root is the host's, as in namespace-less mode, and it has no
 * Landlock here: everything it sees comes from the supervisor alone, so
 * any escape of the view would show.  It runs real programs too: the
 * host's static busybox and a dynamic cat with the rootfs's own libc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "runtime/landlock.h"
#include "runtime/vroot-sup.h"

static char top[PATH_MAX];
static int report = -1;
static int outside_fd = -1;     /* a host file opened before the filter */         /* child → parent: "1|desc" / "0|desc" */

static char *
host (const char *rel)
{
  return xasprintf ("%s/%s", top, rel);
}

static void
mk (const char *rel, const char *content)
{
  char *p = host (rel);
  if (content == NULL)
    mkdir (p, 0755);
  else
    {
      FILE *f = fopen (p, "w");
      if (f == NULL)
        perror (p), exit (2);
      fputs (content, f);
      fclose (f);
    }
  free (p);
}

static void
ln (const char *target, const char *rel)
{
  char *p = host (rel);
  if (symlink (target, p) < 0)
    perror (p), exit (2);
  free (p);
}

static bool
copy (const char *from, const char *rel, mode_t mode)
{
  char *to = host (rel);
  int in = open (from, O_RDONLY), out = open (to, O_CREAT | O_WRONLY, mode);
  char buf[65536];
  ssize_t n;
  bool ok_ = in >= 0 && out >= 0;
  while (ok_ && (n = read (in, buf, sizeof buf)) > 0)
    ok_ = write (out, buf, (size_t) n) == n;
  if (in >= 0)
    close (in);
  if (out >= 0)
    close (out);
  free (to);
  return ok_;
}

static bool have_busybox, have_libc;

static void
tree (void)
{
  char *t = getenv ("TMPDIR");
  snprintf (top, sizeof top, "%s/vrootn.XXXXXX", t ? t : "/tmp");
  if (mkdtemp (top) == NULL)
    perror ("mkdtemp"), exit (2);
  const char *dirs[] = { "rootfs", "rootfs/bin", "rootfs/etc", "rootfs/usr",
                         "rootfs/usr/lib", "rootfs/proc", "rootfs/host",
                         "rootfs/tmp", "rootfs/lib64", "host", "data",
                         "data/sub", "tmpfs", "execdir",
                         "rootfs/usr/lib/x86_64-linux-gnu" };
  for (size_t i = 0; i < ARRAY_SIZE (dirs); i++)
    mk (dirs[i], NULL);
  mk ("rootfs/etc/passwd", "view-passwd"), mk ("rootfs/usr/lib/x", "view-x");
  mk ("rootfs/host/decoy", "in-view"), mk ("host/secret", "HOST-SECRET");
  mk ("data/sub/f", "data-f"), mk ("hostname", "box\n");
  ln ("usr/lib", "rootfs/lib");
  ln ("../../../../../../../../host", "rootfs/esc_rel");
  char *h = host ("host");
  ln (h, "rootfs/esc_abs");
  free (h);
  h = host ("host/hs");
  ln (h, "rootfs/hsl");
  free (h);
  have_busybox = copy ("/usr/bin/busybox", "rootfs/bin/busybox", 0755)
                 || copy ("/bin/busybox", "rootfs/bin/busybox", 0755);
  ln ("busybox", "rootfs/bin/sh");
  mk ("rootfs/dev", NULL);
  ln ("/proc/self/fd", "rootfs/dev/fd");
  ln ("busybox", "rootfs/bin/echo");
  mk ("rootfs/bin/script.sh", "#!/bin/sh -e\necho script-ran \"$@\"\n");
  h = host ("rootfs/bin/script.sh");
  chmod (h, 0755);
  free (h);
  have_libc = copy ("/bin/cat", "rootfs/bin/cat", 0755)
              && copy ("/lib64/ld-linux-x86-64.so.2",
                       "rootfs/lib64/ld-linux-x86-64.so.2", 0755)
              && copy ("/lib/x86_64-linux-gnu/libc.so.6",
                       "rootfs/usr/lib/x86_64-linux-gnu/libc.so.6", 0755);
}

/* ---- the child (the "container") ---- */

#define T(cond, ...)                                                    \
  do {                                                                  \
    char t_[512];                                                       \
    int t_n = snprintf (t_, sizeof t_, "%d|", !!(cond));                \
    t_n += snprintf (t_ + t_n, sizeof t_ - (size_t) t_n, __VA_ARGS__);  \
    if (t_n > (int) sizeof t_ - 2)                                      \
      t_n = (int) sizeof t_ - 2;                                        \
    for (char *t_p = t_ + 2; t_p < t_ + t_n; t_p++)                     \
      if (*t_p == '\n')                                                 \
        *t_p = ' ';                                                     \
    t_[t_n++] = '\n';                                                   \
    if (write (report, t_, (size_t) t_n) < 0)                           \
      _exit (3);                                                        \
  } while (0)

static const char *
slurp_fd (int fd)
{
  static char buf[16384];
  size_t got = 0;
  ssize_t n = 0;
  while (fd >= 0 && got < sizeof buf - 1
         && (n = read (fd, buf + got, sizeof buf - 1 - got)) > 0)
    got += (size_t) n;
  if (fd >= 0)
    close (fd);
  buf[got] = '\0';
  return fd < 0 || n < 0 ? "(error)" : buf;
}

static const char *
slurp (const char *path)
{
  return slurp_fd (open (path, O_RDONLY));
}

static bool
cwd_is (const char *want)
{
  char b[PATH_MAX];
  return syscall (SYS_getcwd, b, sizeof b) > 0 && strcmp (b, want) == 0;
}

static bool
link_is (const char *path, const char *want)
{
  char b[PATH_MAX];
  ssize_t n = readlink (path, b, sizeof b - 1);
  if (n < 0)
    return false;
  b[n] = '\0';
  return strcmp (b, want) == 0;
}

static void
reads (void)
{
  T (strcmp (slurp ("/etc/passwd"), "view-passwd") == 0, "open: absolute path is the view's");
  T (strcmp (slurp ("/../../../etc/passwd"), "view-passwd") == 0, "open: `..` past /");
  T (strcmp (slurp_fd (openat (AT_FDCWD, "etc/passwd", O_RDONLY)), "view-passwd") == 0,
     "openat: relative to the virtual cwd");
  T (open ("/esc_abs/secret", O_RDONLY) < 0 && errno == ENOENT,
     "open: absolute symlink to a host path stays in the view");
  T (strcmp (slurp ("/esc_rel/decoy"), "in-view") == 0, "open: relative symlink out is clamped");
  struct open_how how = { .flags = O_RDONLY };
  T (strcmp (slurp_fd ((int) syscall (SYS_openat2, AT_FDCWD, "/etc/passwd", &how,
                                      sizeof how)), "view-passwd") == 0, "openat2 serviced");
  int d = open ("/usr", O_RDONLY | O_DIRECTORY);
  T (strcmp (slurp_fd (openat (d, "../etc/passwd", O_RDONLY)), "view-passwd") == 0,
     "openat: a dirfd in the view");
  T (strcmp (slurp_fd (openat (d, "../../../../host/decoy", O_RDONLY)), "in-view") == 0,
     "openat: `..` chain from a dirfd stays");
  close (d);
  struct stat st;
  struct statx sx;
  T (stat ("/etc/passwd", &st) == 0 && st.st_size == 11, "stat written into the caller");
  T (lstat ("/lib", &st) == 0 && S_ISLNK (st.st_mode), "lstat keeps the symlink");
  T (statx (AT_FDCWD, "/etc/passwd", 0, STATX_SIZE, &sx) == 0 && sx.stx_size == 11, "statx");
  T (stat ("/esc_abs/secret", &st) < 0 && errno == ENOENT, "stat: no host file through a symlink");
  T (access ("/etc/passwd", R_OK) == 0 && access ("/nope", F_OK) < 0, "access");
  T (link_is ("/lib", "usr/lib"), "readlink of an image symlink");
  T (link_is ("/proc/self/root", "/"), "readlink /proc/self/root is /");
  char self[32];
  snprintf (self, sizeof self, "%d", (int) getpid ());
  T (link_is ("/proc/self", self), "readlink /proc/self is the caller");
  T (open ("/proc/1/status", O_RDONLY) < 0 && errno == ENOENT, "a host pid does not exist");
  T (open ("/proc/1/root/etc/hostname", O_RDONLY) < 0, "/proc/<host pid>/root refused");
  T (strstr (slurp ("/proc/self/status"), "Name:") != NULL, "/proc/self/status readable");
  {
    DIR *pd = opendir ("/proc");
    struct dirent *e;
    int mine = 0, foreign = 0, other = 0;
    while (pd && (e = readdir (pd)) != NULL)
      {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
          other++;
        else if (atoi (e->d_name) == getpid ())
          mine++;
        else
          foreign++;
      }
    if (pd)
      closedir (pd);
    T (mine == 1 && foreign == 0 && other > 5, "a /proc listing shows the "
       "container's pids only (own %d, foreign %d, other %d)", mine, foreign, other);
    int cnt = 0;
    pd = opendir ("/usr/lib");
    while (pd && readdir (pd) != NULL)
      cnt++;
    if (pd)
      closedir (pd);
    T (cnt >= 3, "other directories list as they are (%d)", cnt);
  }
  int fd = open ("/etc/passwd", O_RDONLY);
  char fdp[64];
  snprintf (fdp, sizeof fdp, "/proc/self/fd/%d", fd);
  T (strcmp (slurp (fdp), "view-passwd") == 0, "/proc/self/fd/N reopens the caller's file");
  T (link_is (fdp, "/etc/passwd"), "readlink /proc/self/fd/N is the view's path");
  if (outside_fd >= 0)
    {
      char l2[64], t2[PATH_MAX];
      snprintf (l2, sizeof l2, "/proc/self/fd/%d", outside_fd);
      int n2 = (int) readlink (l2, t2, sizeof t2 - 1);
      t2[n2 < 0 ? 0 : n2] = '\0';
      T (n2 > 0 && cm_startswith (t2, "file:["), "readlink of an fd inherited "
         "from outside the view names no host path: '%s'", t2);
      T (open (l2, O_RDWR) < 0 && errno == EACCES,
         "and it does not reopen through /proc/self/fd");
    }
  else
    T (1, "# skip the host file is outside this pass's Landlock domain");
  close (fd);
}

static void
cwds (void)
{
  T (chdir ("/usr/lib") == 0 && cwd_is ("/usr/lib"), "chdir + getcwd");
  T (strcmp (slurp ("x"), "view-x") == 0, "open relative to the new cwd");
  T (link_is ("/proc/self/cwd", "/usr/lib"), "readlink /proc/self/cwd is the virtual cwd");
  for (int i = 0; i < 5; i++)
    if (chdir ("..") < 0)
      break;
  T (cwd_is ("/"), "`cd ..` at the root stays at the root");
  T (chdir ("/mnt/data") == 0 && cwd_is ("/mnt/data"), "getcwd after chdir into a mount");
  T (strcmp (slurp ("sub/f"), "data-f") == 0, "relative open inside a mount");
  T (chdir ("../..") == 0 && cwd_is ("/"), "`..` out of a mount");
  int d = open ("/usr", O_RDONLY | O_DIRECTORY);
  T (fchdir (d) == 0 && cwd_is ("/usr"), "fchdir");
  close (d);
  T (chdir ("/etc/passwd") < 0 && errno == ENOTDIR, "chdir to a file: ENOTDIR");
  T (chdir ("/") == 0, "back to /");
}

static void
writes (void)
{
  T (mkdir ("/tmp/d", 0755) == 0, "mkdir in a tmpfs");
  int fd = open ("/tmp/d/f", O_CREAT | O_WRONLY | O_EXCL, 0644);
  T (fd >= 0 && write (fd, "hi", 2) == 2, "O_CREAT in a tmpfs");
  close (fd);
  T (open ("/tmp/d/f", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0 && errno == EEXIST, "O_EXCL");
  T (rename ("/tmp/d/f", "/tmp/d/g") == 0, "rename");
  T (link ("/tmp/d/g", "/tmp/h") == 0, "link");
  T (unlink ("/tmp/d/g") == 0 && rmdir ("/tmp/d") == 0, "unlink + rmdir");
  T (symlink ("/etc/passwd", "/tmp/s") == 0
     && strcmp (slurp ("/tmp/s"), "view-passwd") == 0, "a new symlink resolves in the view");
  T (link ("/esc_abs/secret", "/tmp/hl") < 0, "hardlink to a host file refused");
  T (rename ("/etc/passwd", "/tmp/p") < 0 && errno == EXDEV, "rename across mounts: EXDEV");
  T (open ("/etc/hostname", O_WRONLY) < 0 && errno == EROFS, "read-only mount: EROFS");
  T (chmod ("/tmp/h", 0600) == 0 && truncate ("/tmp/h", 1) == 0, "chmod, truncate");
  T (mknod ("/tmp/null", S_IFCHR | 0666, makedev (1, 3)) < 0 && errno == EPERM,
     "no device nodes");
  T (mkdir ("/esc_abs/made", 0755) < 0, "mkdir through an absolute symlink out fails");
  T (syscall (SYS_chroot, "/") < 0 && errno == EPERM, "chroot refused");
  T (syscall (SYS_io_uring_setup, 4, NULL) < 0 && errno == EPERM,
     "io_uring refused (its opens would bypass the view)");
  T (syscall (SYS_shmget, 0, 4096, 0600) < 0 && errno == EPERM
     && syscall (SYS_mq_open, "q", O_RDONLY, 0, NULL) < 0 && errno == EPERM,
     "host SysV and POSIX message queue IPC refused");
  T (syscall (452, AT_FDCWD, "/tmp/h", 0600, 0) == 0, "fchmodat2 serviced "
     "(its number supplied where libseccomp lacks the name)");
  char xv[16] = { 0 }, xl[64] = { 0 };
  int sx = setxattr ("/tmp/h", "user.vr", "val", 3, 0);
  if (sx < 0 && errno == EOPNOTSUPP)
    T (1, "# skip user xattrs unsupported under the test's tmpdir");
  else
    {
      T (sx == 0 && getxattr ("/tmp/h", "user.vr", xv, sizeof xv) == 3
         && strcmp (xv, "val") == 0, "setxattr + getxattr in the view");
      T (listxattr ("/tmp/h", xl, sizeof xl) > 0 && strcmp (xl, "user.vr") == 0,
         "listxattr");
      T (removexattr ("/tmp/h", "user.vr") == 0
         && getxattr ("/tmp/h", "user.vr", xv, sizeof xv) < 0, "removexattr");
    }
  T (getxattr ("/esc_abs/secret", "user.x", xv, sizeof xv) < 0 && errno == ENOENT,
     "getxattr through a symlink out: ENOENT");
  T (setxattr ("/etc/hostname", "user.x", "v", 1, 0) < 0 && errno == EROFS,
     "setxattr on a read-only mount: EROFS");
}

/* A sibling thread flips the path between a view path and the host path
 * of a host file: the view may answer either, the host file never. */
static char racebuf[PATH_MAX];
static volatile int racing = 1;

static void *
flipper (void *arg)
{
  const char *host_path = arg;
  while (racing)
    {
      snprintf (racebuf, sizeof racebuf, "%s", host_path);
      snprintf (racebuf, sizeof racebuf, "/etc/passwd");
    }
  return NULL;
}

static void
race (const char *host_path)
{
  pthread_t th;
  int leaked = 0, n = 0;
  snprintf (racebuf, sizeof racebuf, "/etc/passwd");
  pthread_create (&th, NULL, flipper, (void *) host_path);
  for (n = 0; n < 3000; n++)
    {
      int fd = open (racebuf, O_RDONLY);
      if (fd >= 0 && strstr (slurp_fd (fd), "HOST") != NULL)
        leaked++;
    }
  racing = 0;
  pthread_join (th, NULL);
  T (leaked == 0, "path buffer swapped during open (%d tries): never the host file "
     "(%d leaks)", n, leaked);
}

static int
usock (const char *path, bool listen_)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  if (listen_)
    {
      if (bind (s, (struct sockaddr *) &a, sizeof a) < 0 || listen (s, 4) < 0)
        return close (s), -1;
      return s;
    }
  if (connect (s, (struct sockaddr *) &a, sizeof a) < 0)
    return close (s), -1;
  return s;
}

static int tcp_port;            /* a listener of the test on 127.0.0.1 */
static bool tcp_denied;         /* this pass's supervisor may not connect */

static void
sockets (const char *host_sock)
{
  struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons (tcp_port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int t = socket (AF_INET, SOCK_STREAM, 0);
  int tr = connect (t, (struct sockaddr *) &in, sizeof in);
  T (tcp_denied ? tr < 0 && errno == EACCES : tr == 0,
     "TCP connect on-behalf obeys the supervisor's TCP rules (%s)",
     tcp_denied ? "none: EACCES" : "unrestricted");
  close (t);
  int l = usock ("/tmp/sock", true);
  T (l >= 0, "bind + listen on a named socket in the view");
  int c = usock ("/tmp/sock", false);
  int a = l >= 0 ? accept (l, NULL, NULL) : -1;
  char b = 0;
  T (c >= 0 && a >= 0 && write (c, "x", 1) == 1 && read (a, &b, 1) == 1 && b == 'x',
     "connect to it through the view, and talk");
  close (c), close (a), close (l);
  T (usock (host_sock, false) < 0 && errno == ENOENT,
     "connect to a host socket by its host path: ENOENT (errno %d)", errno);
  T (usock ("/hsl", false) < 0, "connect through a symlink planted to a host socket fails");
  T (usock ("/esc_abs/made.sock", true) < 0, "bind through a symlink out fails");
  int sp[2], dg = socket (AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un ha = { .sun_family = AF_UNIX };
  snprintf (ha.sun_path, sizeof ha.sun_path, "%s", host_sock);
  T (dg >= 0 && sendto (dg, "x", 1, 0, (struct sockaddr *) &ha, sizeof ha) < 0
     && errno == ENOENT,
     "a unix datagram to a host socket by its host path: ENOENT (errno %d)",
     errno);
  close (dg);
  T (socketpair (AF_UNIX, SOCK_STREAM, 0, sp) == 0, "a stream socketpair is fine");
  close (sp[0]), close (sp[1]);
}

static const char *
run (const char *path, char *const argv[])
{
  int p[2];
  if (pipe (p) < 0)
    return "(pipe)";
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (p[1], 1);
      dup2 (p[1], 2);
      char *env[] = { "PATH=/bin", NULL };
      execve (path, argv, env);
      dprintf (2, "execve: %s", strerror (errno));
      _exit (127);
    }
  close (p[1]);
  const char *out = slurp_fd (p[0]);
  waitpid (pid, NULL, 0);
  return out;
}

/* The inode column of the first line of /proc/<pid>/maps text |o| that
 * names |path|; 0 when none does. */
static unsigned long
maps_ino (const char *o, const char *path)
{
  const char *p = strstr (o, path);
  unsigned long ino = 0;
  if (p == NULL)
    return 0;
  while (p > o && p[-1] != '\n')
    p--;
  if (sscanf (p, "%*s %*s %*s %*s %lu", &ino) != 1)
    return 0;
  return ino;
}

static unsigned long
file_ino (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (unsigned long) st.st_ino : 1;
}

static void
execs (void)
{
  if (have_busybox)
    {
      const char *o = run ("/bin/sh", (char *[]) { "sh", "-c",
                           "echo hi; cat /etc/passwd; cd /usr/lib; pwd", NULL });
      T (strcmp (o, "hi\nview-passwd/usr/lib\n") == 0,
         "busybox sh from the rootfs runs a script: got '%s'", o);
      char sh[] = "/bin/sh";  /* the path is argv[0] too: it keeps "sh" */
      o = run (sh, (char *[]) { sh, "-c", "echo $0", NULL });
      T (strstr (o, "sh") != NULL, "exec path aliasing argv[0]: '%s'", o);
      o = run ("/bin/script.sh", (char *[]) { "script.sh", "a", NULL });
      T (strcmp (o, "script-ran a\n") == 0, "a #! script runs the view's interpreter: '%s'", o);
      o = run ("/bin/sh", (char *[]) { "sh", "-c", "readlink /proc/self/exe; "
                           "ls -l /proc/self/fd | grep -c -- '->'; cd /mnt/data; pwd; "
                           "cd ..; cd ..; cd ..; pwd", NULL });
      T (strncmp (o, "/bin/busybox\n", 13) == 0 && strstr (o, "/mnt/data\n/\n"),
         "busybox: /proc/self/exe, ls -l /proc/self/fd, cd into a mount and "
         "`cd ..` past /: '%s'", o);
      o = run ("/mnt/nx/busybox", (char *[]) { "echo", "ran", NULL });
      T (strstr (o, "Permission denied") != NULL, "exec from a noexec mount: EACCES");
      o = run ("/esc_abs/secret", (char *[]) { "x", NULL });
      T (strstr (o, "No such file") != NULL, "exec through a symlink out: ENOENT");
    }
  else
    T (1, "# skip no busybox on the host");
  if (have_libc)
    {
      /* maps names the view's paths (vroot-procmaps.c): the inode, against
       * a stat in the view (the rootfs's copy, not the host's file), says
       * which file is mapped. */
      const char *o = run ("/bin/cat", (char *[]) { "cat", "/proc/self/maps", NULL });
      T (maps_ino (o, " /usr/lib/x86_64-linux-gnu/libc.so.6")
             == file_ino ("/usr/lib/x86_64-linux-gnu/libc.so.6")
         && maps_ino (o, " /lib64/ld-linux-x86-64.so.2")
             == file_ino ("/lib64/ld-linux-x86-64.so.2")
         && strstr (o, "/rootfs/") == NULL,
         "a dynamic ELF loads the rootfs's ld.so and libc, named as in the view");
    }
  else
    T (1, "# skip no glibc to copy");
}

/* Callers killed in the middle of serviced calls: the supervisor goes on. */
static void
dies (void)
{
  for (int i = 0; i < 20; i++)
    {
      int p[2];
      if (pipe (p) < 0)
        return;
      pid_t k = fork ();
      if (k == 0)
        {
          if (write (p[1], "x", 1) < 0)
            _exit (1);
          for (;;)
            {
              struct stat st;
              close (open ("/usr/lib/x", O_RDONLY));
              stat ("/etc/passwd", &st);
            }
        }
      char b;
      if (read (p[0], &b, 1) < 0)
        return;
      kill (k, SIGKILL);
      waitpid (k, NULL, 0);
      close (p[0]), close (p[1]);
    }
  T (strcmp (slurp ("/etc/passwd"), "view-passwd") == 0,
     "20 callers killed mid-call: the supervisor still answers");
}

static int
install_filter (void)
{
  scmp_filter_ctx f = seccomp_init (SCMP_ACT_ALLOW);
  int nrs[160];
  size_t n = vr_trapped_syscalls (nrs, ARRAY_SIZE (nrs));
  /* Not sendmsg: this child hands its listener over with it (the
   * runtime's seam uses write, read and pidfd_getfd instead). */
  for (size_t i = 0; i < n; i++)
    if (nrs[i] != SYS_sendmsg)
      seccomp_rule_add (f, SCMP_ACT_NOTIFY, nrs[i], 0);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load (f) < 0)
    return -1;
  int fd = seccomp_notify_fd (f);
  seccomp_release (f);
  return fd;
}

static void
send_fd (int sock, int fd)
{
  char c = 0, ctl[CMSG_SPACE (sizeof (int))] = { 0 };
  struct iovec iov = { &c, 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                      .msg_controllen = sizeof ctl };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&m);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  if (sendmsg (sock, &m, 0) < 0)
    _exit (4);
}

static int
recv_fd (int sock)
{
  char c, ctl[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { &c, 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                      .msg_controllen = sizeof ctl };
  int fd = -1;
  if (recvmsg (sock, &m, 0) <= 0 || CMSG_FIRSTHDR (&m) == NULL)
    return -1;
  memcpy (&fd, CMSG_DATA (CMSG_FIRSTHDR (&m)), sizeof fd);
  return fd;
}

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

/* stat + open + close of one file, N times: the cost of the notify path
 * (reported, never asserted). */
static double
loop_us (const char *path)
{
  struct stat st;
  double t0 = now_us ();
  for (int i = 0; i < 2000; i++)
    {
      int fd = open (path, O_RDONLY);
      if (stat (path, &st) < 0 || fd < 0)
        return -1;
      close (fd);
    }
  return (now_us () - t0) / 2000;
}

static double host_loop;
/* Under Landlock: the container's own domain, nested in the supervisor's
 * (as the wiring does it), so the supervisor is its ancestor. */
static const struct vroot *nest_view;
static int nest_exec_dir = -1;

static void
child (int sock, const char *execdir)
{
  char *host_secret = host ("host/secret");
  char *passwd = host ("rootfs/etc/passwd");
  host_loop = loop_us (passwd);
  free (passwd);
  outside_fd = open (host_secret, O_RDONLY);
  if (chdir (execdir) < 0)
    _exit (5);
  if (nest_view)
    {
      struct cm_err *err = NULL;
      T (vr_landlock_self (nest_view, nest_exec_dir, NULL, &err) == 0,
         "the container enters its own domain, nested in the supervisor's");
      cm_err_free (&err);
    }
  int lfd = install_filter ();
  if (lfd < 0)
    _exit (6);
  send_fd (sock, lfd);
  close (lfd);
  reads ();
  cwds ();
  writes ();
  double view = loop_us ("/etc/passwd");
  T (view > 0, "# open+stat+close: %.1f us in the view, %.1f us on the host "
     "(%.0fx)", view, host_loop, view / host_loop);
  race (host_secret);
  dies ();
  char *hs = host ("host/hs");
  sockets (hs);
  free (hs);
  execs ();
  _exit (0);
}

/* ---- the parent (the supervisor) ---- */

static int
supervise (int lfd, struct vr_sup *s)
{
  int handled = 0;
  for (;;)
    {
      struct pollfd p = { lfd, POLLIN, 0 };
      struct seccomp_notif req;
      if (poll (&p, 1, -1) < 0)
        continue;
      if (!(p.revents & POLLIN))
        return handled;       /* POLLHUP: every filtered task is gone */
      memset (&req, 0, sizeof req);
      if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        continue;               /* ENOENT: the caller died meanwhile */
      if (vr_sup_handle (s, lfd, &req) < 0)
        return -1;
      handled++;
    }
}

static void
collect (int rfd)
{
  FILE *f = fdopen (rfd, "r");
  char line[1024];
  while (f && fgets (line, sizeof line, f))
    {
      line[strcspn (line, "\n")] = '\0';
      if (strncmp (line + 2, "# skip", 6) == 0)
        skip ("%s", line + 9);
      else if (strncmp (line + 2, "# ", 2) == 0)
        printf ("%s\n", line + 2);
      else
        ok (line[0] == '1', "%s", line + 2);
    }
  if (f)
    fclose (f);
}

/* One supervised run: the child reports its checks on |rp|; with
 * |confine| the supervisor (and so the child it forks) first enters
 * vr_landlock_self's domain, in a process of its own. */
static int
session (struct vroot *v, const char *execdir, bool confine, int rp[2])
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return -1;
  fflush (stdout);
  _cleanup_fd_ int xd = open (execdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (confine)
    {
      struct cm_err *err = NULL;
      /* The container may bind nothing and connect nowhere over TCP. */
      struct vr_net net = { .tcp = rt_ll_abi () >= 4 };
      pid_t sup = fork ();
      int st;
      if (sup > 0)
        {
          close (sv[0]), close (sv[1]);
          waitpid (sup, &st, 0);
          return WIFEXITED (st) ? WEXITSTATUS (st) : 100;
        }
      if (vr_landlock_self (v, xd, &net, &err) < 0)
        {
          dprintf (rp[1], "0|vr_landlock_self: %s\n", err->msg);
          _exit (1);
        }
      char *secret = host ("host/secret");
      int fd = open (secret, O_RDONLY);
      dprintf (rp[1], "%d|the supervisor's own domain refuses a host file "
               "outside the view\n", fd < 0 && errno == EACCES);
      free (secret);
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (sv[0]), close (rp[0]);
      report = rp[1];
      if (confine)
        nest_view = v, nest_exec_dir = xd;
      child (sv[1], execdir);
    }
  close (sv[1]);
  int lfd = recv_fd (sv[0]), st = 0;
  close (sv[0]);
  if (lfd < 0)
    {
      waitpid (pid, &st, 0);
      if (confine)
        _exit (77);
      return 77;
    }
  struct vr_sup s;
  vr_sup_init (&s, v, 0, "/", xd);
  int handled = supervise (lfd, &s);
  waitpid (pid, &st, 0);
  vr_sup_fini (&s);
  close (lfd);
  int rc = handled > 0 && WIFEXITED (st) && WEXITSTATUS (st) == 0 ? 0 : 1;
  if (confine)
    _exit (rc);
  return rc;
}

static void
empty_dir (const char *dir)
{
  struct cm_err *err = NULL;
  DIR *d = opendir (dir);
  struct dirent *e;
  while (d && (e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
      cm_rm_rf_at (dirfd (d), e->d_name, &err), cm_err_free (&err);
  if (d)
    closedir (d);
}

static void
host_effects (const char *pass)
{
  char *h = host ("tmpfs/h"), *hl = host ("host/hl"), *made = host ("host/made");
  struct stat sb;
  ok (stat (h, &sb) == 0 && sb.st_size == 1 && (sb.st_mode & 07777) == 0600,
      "%s: the writes landed in the tmpfs directory, nowhere else", pass);
  ok (access (hl, F_OK) < 0 && access (made, F_OK) < 0,
      "%s: nothing was made on the host", pass);
  free (h), free (hl), free (made);
}

int
main (void)
{
  struct vroot v;
  struct cm_err *err = NULL;
  tree ();
  _cleanup_free_ char *rootfs = host ("rootfs"), *data = host ("data"),
                      *tmpfs = host ("tmpfs"), *hn = host ("hostname"),
                      *execdir = host ("execdir"), *bin = host ("rootfs/bin");
  struct vr_mount_spec m[] = {
    { "/mnt/data", data, VR_BIND, false, false },
    { "/tmp", tmpfs, VR_TMPFS, false, false },
    { "/etc/hostname", hn, VR_BIND, true, false },
    { "/proc", "/proc", VR_PROC, false, false },
    { "/mnt/nx", bin, VR_BIND, true, true },
  };
  if (vr_build (&v, rootfs, false, m, ARRAY_SIZE (m), &err) < 0)
    {
      printf ("Bail out! vr_build: %s\n", err->msg);
      cm_err_free (&err);
      return 1;
    }
  char *hs = host ("host/hs");
  struct sockaddr_un ha = { .sun_family = AF_UNIX };
  snprintf (ha.sun_path, sizeof ha.sun_path, "%s", hs);
  _cleanup_fd_ int hsock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (bind (hsock, (struct sockaddr *) &ha, sizeof ha) < 0 || listen (hsock, 64) < 0)
    printf ("# host socket %s: %s\n", hs, strerror (errno));
  free (hs);
  struct sockaddr_in in = { .sin_family = AF_INET,
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t il = sizeof in;
  _cleanup_fd_ int tsock = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (bind (tsock, (struct sockaddr *) &in, sizeof in) < 0 || listen (tsock, 64) < 0
      || getsockname (tsock, (struct sockaddr *) &in, &il) < 0)
    printf ("# tcp listener: %s\n", strerror (errno));
  tcp_port = ntohs (in.sin_port);
  for (int pass = 0; pass < 2; pass++)
    {
      const char *name = pass ? "supervisor under Landlock" : "unconfined";
      int rp[2];
      if (pipe2 (rp, O_CLOEXEC) < 0)
        return 2;
      if (pass == 1 && rt_ll_abi () < 1)
        {
          skip ("%s: Landlock unavailable", name);
          break;
        }
      tcp_denied = pass == 1 && rt_ll_abi () >= 4;
      int rc = session (&v, execdir, pass == 1, rp);
      close (rp[1]);
      if (rc == 77)
        {
          printf ("1..0 # skip seccomp user notification unavailable\n");
          return 77;
        }
      collect (rp[0]);
      ok (rc == 0, "%s: the child exited 0, supervised", name);
      host_effects (name);
      empty_dir (tmpfs);      /* the view pins the directory itself */
    }
  vr_free (&v);
  cm_rm_rf_at (AT_FDCWD, top, &err);
  cm_err_free (&err);
  return tap_done ();
}
