/* The exec server's socket: bound by the runtime at create, and the
 * message transport both sides use (runtime/vroot-xs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"
#include "vroot-xs.h"

int
vr_xs_listen (const char *dir, int min_fd, struct cm_err **err)
{
  _cleanup_fd_ int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int s = -1;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  if (dfd < 0)
    return cm_err_set (err, errno, "namespace-less exec server: open `%s`",
                       dir);
  snprintf (a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/" VR_XS_SOCK,
            dfd);
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0)
    return cm_err_set (err, errno, "namespace-less exec server: socket");
  /* 0600 from the start: only the container's owner may ask it. */
  mode_t old = umask (0177);
  int r = bind (s, (struct sockaddr *) &a, sizeof a);
  umask (old);
  if (r < 0 || listen (s, 16) < 0)
    return cm_err_set (err, errno, "namespace-less exec server: bind "
                       "`%s/" VR_XS_SOCK "`", dir);
  int fd = fcntl (s, F_DUPFD_CLOEXEC, min_fd);
  if (fd < 0)
    return cm_err_set (err, errno, "namespace-less exec server: dup");
  return fd;
}

int
vr_xs_send (int sock, const void *buf, size_t len, const int *fds,
            size_t nfds)
{
  union
  {
    char b[CMSG_SPACE (sizeof (int) * VR_XS_MAXFDS)];
    struct cmsghdr align;
  } u;
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (nfds > VR_XS_MAXFDS)
    return errno = EINVAL, -1;
  if (nfds)
    {
      memset (&u, 0, sizeof u);
      m.msg_control = u.b;
      m.msg_controllen = CMSG_SPACE (sizeof (int) * nfds);
      struct cmsghdr *c = CMSG_FIRSTHDR (&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * nfds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * nfds);
    }
  ssize_t r;
  do
    r = sendmsg (sock, &m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r == (ssize_t) len ? 0 : -1;
}

ssize_t
vr_xs_recv (int sock, void *buf, size_t len, int *fds, size_t *nfds)
{
  union
  {
    char b[CMSG_SPACE (sizeof (int) * VR_XS_MAXFDS)];
    struct cmsghdr align;
  } u;
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                      .msg_controllen = sizeof u.b };
  ssize_t r;
  size_t n = 0;
  do
    r = recvmsg (sock, &m, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  for (struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR (&m) : NULL; c;
       c = CMSG_NXTHDR (&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        int got[VR_XS_MAXFDS];
        memcpy (got, CMSG_DATA (c), k * sizeof (int));
        for (size_t i = 0; i < k; i++)
          {
            if (fds && n < *nfds)
              fds[n++] = got[i];
            else
              close (got[i]);
          }
      }
  if (nfds)
    *nfds = n;
  if (r >= 0 && (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
    {
      for (size_t i = 0; i < n; i++)
        close (fds[i]);
      if (nfds)
        *nfds = 0;
      return errno = EMSGSIZE, -1;
    }
  return r;
}

bool
vr_xs_is_server (pid_t pid)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  /* field 2, the name, may hold anything: count from its closing paren
   * (field 3) to field 38, exit_signal */
  char *p = strrchr (buf, ')');
  for (int field = 2; p && field < 38; field++)
    p = strchr (p + 1, ' ');
  return p && p[1] == '0' && (p[2] == ' ' || p[2] == '\n');
}
