/* Eventfds, timerfds, signalfds, epolls and listening sockets made again
 * from their fdx records (image-fdx.c checked them), in the restorer of
 * the process that held them, before the point of no return: every
 * failure is still a message.  What needs every fd at its number — the
 * epoll registrations, keyed by (file, fd) — is cl_fdx_epoll_fill's,
 * after the fds are installed. */
#include <errno.h>
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

int
cl_fdx_open (const struct cl_image *img, const struct cl_fd *f,
             struct cm_err **err)
{
  const struct cl_fdx *x = cl_image_fdx (img, f->fd);
  int fd = x ? make (x, err) : cm_err_set (err, EINVAL, "no record");
  if (fd < 0)
    return cm_err_wrap (err, "fd %d", f->fd);
  if (fcntl (fd, F_SETFL, (int) (f->flags & CL_FD_STATUS)) < 0)
    {
      int e = errno;
      close (fd);
      return cm_err_set (err, e, "fd %d: status flags %#o", f->fd,
                         f->flags & CL_FD_STATUS);
    }
  return fd;
}

int
cl_fdx_epoll_fill (const struct cl_image *img)
{
  for (size_t i = 0; i < img->nfds; i++)
    {
      const struct cl_fdx *x = cl_image_fdx (img, img->fds[i].fd);
      const struct cl_fdx_epoll *e = (const void *) (x + 1);
      if (x == NULL || x->kind != CL_FD_EPOLL)
        continue;
      for (size_t k = 0; k < x->len / sizeof *e; k++)
        {
          struct epoll_event ev = { .events = e[k].events };
          ev.data.u64 = e[k].data;
          if (epoll_ctl (x->fd, EPOLL_CTL_ADD, e[k].tfd, &ev) < 0)
            return errno ? errno : EINVAL;
        }
    }
  return 0;
}
