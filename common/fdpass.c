#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fdpass.h"

union fd_cmsg
{
  char buf[CMSG_SPACE (sizeof (int))];
  struct cmsghdr align;
};

int
cm_send_fd (int sock, int fd, const struct iovec *iov, size_t iovcnt)
{
  union fd_cmsg u;
  struct msghdr mh = { .msg_iov = (struct iovec *) iov, .msg_iovlen = iovcnt,
                       .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm;
  size_t total = 0;

  for (size_t i = 0; i < iovcnt; i++)
    total += iov[i].iov_len;
  if (total == 0)
    {
      errno = EINVAL;
      return -1;
    }
  memset (&u, 0, sizeof u);
  cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  return sendmsg (sock, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

int
cm_send_fd_str (int sock, int fd, const char *text)
{
  struct iovec iov = { .iov_base = (void *) text, .iov_len = strlen (text) };
  return cm_send_fd (sock, fd, &iov, 1);
}

int
cm_recv_fd (int sock, void *buf, size_t *len, int flags)
{
  char scratch[1];
  union fd_cmsg u;
  struct iovec iov = { .iov_base = buf ? buf : scratch,
                       .iov_len = buf && len ? *len : sizeof scratch };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm;
  ssize_t n;
  int fd = -1;

  /* CMSG_SPACE rounds up: the buffer holds two fds on 64-bit, and the
   * kernel installs as many as fit (the rest it discards, MSG_CTRUNC).
   * Every one past the first is closed here. */
  do
    n = recvmsg (sock, &mh, flags | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  if (len != NULL)
    *len = (size_t) n;
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    {
      size_t nfds;
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        continue;
      nfds = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < nfds; i++)
        {
          int f;
          memcpy (&f, CMSG_DATA (cm) + i * sizeof f, sizeof f);
          if (fd < 0)
            fd = f;
          else
            close (f);
        }
    }
  if (fd < 0)
    errno = n == 0 ? ENODATA : EBADMSG;
  return fd;
}
