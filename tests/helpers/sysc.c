/* sysc: raw syscalls from inside a test container.  Prints "OK" (or a
 * result) on success, else the errno's name ("EPERM"), and exits 0 either
 * way so tests compare the printed result.  Static; copied into test root
 * filesystems by tests/lib/common.bash.
 *
 *   sysc <syscall-name> [args...]   raw syscall, numeric args (0x.. ok)
 *   sysc x32 <syscall-name> [args]  the x32 number (nr | 0x40000000)
 *   sysc open <path> r|w|rw|creat|dir|path   (path: O_PATH)
 *   sysc write <path> [text]        open O_WRONLY|O_CREAT|O_TRUNC + write
 *   sysc truncate <path>
 *   sysc mkdir <path> | unlink <path> | rename <a> <b> | mknod-fifo <path>
 *   sysc uconnect <@abstract|path>  unix stream connect
 *   sysc ulisten <@abstract>        listen, print READY, accept one, exit
 *   sysc kill <pid> <sig>
 *   sysc bind <port> | connect <port>   TCP on 127.0.0.1
 *   sysc clone <flags>              raw clone(flags|SIGCHLD), child _exits
 *   sysc clone3 <flags>             raw clone3
 *   sysc unshare <flags>
 *   sysc tiocsti                    ioctl(0, TIOCSTI, "x")
 *   sysc ioctl <path> <request>     open O_RDWR|O_NOCTTY, ioctl(fd, req, buf)
 *   sysc prlimit <pid> <res> <soft> <hard>   prlimit64 setting a limit
 *   sysc personality <persona>
 *   sysc loop <n>                   n x (getpid + open/close /dev/null);
 *                                   prints nanoseconds per iteration
 *   sysc sloop <n> <path>           n x (stat + open + close of path);
 *                                   prints nanoseconds per iteration
 *   sysc listen-notify <path>       seccomp agent: accept a listener fd,
 *                                   print the state, answer one
 *                                   notification with EPERM... (see below)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define X(n) { #n, SYS_##n },
static const struct
{
  const char *name;
  long nr;
} table[] = {
  X (getpid) X (getppid) X (init_module) X (finit_module) X (delete_module)
  X (kexec_load) X (kexec_file_load) X (bpf) X (perf_event_open)
  X (userfaultfd) X (keyctl) X (add_key) X (request_key) X (reboot)
  X (swapon) X (swapoff) X (open_by_handle_at) X (name_to_handle_at)
  X (clock_settime) X (clock_adjtime) X (settimeofday) X (adjtimex)
  X (iopl) X (ioperm) X (acct) X (quotactl) X (quotactl_fd)
  X (lookup_dcookie) X (nfsservctl) X (uselib) X (_sysctl) X (syslog)
  X (io_uring_setup) X (io_uring_enter) X (io_uring_register) X (mount)
  X (umount2) X (pivot_root) X (fsopen) X (fsconfig) X (fsmount) X (fspick)
  X (move_mount) X (open_tree) X (mount_setattr) X (setns) X (clone3)
  X (unshare) X (clone) X (personality) X (ioctl) X (getuid) X (getgid)
  X (getcwd) X (uname) X (sethostname) X (chroot) X (mkdirat) X (dup)
  X (close) X (getpriority) X (setpriority) X (sched_yield) X (getsid)
  X (fchmod) X (umask) X (getpgid) X (setpgid) X (socket) X (ptrace)
  X (shmget) X (shmctl) X (pidfd_open) X (ioprio_set) X (ioprio_get)
  X (sched_getscheduler)
};
#undef X

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

static long
num (const char *s)
{
  return (long) strtoull (s, NULL, 0);
}

static long
lookup (const char *name)
{
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp (table[i].name, name) == 0)
      return table[i].nr;
  fprintf (stderr, "sysc: unknown syscall %s\n", name);
  exit (2);
}

static long
raw (long nr, int argc, char **argv)
{
  long a[6] = { 0 };
  for (int i = 0; i < argc && i < 6; i++)
    a[i] = num (argv[i]);
  return syscall (nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static socklen_t
unix_addr (const char *p, struct sockaddr_un *sa)
{
  memset (sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  size_t n = strlen (p);
  if (n >= sizeof sa->sun_path)
    exit (2);
  memcpy (sa->sun_path, p, n);
  if (p[0] == '@')
    sa->sun_path[0] = '\0';
  return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n);
}

static int
tcp (int do_bind, int port)
{
  int s = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET,
                            .sin_port = htons ((uint16_t) port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;
  if (s < 0)
    return report (-1);
  setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  return report (do_bind ? bind (s, (struct sockaddr *) &sa, sizeof sa)
                         : connect (s, (struct sockaddr *) &sa, sizeof sa));
}

static int
do_clone (unsigned long flags)
{
  long r = syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (r == 0)
    _exit (0);
  if (r > 0)
    waitpid ((pid_t) r, NULL, 0);
  return report (r);
}

static int
do_clone3 (unsigned long flags)
{
  struct clone_args ca = { .flags = flags, .exit_signal = SIGCHLD };
  long r = syscall (SYS_clone3, &ca, sizeof ca);
  if (r == 0)
    _exit (0);
  if (r > 0)
    waitpid ((pid_t) r, NULL, 0);
  return report (r);
}

/* A minimal seccomp agent: receives the listener fd and the state over a
 * unix socket, prints the state, then answers one notification with
 * EPERM (errno 1) and prints the syscall number it saw. */
static int
listen_notify (const char *path)
{
  struct sockaddr_un sa;
  socklen_t len = unix_addr (path, &sa);
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  unlink (path);
  if (s < 0 || bind (s, (struct sockaddr *) &sa, len) < 0 || listen (s, 1) < 0)
    return report (-1);
  printf ("READY\n");
  fflush (stdout);
  int c = accept (s, NULL, NULL);
  if (c < 0)
    return report (-1);
  char buf[65536];
  union
  {
    char b[CMSG_SPACE (sizeof (int))];
    struct cmsghdr a;
  } u;
  struct iovec iov = { buf, sizeof buf - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                       .msg_controllen = sizeof u.b };
  ssize_t n = recvmsg (c, &mh, 0);
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
  if (n <= 0 || cm == NULL || cm->cmsg_type != SCM_RIGHTS)
    return report (-1);
  buf[n] = '\0';
  int lfd;
  memcpy (&lfd, CMSG_DATA (cm), sizeof lfd);
  printf ("STATE %s\n", buf);
  fflush (stdout);
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  memset (&req, 0, sizeof req);
  if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    return report (-1);
  printf ("NOTIFIED %d\n", req.data.nr);
  fflush (stdout);
  memset (&resp, 0, sizeof resp);
  resp.id = req.id;
  resp.error = -EPERM;
  if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
    return report (-1);
  return 0;
}

/* A thread that gives its tid and waits: the target of "tidaffinity". */
static int tid_pipe[2];
static void *
tid_thread (void *arg)
{
  pid_t t = (pid_t) syscall (SYS_gettid);
  if (write (tid_pipe[1], &t, sizeof t) != sizeof t)
    return NULL;
  pause ();
  return NULL;
}

/* sched_setaffinity(CPU |cpu|) of another thread of this process, by its
 * tid (pthread_setaffinity_np does this). */
static int
tid_affinity (int cpu)
{
  pthread_t th;
  pid_t t;
  cpu_set_t set;
  if (pipe (tid_pipe) < 0 || pthread_create (&th, NULL, tid_thread, NULL)
      || read (tid_pipe[0], &t, sizeof t) != sizeof t)
    return report (-1);
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return report (sched_setaffinity (t, sizeof set, &set));
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: sysc <syscall|command> [args...]\n");
      return 2;
    }
  const char *c = argv[1];
  char **a = argv + 2;
  int n = argc - 2;
  if (strcmp (c, "x32") == 0 && n >= 1)
    return report (raw (lookup (a[0]) | 0x40000000L, n - 1, a + 1));
  if (strcmp (c, "open") == 0 && n == 2)
    {
      int fl = strcmp (a[1], "r") == 0       ? O_RDONLY
               : strcmp (a[1], "w") == 0     ? O_WRONLY
               : strcmp (a[1], "rw") == 0    ? O_RDWR
               : strcmp (a[1], "dir") == 0   ? O_RDONLY | O_DIRECTORY
               : strcmp (a[1], "creat") == 0 ? O_WRONLY | O_CREAT
               : strcmp (a[1], "path") == 0  ? O_PATH
                                             : -1;
      if (fl < 0)
        return 2;
      return report (open (a[0], fl, 0644));
    }
  if (strcmp (c, "write") == 0 && n >= 1)
    {
      int fd = open (a[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0)
        return report (-1);
      const char *t = n >= 2 ? a[1] : "x\n";
      return report (write (fd, t, strlen (t)));
    }
  if (strcmp (c, "truncate") == 0 && n == 1)
    return report (truncate (a[0], 0));
  if (strcmp (c, "mkdir") == 0 && n == 1)
    return report (mkdir (a[0], 0755));
  if (strcmp (c, "unlink") == 0 && n == 1)
    return report (unlink (a[0]));
  if (strcmp (c, "rename") == 0 && n == 2)
    return report (rename (a[0], a[1]));
  if (strcmp (c, "mknod-fifo") == 0 && n == 1)
    return report (mknod (a[0], S_IFIFO | 0644, 0));
  if ((strcmp (c, "uconnect") == 0 || strcmp (c, "ulisten") == 0) && n == 1)
    {
      struct sockaddr_un sa;
      socklen_t len = unix_addr (a[0], &sa);
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      if (s < 0)
        return report (-1);
      if (c[1] == 'c')
        return report (connect (s, (struct sockaddr *) &sa, len));
      if (bind (s, (struct sockaddr *) &sa, len) < 0 || listen (s, 1) < 0)
        return report (-1);
      printf ("READY\n");
      fflush (stdout);
      return report (accept (s, NULL, NULL));
    }
  if (strcmp (c, "setaffinity") == 0 && n == 2)
    {
      cpu_set_t set;
      CPU_ZERO (&set);
      CPU_SET ((int) num (a[1]), &set);
      return report (sched_setaffinity ((pid_t) num (a[0]), sizeof set, &set));
    }
  if (strcmp (c, "tidaffinity") == 0 && n == 1)
    return tid_affinity ((int) num (a[0]));
  if (strcmp (c, "setsched") == 0 && n == 2)
    {
      struct sched_param sp = { 0 };
      return report (syscall (SYS_sched_setscheduler, (pid_t) num (a[0]),
                              (int) num (a[1]), &sp));
    }
  if (strcmp (c, "kill") == 0 && n == 2)
    return report (kill ((pid_t) num (a[0]), (int) num (a[1])));
  if (strcmp (c, "bind") == 0 && n == 1)
    return tcp (1, (int) num (a[0]));
  if (strcmp (c, "connect") == 0 && n == 1)
    return tcp (0, (int) num (a[0]));
  if (strcmp (c, "clone") == 0 && n == 1)
    return do_clone ((unsigned long) num (a[0]));
  if (strcmp (c, "clone3") == 0 && n == 1)
    return do_clone3 ((unsigned long) num (a[0]));
  if (strcmp (c, "tiocsti") == 0)
    {
      char ch = 'x';
      return report (ioctl (0, TIOCSTI, &ch));
    }
  if (strcmp (c, "prlimit") == 0 && n == 4)
    {
      struct
      {
        uint64_t cur, max;
      } rl = { (uint64_t) num (a[2]), (uint64_t) num (a[3]) };
      return report (syscall (SYS_prlimit64, (pid_t) num (a[0]),
                              (int) num (a[1]), &rl, NULL));
    }
  if (strcmp (c, "ioctl") == 0 && n == 2)
    {
      char buf[256];
      int fd = open (a[0], O_RDWR | O_NOCTTY);
      if (fd < 0)
        return report (-1);
      return report (ioctl (fd, (unsigned long) num (a[1]), buf));
    }
  if (strcmp (c, "loop") == 0 && n == 1)
    {
      long iters = num (a[0]);
      struct timespec t0, t1;
      clock_gettime (CLOCK_MONOTONIC, &t0);
      for (long i = 0; i < iters; i++)
        {
          syscall (SYS_getpid);
          int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
          if (fd >= 0)
            close (fd);
        }
      clock_gettime (CLOCK_MONOTONIC, &t1);
      double ns = (double) (t1.tv_sec - t0.tv_sec) * 1e9
                  + (double) (t1.tv_nsec - t0.tv_nsec);
      printf ("%.1f\n", iters > 0 ? ns / (double) iters : 0.0);
      return 0;
    }
  if (strcmp (c, "sloop") == 0 && n == 2)
    {
      long iters = num (a[0]);
      struct timespec t0, t1;
      struct stat st;
      clock_gettime (CLOCK_MONOTONIC, &t0);
      for (long i = 0; i < iters; i++)
        {
          int fd = stat (a[1], &st) == 0 ? open (a[1], O_RDONLY | O_CLOEXEC)
                                         : -1;
          if (fd < 0)
            return report (-1);
          close (fd);
        }
      clock_gettime (CLOCK_MONOTONIC, &t1);
      double ns = (double) (t1.tv_sec - t0.tv_sec) * 1e9
                  + (double) (t1.tv_nsec - t0.tv_nsec);
      printf ("%.1f\n", iters > 0 ? ns / (double) iters : 0.0);
      return 0;
    }
  if (strcmp (c, "listen-notify") == 0 && n == 1)
    return listen_notify (a[0]);
  return report (raw (lookup (c), n, a));
}
