/* The fds whose state lives in the kernel object rather than in a file:
 * eventfd (counter), timerfd (clock, time left, interval, expirations not
 * read), signalfd (mask), epoll (every watched fd with its events and
 * data) from /proc/PID/fdinfo; listening sockets (address, type,
 * SO_REUSEADDR/SO_REUSEPORT) asked of the process itself by syscall
 * injection (inject.c): getsockname and getsockopt on its own fd.  Any
 * other socket — connected, unbound — fails the capture by name. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

static int
read_fdinfo (struct cl_dump *d, int fd, char **out, struct cm_err **err)
{
  char path[64];
  snprintf (path, sizeof path, "%d/fdinfo/%d", d->pid, fd);
  return cm_read_file_at (cl_proc_dir (), path, 1 << 20, out, NULL, err);
}

/* The text after |key| in |s|, or NULL. */
static const char *
field (const char *s, const char *key)
{
  const char *p = strstr (s, key);
  return p ? p + strlen (key) : NULL;
}

static int
add_fdx (struct cl_dump *d, int fd, uint32_t kind, const void *p, size_t n)
{
  struct cl_fdx x = { .fd = fd, .kind = kind, .len = (uint32_t) n };
  cl_buf_add (&d->fdx, &x, sizeof x);
  if (n)
    cl_buf_add (&d->fdx, p, n);
  cl_buf_pad (&d->fdx, 8);
  return 0;
}

static int
dump_eventfd (struct cl_dump *d, int fd, const char *info, struct cm_err **err)
{
  struct cl_fdx_eventfd e = { 0 };
  const char *c = field (info, "eventfd-count:"), *s;
  if (c == NULL)
    return cm_err_set (err, 0, "fd %d: no eventfd-count in its fdinfo", fd);
  e.count = strtoull (c, NULL, 16);
  s = field (info, "eventfd-semaphore:");
  e.semaphore = s && atoi (s) ? 1 : 0;
  return add_fdx (d, fd, CL_FD_EVENTFD, &e, sizeof e);
}

static int
dump_timerfd (struct cl_dump *d, int fd, const char *info, struct cm_err **err)
{
  struct cl_fdx_timerfd t = { 0 };
  const char *c = field (info, "clockid:"), *k = field (info, "ticks:");
  const char *f = field (info, "settime flags:"), *v = field (info, "it_value:");
  const char *i = field (info, "it_interval:");
  unsigned long long vs, vn, is, in;
  if (!c || !k || !f || !v || !i || sscanf (v, " (%llu, %llu)", &vs, &vn) != 2
      || sscanf (i, " (%llu, %llu)", &is, &in) != 2)
    return cm_err_set (err, 0, "fd %d: unparsable timerfd fdinfo", fd);
  t.clockid = atoi (c);
  t.ticks = strtoull (k, NULL, 10);
  t.settime_flags = (uint32_t) strtoul (f, NULL, 8);
  t.value_ns = vs * 1000000000ull + vn;
  t.interval_ns = is * 1000000000ull + in;
  return add_fdx (d, fd, CL_FD_TIMERFD, &t, sizeof t);
}

static int
dump_signalfd (struct cl_dump *d, int fd, const char *info, struct cm_err **err)
{
  struct cl_fdx_signalfd s = { 0 };
  const char *m = field (info, "sigmask:");
  if (m == NULL)
    return cm_err_set (err, 0, "fd %d: no sigmask in its fdinfo", fd);
  s.sigmask = strtoull (m, NULL, 16);
  return add_fdx (d, fd, CL_FD_SIGNALFD, &s, sizeof s);
}

/* The watched fd |tfd| must still be the file the epoll watches (the
 * registration outlives a close while the file lives on elsewhere). */
static bool
same_file (struct cl_dump *d, int tfd, unsigned long ino, unsigned sdev)
{
  char path[64];
  struct stat st;
  snprintf (path, sizeof path, "%d/fd/%d", d->pid, tfd);
  if (fstatat (cl_proc_dir (), path, &st, 0) < 0)
    return false;
  return st.st_ino == ino && major (st.st_dev) == (sdev >> 20)
         && minor (st.st_dev) == (sdev & 0xfffff);
}

static int
dump_epoll (struct cl_dump *d, int fd, const char *info, struct cm_err **err)
{
  struct cl_buf b = { 0 };
  const char *p = info;
  int r = 0;
  while ((p = strstr (p, "tfd:")) != NULL)
    {
      struct cl_fdx_epoll e = { 0 };
      unsigned long ino;
      unsigned sdev;
      if (sscanf (p, "tfd: %d events: %x data: %" SCNx64 " pos:%*s ino:%lx "
                  "sdev:%x", &e.tfd, &e.events, &e.data, &ino, &sdev) != 5)
        r = cm_err_set (err, 0, "fd %d: unparsable epoll fdinfo", fd);
      else if (!same_file (d, e.tfd, ino, sdev))
        r = cm_err_set (err, 0, "epoll fd %d watches a file that fd %d no "
                        "longer holds, which criu-lite cannot restore", fd, e.tfd);
      else if (b.len / sizeof e >= CL_EPOLL_MAX)
        r = cm_err_set (err, 0, "epoll fd %d watches more than %u fds", fd,
                        CL_EPOLL_MAX);
      if (r < 0)
        break;
      cl_buf_add (&b, &e, sizeof e);
      p += 4;
    }
  if (r == 0)
    add_fdx (d, fd, CL_FD_EPOLL, b.p, b.len);
  free (b.p);
  return r;
}

/* getsockopt(fd, level, opt) in the process, an int. */
static int
sockopt_at (struct cl_dump *d, int fd, int level, int opt, int *val,
            struct cm_err **err)
{
  uint32_t len = sizeof (int);
  struct iovec l = { &len, sizeof len }, rem = { (void *) (d->scratch + 64), sizeof len };
  long a[6] = { fd, level, opt, (long) d->scratch, (long) d->scratch + 64, 0 };
  long ret;
  if (process_vm_writev (d->pid, &l, 1, &rem, 1, 0) != sizeof len)
    return cm_err_set (err, errno, "fd %d: write into the scratch page", fd);
  if (cl_inject (d, 0, SYS_getsockopt, a, &ret, err) < 0)
    return -1;
  if (ret < 0)
    return cm_err_set (err, (int) -ret, "fd %d: getsockopt %d", fd, opt);
  *val = 0;
  return cl_peek (d, d->scratch, val, sizeof *val, err);
}

static int
sockopt (struct cl_dump *d, int fd, int opt, int *val, struct cm_err **err)
{
  return sockopt_at (d, fd, SOL_SOCKET, opt, val, err);
}

/* A unix socket bound to an absolute path: its file's mode and owner
 * (a server chmods it for its clients), read from the process's root. */
static void
sock_file (struct cl_fdx_listen *s)
{
  struct sockaddr_un un;
  struct stat st;
  memset (&un, 0, sizeof un);
  memcpy (&un, s->addr, s->addrlen < sizeof un ? s->addrlen : sizeof un);
  un.sun_path[sizeof un.sun_path - 1] = '\0';
  if (s->family != AF_UNIX || un.sun_path[0] != '/'
      || lstat (un.sun_path, &st) < 0 || !S_ISSOCK (st.st_mode))
    return;
  s->fmode = st.st_mode & 07777;
  s->fuid = st.st_uid;
  s->fgid = st.st_gid;
}

static int
dump_listen (struct cl_dump *d, int fd, uint64_t ino, struct cm_err **err)
{
  struct cl_fdx_listen s = { 0 };
  uint32_t len = sizeof s.addr;
  struct iovec l = { &len, sizeof len }, rem = { (void *) (d->scratch + 256), sizeof len };
  long a[6] = { fd, (long) d->scratch, (long) d->scratch + 256, 0, 0, 0 }, ret;
  int v, fam, type, proto;
  if (sockopt (d, fd, SO_DOMAIN, &fam, err) < 0
      || sockopt (d, fd, SO_TYPE, &type, err) < 0
      || sockopt (d, fd, SO_PROTOCOL, &proto, err) < 0)
    return -1;
  s.family = (uint32_t) fam, s.type = (uint32_t) type, s.protocol = (uint32_t) proto;
  if (sockopt (d, fd, SO_REUSEADDR, &v, err) < 0)
    return -1;
  s.opts |= v ? CL_SOCK_REUSEADDR : 0;
  if (sockopt (d, fd, SO_REUSEPORT, &v, err) < 0)
    return -1;
  s.opts |= v ? CL_SOCK_REUSEPORT : 0;
  if (fam == AF_INET6)
    {
      if (sockopt_at (d, fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, err) < 0)
        return -1;
      s.opts |= v ? CL_SOCK_V6ONLY : 0;
    }
  if (process_vm_writev (d->pid, &l, 1, &rem, 1, 0) != sizeof len)
    return cm_err_set (err, errno, "fd %d: write into the scratch page", fd);
  if (cl_inject (d, 0, SYS_getsockname, a, &ret, err) < 0)
    return -1;
  if (ret < 0)
    return cm_err_set (err, (int) -ret, "fd %d: getsockname", fd);
  if (cl_peek (d, d->scratch + 256, &len, sizeof len, err) < 0
      || len > sizeof s.addr || cl_peek (d, d->scratch, s.addr, len, err) < 0)
    return cm_err_set (err, 0, "fd %d: read its address", fd);
  s.addrlen = len;
  sock_file (&s);
  s.backlog = cl_listen_backlog (d->pid, fam, ino, &s.queued);
  if (s.queued > CL_LISTEN_QUEUE_MAX)
    s.queued = CL_LISTEN_QUEUE_MAX;
  if (s.backlog > 65535)
    s.backlog = 0;
  return add_fdx (d, fd, CL_FD_LISTEN, &s, sizeof s);
}

static const char *
sock_kind (struct cl_dump *d, int fd, bool *listening, struct cm_err **err)
{
  int v = 0, fam = 0, type = 0;
  *listening = false;
  if (sockopt (d, fd, SO_ACCEPTCONN, &v, err) < 0
      || sockopt (d, fd, SO_DOMAIN, &fam, err) < 0
      || sockopt (d, fd, SO_TYPE, &type, err) < 0)
    return NULL;
  if (v && (fam == AF_INET || fam == AF_INET6 || fam == AF_UNIX))
    {
      *listening = true;
      return "listening socket";
    }
  if (v)
    return "listening socket of an unsupported family";
  return "socket that is not listening (connected or unbound)";
}

static int
dump_kind (struct cl_dump *d, int fd, const char *link, const struct stat *st,
           struct cl_fd *f, const char **why, struct cm_err **err)
{
  _cleanup_free_ char *info = NULL;
  static const struct { const char *link; uint32_t kind; } anon[] = {
    { "anon_inode:[eventfd]", CL_FD_EVENTFD },
    { "anon_inode:[timerfd]", CL_FD_TIMERFD },
    { "anon_inode:[signalfd]", CL_FD_SIGNALFD },
    { "anon_inode:[eventpoll]", CL_FD_EPOLL },
  };
  if (S_ISSOCK (st->st_mode))
    {
      bool ok;
      const char *what = sock_kind (d, fd, &ok, err);
      if (what == NULL)
        return -1;
      if (!ok)
        {
          *why = what;
          return 1;
        }
      f->kind = CL_FD_LISTEN;
      return dump_listen (d, fd, (uint64_t) st->st_ino, err);
    }
  for (size_t i = 0; i < ARRAY_SIZE (anon); i++)
    if (strcmp (link, anon[i].link) == 0)
      {
        if (read_fdinfo (d, fd, &info, err) < 0)
          return -1;
        f->kind = anon[i].kind;
        switch (anon[i].kind)
          {
          case CL_FD_EVENTFD:
            return dump_eventfd (d, fd, info, err);
          case CL_FD_TIMERFD:
            return dump_timerfd (d, fd, info, err);
          case CL_FD_SIGNALFD:
            return dump_signalfd (d, fd, info, err);
          default:
            return dump_epoll (d, fd, info, err);
          }
      }
  *why = NULL;
  return 1;
}

/* The object id of the fdx-kind fd of |o| (which may be |d|) that is
 * the same open file as |fd| of |d| (kcmp KCMP_FILE), or 0. */
static uint64_t
shared_in (const struct cl_dump *d, int fd, const struct cl_dump *o,
           uint32_t *kind)
{
  const struct cl_fd *f = (const void *) o->fds.p;
  for (size_t k = 0; k < o->fds.len / sizeof *f; k++)
    if (f[k].kind >= CL_FD_EVENTFD && f[k].kind <= CL_FD_LISTEN
        && syscall (SYS_kcmp, d->pid, o->pid, 0 /* KCMP_FILE */, fd, f[k].fd) == 0)
      {
        *kind = f[k].kind;
        return f[k].pos;
      }
  return 0;
}

/* An object held by an fd recorded before (an earlier fd of this
 * process, dup'ed; or an earlier process's, inherited across fork): the
 * same id, no record of its own; restore makes it once. */
static bool
shared (const struct cl_dump *d, int fd, struct cl_fd *f)
{
  uint64_t id = shared_in (d, fd, d, &f->kind);
  for (size_t i = 0; id == 0 && i < d->nprev; i++)
    id = shared_in (d, fd, &d->prev[i], &f->kind);
  f->pos = id;
  return id != 0;
}

int
cl_dump_fdx (struct cl_dump *d, int fd, const char *link, const struct stat *st,
             struct cl_fd *f, const char **why, struct cm_err **err)
{
  if ((S_ISSOCK (st->st_mode) || cm_startswith (link, "anon_inode:"))
      && shared (d, fd, f))
    return 0;
  /* its owner: the tree-order index of the process and the fd */
  f->pos = ((uint64_t) (d->nprev + 1) << 32) | (uint32_t) fd;
  return dump_kind (d, fd, link, st, f, why, err);
}
