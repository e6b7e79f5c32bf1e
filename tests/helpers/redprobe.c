/* redprobe: escape attempts against the namespace-less view, run inside a
 * test container (tests/integration/nsless_red.bats).  Prints "OK" when the
 * attempt succeeded (the caller decides whether that is a leak), else the
 * errno's name; exits 0 either way.  Static; copied into test root
 * filesystems by tests/lib/common.bash.
 *
 *   redprobe nested-connect <path>   install a seccomp filter of our own
 *                                    that returns USER_NOTIF for connect,
 *                                    answer it CONTINUE from a thread, then
 *                                    connect to the unix socket <path>
 *   redprobe nested-open <path>      the same for openat, then read <path>
 *   redprobe listener                only install a USER_NOTIF filter with
 *                                    a listener (OK when the kernel took it)
 *   redprobe reopen-write <path>     open <path> O_RDONLY, then open
 *                                    /proc/self/fd/N O_WRONLY|O_APPEND and
 *                                    write "X"
 *   redprobe exchange <a> <b>        renameat2(RENAME_EXCHANGE)
 *   redprobe openat-w <dir> <name>   open <dir>, openat(dirfd, <name>,
 *                                    O_WRONLY|O_APPEND), write "X"
 *   redprobe raw <nr> [args...]      syscall(nr, args) (numbers, 0x ok)
 *   redprobe ptrace <pid>            PTRACE_SEIZE
 *   redprobe vmread <pid>            process_vm_readv of 1 byte at 0x400000
 *   redprobe getfd <pid> <fd>        pidfd_open + pidfd_getfd
 *   redprobe udp <port>              sendto 127.0.0.1:<port> "X"
 *   redprobe tfo <port>              TCP sendto(MSG_FASTOPEN) 127.0.0.1:<port>
 *   redprobe openat2 <dir> <path> <resolve> [size]
 *                                    openat2 O_RDONLY at an fd of <dir>
 *                                    (size: how's size, its tail zeros;
 *                                    "<size>+": a 1 in its last byte);
 *                                    prints
 *                                    OK:<the file's first line up to ':'>
 *   redprobe ubind-name <path>       bind a unix socket at <path>, print
 *                                    what getsockname says
 *   redprobe listen-auto             listen(2) on an unbound TCP socket,
 *                                    print OK:<port> it took
 *   redprobe hostile                 open() with an unmapped path, a path
 *                                    running into an unmapped page, one
 *                                    of 8000 bytes: one result line each
 *   redprobe threads <n>             n threads open and close /etc/passwd
 *                                    50 times each; prints the failures
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int
result (long r)
{
  if (r < 0)
    printf ("%s\n", strerrorname_np (errno) ? strerrorname_np (errno) : "E?");
  else
    printf ("OK\n");
  return 0;
}

/* A filter that sends |nr| to our own listener, everything else allowed. */
static int
own_listener (int nr)
{
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (unsigned) nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  return (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                        SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static void *
answer_continue (void *arg)
{
  int l = (int) (long) arg;
  for (;;)
    {
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      memset (&req, 0, sizeof req);
      if (ioctl (l, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        continue;
      memset (&resp, 0, sizeof resp);
      resp.id = req.id;
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ioctl (l, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
  return NULL;
}

static void *
opener (void *arg)
{
  long bad = 0;
  for (int i = 0; i < 50; i++)
    {
      int fd = open ("/etc/passwd", O_RDONLY);
      if (fd < 0)
        bad++;
      else
        close (fd);
    }
  return (void *) bad;
}

static int
nested (int nr)
{
  pthread_t t;
  int l = own_listener (nr);
  if (l < 0)
    return -1;
  pthread_create (&t, NULL, answer_continue, (void *) (long) l);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "";
  if (strcmp (c, "listener") == 0)
    return result (own_listener (SYS_getppid));
  if (strcmp (c, "nested-connect") == 0 && argc == 3)
    {
      struct sockaddr_un a = { .sun_family = AF_UNIX };
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      snprintf (a.sun_path, sizeof a.sun_path, "%s", argv[2]);
      if (nested (SYS_connect) < 0)
        return result (-1);
      return result (connect (s, (struct sockaddr *) &a, sizeof a));
    }
  if (strcmp (c, "nested-open") == 0 && argc == 3)
    {
      char buf[256];
      if (nested (SYS_openat) < 0)
        return result (-1);
      int fd = open (argv[2], O_RDONLY);
      ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
      if (n >= 0)
        buf[n] = '\0', fprintf (stderr, "%s", buf);
      return result (n);
    }
  if (strcmp (c, "reopen-write") == 0 && argc == 3)
    {
      char p[64];
      int fd = open (argv[2], O_RDONLY);
      if (fd < 0)
        return result (-1);
      snprintf (p, sizeof p, "/proc/self/fd/%d", fd);
      int w = open (p, O_WRONLY | O_APPEND);
      return result (w < 0 ? -1 : write (w, "X", 1));
    }
  if (strcmp (c, "exchange") == 0 && argc == 4)
    return result (syscall (SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD,
                            argv[3], RENAME_EXCHANGE));
  if (strcmp (c, "openat-w") == 0 && argc == 4)
    {
      int d = open (argv[2], O_RDONLY | O_DIRECTORY);
      int w = d < 0 ? -1 : openat (d, argv[3], O_WRONLY | O_APPEND);
      return result (w < 0 ? -1 : write (w, "X", 1));
    }
  if (strcmp (c, "raw") == 0 && argc >= 3)
    {
      long a[6] = { 0 };
      for (int i = 3; i < argc && i < 9; i++)
        a[i - 3] = strtol (argv[i], NULL, 0);
      return result (syscall (strtol (argv[2], NULL, 0), a[0], a[1], a[2],
                              a[3], a[4], a[5]));
    }
  if (strcmp (c, "ptrace") == 0 && argc == 3)
    return result (ptrace (PTRACE_SEIZE, atoi (argv[2]), 0, 0));
  if (strcmp (c, "vmread") == 0 && argc == 3)
    {
      char b;
      struct iovec l = { &b, 1 }, r = { (void *) 0x400000, 1 };
      return result (process_vm_readv (atoi (argv[2]), &l, 1, &r, 1, 0));
    }
  if (strcmp (c, "getfd") == 0 && argc == 4)
    {
      int pfd = (int) syscall (SYS_pidfd_open, atoi (argv[2]), 0);
      return result (pfd < 0 ? -1 : syscall (SYS_pidfd_getfd, pfd,
                                             atoi (argv[3]), 0));
    }
  if (strcmp (c, "udp") == 0 && argc == 3)
    {
      struct sockaddr_in a = { .sin_family = AF_INET,
                               .sin_port = htons ((uint16_t) atoi (argv[2])),
                               .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      int s = socket (AF_INET, SOCK_DGRAM, 0);
      return result (sendto (s, "X", 1, 0, (struct sockaddr *) &a, sizeof a));
    }
  if (strcmp (c, "tfo") == 0 && argc == 3)
    {
      struct sockaddr_in a = { .sin_family = AF_INET,
                               .sin_port = htons ((uint16_t) atoi (argv[2])),
                               .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      int s = socket (AF_INET, SOCK_STREAM, 0);
      return result (sendto (s, "X", 1, MSG_FASTOPEN, (struct sockaddr *) &a,
                             sizeof a));
    }
  if (strcmp (c, "hostile") == 0)
    {
      long pg = sysconf (_SC_PAGESIZE);
      char *m = mmap (NULL, (size_t) pg * 2, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      static char big[8000];
      munmap (m + pg, (size_t) pg);
      memset (m, 'a', (size_t) pg);
      memset (big, 'b', sizeof big - 1);
      result (open ((const char *) 8, O_RDONLY));
      result (open (m, O_RDONLY));
      return result (open (big, O_RDONLY));
    }
  if (strcmp (c, "threads") == 0 && argc == 3)
    {
      int n = atoi (argv[2]);
      long bad = 0;
      pthread_t *t = calloc ((size_t) n, sizeof *t);
      for (int i = 0; i < n; i++)
        if (pthread_create (&t[i], NULL, opener, NULL) != 0)
          t[i] = 0;
      for (int i = 0; i < n; i++)
        {
          void *r = NULL;
          if (t[i])
            pthread_join (t[i], &r);
          bad += (long) r;
        }
      printf ("%ld\n", bad);
      return 0;
    }
  if (strcmp (c, "openat2") == 0 && (argc == 5 || argc == 6))
    {
      static char big[8192];
      struct open_how *h = (struct open_how *) big;
      size_t size = argc == 6 ? strtoul (argv[5], NULL, 0) : sizeof *h;
      int d = open (argv[2], O_RDONLY | O_DIRECTORY);
      h->flags = O_RDONLY;
      h->resolve = strtoull (argv[4], NULL, 0);
      if (argc == 6 && strchr (argv[5], '+') && size > sizeof *h
          && size <= sizeof big)
        big[size - 1] = 1;
      int fd = d < 0 ? -1 : (int) syscall (SYS_openat2, d, argv[3], h, size);
      char line[32] = "";
      if (fd < 0)
        return result (-1);
      if (read (fd, line, sizeof line - 1) > 0)
        line[strcspn (line, ":\n")] = '\0';
      printf ("OK:%s\n", line);
      return 0;
    }
  if (strcmp (c, "ubind-name") == 0 && argc == 3)
    {
      struct sockaddr_un a = { .sun_family = AF_UNIX };
      socklen_t len = sizeof a;
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      snprintf (a.sun_path, sizeof a.sun_path, "%s", argv[2]);
      if (bind (s, (struct sockaddr *) &a, sizeof a) < 0
          || getsockname (s, (struct sockaddr *) &a, &len) < 0)
        return result (-1);
      printf ("OK:%s\n", a.sun_path);
      return 0;
    }
  if (strcmp (c, "listen-auto") == 0)
    {
      struct sockaddr_in a;
      socklen_t len = sizeof a;
      int s = socket (AF_INET, SOCK_STREAM, 0);
      if (listen (s, 1) < 0 || getsockname (s, (struct sockaddr *) &a, &len) < 0)
        return result (-1);
      printf ("OK:%d\n", ntohs (a.sin_port));
      return 0;
    }
  fprintf (stderr, "redprobe: unknown command or arguments: %s\n", c);
  return 2;
}
