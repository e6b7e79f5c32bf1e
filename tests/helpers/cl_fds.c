/* cl_fds: the process checkpoint_fds.bats checkpoints and restores.  Static.
 *
 *   cl_fds [-e] [-t] [-s] [-E] [-p] [-f FIFO] [-l SPEC]...
 *   cl_fds -C SPEC          connect to SPEC, print the line it sends
 *
 * SPEC: tcp:PORT, tcp6:PORT (listens on 127.0.0.1 / ::1; the client gives
 * the same), unix:PATH, unix:@NAME (abstract).
 *   -e  an eventfd (nonblocking, semaphore off) holding 41
 *   -t  a timerfd on CLOCK_MONOTONIC firing every 20 ms
 *   -s  SIGUSR2 blocked and read through a signalfd
 *   -E  an epoll watching the eventfd (-e) with data 0xe1e1, and the
 *       socket pair's first end (-P) with data 0x3030
 *   -p  a pipe, both ends nonblocking, "pipe-bytes" in it, and a second
 *       open file description of its read end, blocking
 *   -f  a FIFO made at FIFO, "fifo-bytes" in it, read end nonblocking,
 *       and one more fd opened on it read-write
 *   -F  once set up, fork a child that holds every fd too and pauses
 *   -P  a connected unix socket pair (which criu-lite cannot restore)
 *   -l  a listening socket (SO_REUSEADDR, nonblocking, backlog 8; a unix
 *       socket's file mode 0666) that answers every
 *       connection with "hello SPEC" and prints "accepted SPEC"
 *   -N  never accept: connections stay in the listeners' accept queues
 * Prints "ready" once set up; on SIGUSR1 prints one line per object (its
 * state now: reads what it can).  Each fd number is fixed (dup2 to 10+),
 * so that the restored process is checked at the numbers it had. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

enum { EFD = 10, TFD, SFD, EPFD, PR, PW, FR, FW, L0, PR2 = 24, FRW };
#define MAXL 4
static const char *lspec[MAXL];
static int nl;
static volatile sig_atomic_t want_report;
static int have_e, have_t, have_s, have_ep, have_p, have_f;

static void say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void
say (const char *fmt, ...)
{
  char b[512];
  va_list ap;
  int n;
  va_start (ap, fmt);
  n = vsnprintf (b, sizeof b, fmt, ap);
  va_end (ap);
  if (write (1, b, (size_t) n) < 0)
    _exit (3);
}

static void
die (const char *what)
{
  say ("error %s: %s\n", what, strerror (errno));
  exit (2);
}

static void
at (int fd, int want)
{
  if (fd < 0)
    die ("setup");
  if (fd != want && (dup2 (fd, want) < 0 || close (fd) < 0))
    die ("dup2");
}

static socklen_t
addr_of (const char *spec, struct sockaddr_storage *ss, int *fam)
{
  memset (ss, 0, sizeof *ss);
  if (strncmp (spec, "tcp:", 4) == 0)
    {
      struct sockaddr_in *a = (void *) ss;
      a->sin_family = AF_INET;
      a->sin_port = htons ((uint16_t) atoi (spec + 4));
      a->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      *fam = AF_INET;
      return sizeof *a;
    }
  if (strncmp (spec, "tcp6:", 5) == 0)
    {
      struct sockaddr_in6 *a = (void *) ss;
      a->sin6_family = AF_INET6;
      a->sin6_port = htons ((uint16_t) atoi (spec + 5));
      a->sin6_addr = in6addr_loopback;
      *fam = AF_INET6;
      return sizeof *a;
    }
  if (strncmp (spec, "unix:", 5) == 0)
    {
      struct sockaddr_un *a = (void *) ss;
      const char *p = spec + 5;
      size_t n = strlen (p);
      a->sun_family = AF_UNIX;
      *fam = AF_UNIX;
      if (n >= sizeof a->sun_path)
        n = sizeof a->sun_path - 1;
      memcpy (a->sun_path, p, n);
      if (p[0] == '@')
        {
          a->sun_path[0] = '\0';
          return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n);
        }
      return sizeof *a;
    }
  errno = EINVAL;
  die (spec);
  return 0;
}

static void
listen_on (const char *spec, int want)
{
  struct sockaddr_storage ss;
  int fam, one = 1, fd;
  socklen_t len = addr_of (spec, &ss, &fam);
  fd = socket (fam, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (void *) &ss, len) < 0 || listen (fd, 8) < 0)
    die (spec);
  /* a server lets its clients in: the file's mode must come back */
  if (fam == AF_UNIX && spec[5] == '/' && chmod (spec + 5, 0666) < 0)
    die ("chmod");
  at (fd, want);
}

static int
client (const char *spec)
{
  struct sockaddr_storage ss;
  int fam, fd;
  char buf[256];
  ssize_t n;
  socklen_t len = addr_of (spec, &ss, &fam);
  fd = socket (fam, SOCK_STREAM, 0);
  if (fd < 0 || connect (fd, (void *) &ss, len) < 0)
    die ("connect");
  alarm (5);
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    die ("read");
  buf[n] = '\0';
  say ("%s", buf);
  return 0;
}

static void
on_usr1 (int sig)
{
  (void) sig;
  want_report = 1;
}

static int
nonblock (int fd)
{
  return (fcntl (fd, F_GETFL) & O_NONBLOCK) != 0;
}

static void
report_pipes (void)
{
  char buf[64];
  ssize_t n;
  if (have_p)
    {
      n = read (PR, buf, sizeof buf - 1);
      buf[n > 0 ? n : 0] = '\0';
      say ("pipe nonblock=%d/%d/%d data=%s\n", nonblock (PR), nonblock (PW),
           nonblock (PR2), buf);
    }
  if (have_f)
    {
      n = read (FR, buf, sizeof buf - 1);
      buf[n > 0 ? n : 0] = '\0';
      say ("fifo nonblock=%d/%d data=%s rdwr=%d\n", nonblock (FR), nonblock (FW), buf,
           (fcntl (FRW, F_GETFL) & O_ACCMODE) == O_RDWR);
    }
}

static void
report (void)
{
  uint64_t v = 0;
  if (have_ep)
    {
      struct epoll_event ev[4];
      int n = epoll_wait (EPFD, ev, 4, 0);
      say ("epoll n=%d data=%llx\n", n, n > 0 ? (unsigned long long) ev[0].data.u64 : 0ull);
    }
  if (have_e)
    {
      ssize_t r = read (EFD, &v, 8);
      say ("eventfd count=%llu nonblock=%d\n", r == 8 ? (unsigned long long) v : 0ull,
           nonblock (EFD));
    }
  if (have_t)
    {
      struct itimerspec its;
      ssize_t r = read (TFD, &v, 8);
      timerfd_gettime (TFD, &its);
      say ("timerfd ticks=%llu interval_ms=%ld\n", r == 8 ? (unsigned long long) v : 0ull,
           its.it_interval.tv_nsec / 1000000 + its.it_interval.tv_sec * 1000);
    }
  if (have_s)
    {
      struct signalfd_siginfo si;
      ssize_t r = read (SFD, &si, sizeof si);
      say ("signalfd sig=%d\n", r == (ssize_t) sizeof si ? (int) si.ssi_signo : 0);
    }
  report_pipes ();
  for (int i = 0; i < nl; i++)
    {
      int one = 0;
      socklen_t l = sizeof one;
      getsockopt (L0 + i, SOL_SOCKET, SO_REUSEADDR, &one, &l);
      say ("listen %s nonblock=%d reuseaddr=%d\n", lspec[i], nonblock (L0 + i), one);
    }
  say ("report done\n");
}

static void
setup_more (void)
{
  if (have_ep)
    {
      struct epoll_event ev = { .events = EPOLLIN };
      ev.data.u64 = 0xe1e1;
      at (epoll_create1 (0), EPFD);
      if (epoll_ctl (EPFD, EPOLL_CTL_ADD, EFD, &ev) < 0)
        die ("epoll_ctl");
      ev.data.u64 = 0x3030;
      if (fcntl (30, F_GETFD) >= 0 && epoll_ctl (EPFD, EPOLL_CTL_ADD, 30, &ev) < 0)
        die ("epoll_ctl");
    }
  if (have_p)
    {
      int p[2];
      if (pipe2 (p, O_NONBLOCK) < 0)
        die ("pipe");
      at (p[0], PR);
      at (p[1], PW);
      if (write (PW, "pipe-bytes", 10) != 10)
        die ("write pipe");
      {
        char self[64];
        snprintf (self, sizeof self, "/proc/self/fd/%d", PR);
        at (open (self, O_RDONLY), PR2);
      }
    }
}

static void
fifo (const char *path)
{
  if (mkfifo (path, 0600) < 0 && errno != EEXIST)
    die ("mkfifo");
  at (open (path, O_RDONLY | O_NONBLOCK), FR);
  at (open (path, O_WRONLY), FW);
  at (open (path, O_RDWR), FRW);
  if (write (FW, "fifo-bytes", 10) != 10)
    die ("write fifo");
  have_f = 1;
}

int
main (int argc, char **argv)
{
  struct sigaction sa = { .sa_handler = on_usr1 };
  int c;
  int fork_kid = 0, no_accept = 0;
  while ((c = getopt (argc, argv, "etsEpPFf:l:C:N")) != -1)
    switch (c)
      {
      case 'N':
        no_accept = 1;
        break;
      case 'C':
        return client (optarg);
      case 'e':
        have_e = 1;
        at (eventfd (0, EFD_NONBLOCK), EFD);
        if (write (EFD, &(uint64_t) { 41 }, 8) != 8)
          die ("eventfd write");
        break;
      case 't':
        {
          struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } };
          have_t = 1;
          at (timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK), TFD);
          if (timerfd_settime (TFD, 0, &its, NULL) < 0)
            die ("timerfd_settime");
          break;
        }
      case 's':
        {
          sigset_t m;
          have_s = 1;
          sigemptyset (&m);
          sigaddset (&m, SIGUSR2);
          sigprocmask (SIG_BLOCK, &m, NULL);
          at (signalfd (-1, &m, SFD_NONBLOCK), SFD);
          break;
        }
      case 'E':
        have_ep = 1;
        break;
      case 'F':
        fork_kid = 1;
        break;
      case 'P':
        {
          int sp[2];
          if (socketpair (AF_UNIX, SOCK_STREAM, 0, sp) < 0)
            die ("socketpair");
          at (sp[0], 30);
          at (sp[1], 31);
          break;
        }
      case 'p':
        have_p = 1;
        break;
      case 'f':
        fifo (optarg);
        break;
      case 'l':
        if (nl == MAXL)
          return 2;
        lspec[nl] = optarg;
        listen_on (optarg, L0 + nl);
        nl++;
        break;
      default:
        return 2;
      }
  setup_more ();
  if (fork_kid && fork () == 0)
    for (;;)
      pause ();
  sigaction (SIGUSR1, &sa, NULL);  /* no SA_RESTART: poll returns */
  say ("ready\n");
  for (;;)
    {
      struct pollfd p[MAXL];
      for (int i = 0; i < nl; i++)
        p[i] = (struct pollfd) { L0 + i, no_accept ? 0 : POLLIN, 0 };
      if (poll (p, (nfds_t) nl, nl ? 20 : 20) < 0 && errno != EINTR)
        die ("poll");
      for (int i = 0; i < nl; i++)
        if (p[i].revents & POLLIN)
          {
            int s = accept4 (L0 + i, NULL, NULL, SOCK_CLOEXEC);
            if (s < 0)
              continue;
            say ("accepted %s\n", lspec[i]);
            dprintf (s, "hello %s\n", lspec[i]);
            close (s);
          }
      if (want_report)
        {
          want_report = 0;
          report ();
        }
    }
}
