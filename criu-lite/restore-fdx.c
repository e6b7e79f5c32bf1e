/* Eventfds, timerfds, signalfds, epolls and listening sockets made again
 * from their fdx records (image-fdx.c checked them), once per object, in
 * the root restorer before it forks the others (an object inherited
 * across fork is shared again), before the point of no return: every
 * failure is still a message.  What needs every fd at its number — the
 * epoll registrations, keyed by (file, fd) — is cl_fdx_epoll_fill's,
 * after the fds are installed. */
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW ('T', 0, uint64_t)
#endif

static struct timespec
ts_of (uint64_t ns)
{
  return (struct timespec) { (time_t) (ns / 1000000000ull),
                             (long) (ns % 1000000000ull) };
}

static int
make_eventfd (const struct cl_fdx_eventfd *e, struct cm_err **err)
{
  int fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK
                           | (e->semaphore ? EFD_SEMAPHORE : 0));
  if (fd < 0)
    return cm_err_set (err, errno, "eventfd");
  if (e->count && write (fd, &e->count, 8) != 8)
    {
      close (fd);
      return cm_err_set (err, errno, "eventfd: set its count to %llu",
                         (unsigned long long) e->count);
    }
  return fd;
}

/* Armed again for the time it had left (an absolute timer at now + that,
 * on its own clock, so that TFD_TIMER_CANCEL_ON_SET still applies), its
 * unread expirations put back. */
static int
arm_timerfd (int fd, const struct cl_fdx_timerfd *t, struct cm_err **err)
{
  struct itimerspec its = { ts_of (t->interval_ns), ts_of (t->value_ns) };
  int flags = 0;
  if (t->value_ns == 0 && t->interval_ns)
    its.it_value.tv_nsec = 1;  /* due now: keep it armed */
  if (t->settime_flags & TFD_TIMER_ABSTIME && (t->value_ns || t->interval_ns))
    {
      struct timespec now;
      clockid_t base = t->clockid == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME
                       : t->clockid == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME
                                                            : t->clockid;
      clock_gettime (base, &now);
      its.it_value = ts_of ((uint64_t) now.tv_sec * 1000000000ull
                            + (uint64_t) now.tv_nsec + t->value_ns
                            + (t->value_ns ? 0 : 1));
      flags = (int) t->settime_flags;
    }
  if (timerfd_settime (fd, flags, &its, NULL) < 0)
    return cm_err_set (err, errno, "timerfd: arm it");
  if (t->ticks && ioctl (fd, TFD_IOC_SET_TICKS, &t->ticks) < 0)
    return cm_err_set (err, errno, "timerfd: put back its %llu unread "
                       "expirations (TFD_IOC_SET_TICKS)",
                       (unsigned long long) t->ticks);
  return 0;
}

static int
make_timerfd (const struct cl_fdx_timerfd *t, struct cm_err **err)
{
  int fd = timerfd_create (t->clockid, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0)
    return cm_err_set (err, errno, "timerfd on clock %d", t->clockid);
  if (arm_timerfd (fd, t, err) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static int
make_signalfd (const struct cl_fdx_signalfd *s, struct cm_err **err)
{
  int fd = (int) syscall (SYS_signalfd4, -1, &s->sigmask, 8,
                          SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0)
    return cm_err_set (err, errno, "signalfd with mask %#llx",
                       (unsigned long long) s->sigmask);
  return fd;
}

/* A unix socket's file left by the checkpointed process would make bind
 * fail: removed when it is a socket, as CRIU does. */
static void
unlink_stale (const struct cl_fdx_listen *s)
{
  struct sockaddr_un un;
  size_t n = s->addrlen - offsetof (struct sockaddr_un, sun_path);
  struct stat st;
  memset (&un, 0, sizeof un);
  memcpy (&un, s->addr, s->addrlen);
  if (n == 0 || un.sun_path[0] == '\0')
    return;  /* abstract */
  if (lstat (un.sun_path, &st) == 0 && S_ISSOCK (st.st_mode))
    unlink (un.sun_path);
}

/* The socket's file as it was: mode and owner (bind made it by umask). */
static int
sock_file (const struct cl_fdx_listen *s)
{
  struct sockaddr_un un;
  struct stat st;
  memset (&un, 0, sizeof un);
  memcpy (&un, s->addr, s->addrlen);
  if (un.sun_path[sizeof un.sun_path - 1] != '\0')
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  if (lstat (un.sun_path, &st) < 0 || !S_ISSOCK (st.st_mode))
    return -1;
  if ((st.st_uid != s->fuid || st.st_gid != s->fgid)
      && lchown (un.sun_path, s->fuid, s->fgid) < 0)
    return -1;
  return chmod (un.sun_path, s->fmode);
}

static int
setup_listen (int fd, const struct cl_fdx_listen *s, struct cm_err **err)
{
  int one = 1, v6only = (s->opts & CL_SOCK_V6ONLY) != 0;
  if ((s->opts & CL_SOCK_REUSEADDR
       && setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
      || (s->opts & CL_SOCK_REUSEPORT
          && setsockopt (fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
      || (s->family == AF_INET6
          && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) < 0))
    return cm_err_set (err, errno, "socket: set its options");
  if (s->family == AF_UNIX)
    unlink_stale (s);
  if (bind (fd, (const struct sockaddr *) s->addr, s->addrlen) < 0)
    return cm_err_set (err, errno, "socket: bind it to its address");
  if (s->fmode && sock_file (s) < 0)
    return cm_err_set (err, errno, "socket: mode and owner of its file");
  if (listen (fd, s->backlog ? (int) s->backlog : SOMAXCONN) < 0)
    return cm_err_set (err, errno, "socket: listen");
  return 0;
}

static int
make_listen (const struct cl_fdx_listen *s, struct cm_err **err)
{
  int fd = socket ((int) s->family, (int) s->type | SOCK_CLOEXEC, (int) s->protocol);
  if (fd < 0)
    return cm_err_set (err, errno, "socket (family %u, type %u)", s->family, s->type);
  if (setup_listen (fd, s, err) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static int
make (const struct cl_fdx *x, struct cm_err **err)
{
  const void *p = x + 1;
  switch (x->kind)
    {
    case CL_FD_EVENTFD:
      return make_eventfd (p, err);
    case CL_FD_TIMERFD:
      return make_timerfd (p, err);
    case CL_FD_SIGNALFD:
      return make_signalfd (p, err);
    case CL_FD_EPOLL:
      {
        int fd = epoll_create1 (EPOLL_CLOEXEC);
        return fd < 0 ? cm_err_set (err, errno, "epoll_create1") : fd;
      }
    case CL_FD_LISTEN:
      return make_listen (p, err);
    default:
      return cm_err_set (err, EINVAL, "kind %u", x->kind);
    }
}

struct made
{
  uint64_t id;
  int fd;
};

static struct made *objs;
static size_t nobjs;

int
cl_fdx_fd (const struct cl_fd *f)
{
  for (size_t i = 0; i < nobjs; i++)
    if (objs[i].id == f->pos)
      return objs[i].fd;
  return -1;
}

void
cl_fdx_close (void)
{
  for (size_t i = 0; i < nobjs; i++)
    close (objs[i].fd);
  free (objs);
  objs = NULL;
  nobjs = 0;
}

/* The object whose record |f| (of process |i| in tree order) holds. */
static int
make_one (const struct cl_image *img, size_t i, const struct cl_fd *f,
          struct cm_err **err)
{
  const struct cl_fdx *x = cl_image_fdx (img, f->fd);
  int fd;
  if (f->pos >> 32 != i + 1)
    return cm_err_set (err, 0, "fd %d: object id %#llx is not its own", f->fd,
                       (unsigned long long) f->pos);
  fd = make (x, err);
  if (fd < 0)
    return -1;
  objs = xrealloc (objs, (nobjs + 1) * sizeof *objs);
  objs[nobjs++] = (struct made) { f->pos, fd };
  if (fcntl (fd, F_SETFL, (int) (f->flags & CL_FD_STATUS)) < 0)
    return cm_err_set (err, errno, "status flags %#o", f->flags & CL_FD_STATUS);
  return 0;
}

int
cl_fdx_make (const struct cl_image *imgs, size_t n, struct cm_err **err)
{
  /* owners first: a process refers only to objects of itself or of a
   * process before it in the tree */
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < imgs[i].nfds; k++)
      {
        const struct cl_fd *f = &imgs[i].fds[k];
        if (f->kind < CL_FD_EVENTFD || f->kind > CL_FD_LISTEN)
          continue;
        if (cl_image_fdx (&imgs[i], f->fd) != NULL
            ? make_one (&imgs[i], i, f, err) < 0
            : cl_fdx_fd (f) < 0
                  && cm_err_set (err, 0, "it shares an object (id %#llx) no "
                                 "fd before it holds",
                                 (unsigned long long) f->pos) < 0)
          {
            cl_fdx_close ();
            return cm_err_wrap (err, "process %zu of the tree, fd %d", i, f->fd);
          }
      }
  return 0;
}

int
cl_fdx_epoll_fill (const struct cl_image *img)
{
  for (size_t i = 0; i < img->nfds; i++)
    {
      const struct cl_fdx *x = cl_image_fdx (img, img->fds[i].fd);
      const struct cl_fdx_epoll *e;
      if (x == NULL || x->kind != CL_FD_EPOLL)
        continue;
      e = (const void *) (x + 1);
      for (size_t k = 0; k < x->len / sizeof *e; k++)
        {
          struct epoll_event ev = { .events = e[k].events };
          ev.data.u64 = e[k].data;
          if (cl_image_fd_skipped (img, e[k].tfd))
            continue;  /* listed as not restored */
          if (epoll_ctl (x->fd, EPOLL_CTL_ADD, e[k].tfd, &ev) < 0)
            return errno ? errno : EINVAL;
        }
    }
  return 0;
}
