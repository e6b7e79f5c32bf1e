/* Section fdx of core.img: the state of eventfd, timerfd, signalfd,
 * epoll and listening-socket fds (docs/checkpoint.md).  Untrusted input:
 * every record is checked here, before restore creates anything from it,
 * and an error names the fd and what is wrong with its record. */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#define NS_MAX (1000000000ull * 86400 * 365 * 100)  /* a century */

/* Walks section fdx: NULL when a record overruns it. */
static const struct cl_fdx *
fdx_next (const struct cl_image *img, size_t *off)
{
  const struct cl_fdx *x;
  size_t left = img->fdx_len - *off;
  if (left < sizeof *x)
    return NULL;
  x = (const void *) (img->fdx + *off);
  if (x->len > left - sizeof *x)
    return NULL;
  *off += (sizeof *x + x->len + 7) & ~(size_t) 7;
  return x;
}

const struct cl_fdx *
cl_image_fdx (const struct cl_image *img, int32_t fd)
{
  size_t off = 0;
  const struct cl_fdx *x;
  while (off < img->fdx_len && (x = fdx_next (img, &off)) != NULL)
    if (x->fd == fd)
      return x;
  return NULL;
}

static bool
clock_ok (int32_t c)
{
  return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC || c == CLOCK_BOOTTIME
         || c == CLOCK_REALTIME_ALARM || c == CLOCK_BOOTTIME_ALARM;
}

static const char *
check_listen (const struct cl_fdx_listen *s)
{
  sa_family_t fam;
  memcpy (&fam, s->addr, sizeof fam);
  if (s->addrlen > sizeof s->addr || fam != s->family)
    return "an address of another family or size";
  if (s->fmode & ~07777u || (s->fmode && s->family != AF_UNIX))
    return "a bad socket file mode";
  if (s->backlog > 65535 || s->queued > CL_LISTEN_QUEUE_MAX || s->opts & ~(CL_SOCK_REUSEADDR | CL_SOCK_REUSEPORT
                                       | CL_SOCK_V6ONLY))
    return "a bad backlog or option";
  if (s->family == AF_INET || s->family == AF_INET6)
    {
      if (s->addrlen != (s->family == AF_INET ? sizeof (struct sockaddr_in)
                                              : sizeof (struct sockaddr_in6))
          || s->type != SOCK_STREAM
          || (s->protocol != 0 && s->protocol != IPPROTO_TCP))
        return "a bad TCP address, type or protocol";
      return NULL;
    }
  if (s->family != AF_UNIX)
    return "an address family other than IPv4, IPv6 and unix";
  if (s->addrlen <= offsetof (struct sockaddr_un, sun_path)
      || s->addrlen > sizeof (struct sockaddr_un)
      || (s->type != SOCK_STREAM && s->type != SOCK_SEQPACKET) || s->protocol)
    return "a bad unix address, type or protocol";
  return NULL;
}

/* NULL when the record is sound, else what is wrong with it. */
static const char *
check_one (const struct cl_fdx *x)
{
  const void *p = x + 1;
  switch (x->kind)
    {
    case CL_FD_EVENTFD:
      if (x->len != sizeof (struct cl_fdx_eventfd))
        return "a bad size";
      if (((const struct cl_fdx_eventfd *) p)->count == UINT64_MAX
          || ((const struct cl_fdx_eventfd *) p)->semaphore > 1)
        return "a counter out of range";
      return NULL;
    case CL_FD_TIMERFD:
      {
        const struct cl_fdx_timerfd *t = p;
        if (x->len != sizeof *t)
          return "a bad size";
        if (!clock_ok (t->clockid))
          return "a bad clock id";
        if (t->settime_flags & ~3u || t->value_ns > NS_MAX
            || t->interval_ns > NS_MAX)
          return "bad timer settings";
        return NULL;
      }
    case CL_FD_SIGNALFD:
      return x->len == sizeof (struct cl_fdx_signalfd) ? NULL : "a bad size";
    case CL_FD_EPOLL:
      if (x->len % sizeof (struct cl_fdx_epoll)
          || x->len / sizeof (struct cl_fdx_epoll) > CL_EPOLL_MAX)
        return "a bad size";
      return NULL;
    case CL_FD_LISTEN:
      if (x->len != sizeof (struct cl_fdx_listen))
        return "a bad size";
      return check_listen (p);
    default:
      return "an unknown kind";
    }
}

int
cl_check_fdx (const struct cl_image *img, struct cm_err **err)
{
  size_t off = 0, n = 0;
  int32_t prev = -1;
  if ((uintptr_t) img->fdx % 8)
    return cm_err_set (err, 0, "section fdx: misaligned");
  for (; off < img->fdx_len; n++)
    {
      const struct cl_fdx *x = fdx_next (img, &off);
      const char *bad;
      if (x == NULL)
        return cm_err_set (err, 0, "section fdx: record %zu overruns the "
                           "section", n);
      if (x->fd < 0 || x->fd >= CL_MAX_FD || x->fd <= prev)
        return cm_err_set (err, 0, "section fdx: record %zu has a bad fd "
                           "number %d", n, x->fd);
      prev = x->fd;
      if ((bad = check_one (x)) != NULL)
        return cm_err_set (err, 0, "section fdx: fd %d has %s", x->fd, bad);
    }
  return 0;
}

static bool
has_fd (const struct cl_image *img, int32_t fd)
{
  for (size_t i = 0; i < img->nfds; i++)
    if (img->fds[i].fd == fd)
      return true;
  return false;
}

bool
cl_image_fd_skipped (const struct cl_image *img, int32_t fd)
{
  for (size_t i = 0; i < img->nfds; i++)
    if (img->fds[i].fd == fd)
      return img->fds[i].kind == CL_FD_SKIPPED;
  return false;
}

/* Every fd an epoll watches must come back at its number (the kernel
 * keys a registration by (file, fd)), or be one --skip-unsupported left
 * out, listed as such: the epoll then no longer watches it. */
int
cl_check_epolls (const struct cl_image *img, struct cm_err **err)
{
  size_t off = 0;
  const struct cl_fdx *x;
  while (off < img->fdx_len && (x = fdx_next (img, &off)) != NULL)
    {
      const struct cl_fdx_epoll *e = (const void *) (x + 1);
      if (x->kind != CL_FD_EPOLL)
        continue;
      for (size_t k = 0; k < x->len / sizeof *e; k++)
        if (e[k].tfd == x->fd || !has_fd (img, e[k].tfd))
          return cm_err_set (err, 0, "section fdx: epoll fd %d watches fd %d, "
                             "which the image does not restore", x->fd,
                             e[k].tfd);
    }
  return 0;
}
