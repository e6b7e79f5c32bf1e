/* cm_send_fd / cm_recv_fd: an fd and its payload arrive together,
 * close-on-exec; no fd, end of file, an empty payload and a message
 * carrying two fds each give their answer, and the second fd is never
 * installed in the receiver. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "tests/unit/tap.h"

static int
count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  int n = 0;
  while (d && (de = readdir (d)) != NULL)
    n += de->d_name[0] != '.';
  if (d)
    closedir (d);
  return n;
}

/* Two fds in one SCM_RIGHTS message, as a hostile sender could send. */
static int
send_two (int sock, int a, int b)
{
  union
  {
    char buf[CMSG_SPACE (2 * sizeof (int))];
    struct cmsghdr align;
  } u;
  int fds[2] = { a, b };
  char byte = 'x';
  struct iovec iov = { &byte, 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof fds);
  memcpy (CMSG_DATA (cm), fds, sizeof fds);
  return (int) sendmsg (sock, &mh, 0);
}

int
main (void)
{
  int sv[2], p[2], fd, before;
  char name[] = "/dev/ptmx", buf[64], got = 0;
  struct iovec iov[2] = { { name, 5 }, { name + 5, 4 } };
  size_t len = sizeof buf;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0
      || pipe2 (p, O_CLOEXEC) < 0)
    return 77;
  ok (cm_send_fd (sv[0], p[1], iov, 2) == 0, "sent a pipe's write end");
  fd = cm_recv_fd (sv[1], buf, &len, 0);
  ok (fd >= 0 && len == 9 && memcmp (buf, "/dev/ptmx", 9) == 0,
      "received it with its payload (%zu bytes)", len);
  ok (fd >= 0 && (fcntl (fd, F_GETFD) & FD_CLOEXEC), "close-on-exec");
  ok (fd >= 0 && write (fd, "!", 1) == 1 && read (p[0], &got, 1) == 1
      && got == '!', "it is the same pipe");
  close (fd);

  ok (cm_send_fd (sv[0], p[1], iov, 0) < 0 && errno == EINVAL,
      "an empty payload is refused");
  ok (cm_recv_fd (sv[1], NULL, NULL, MSG_DONTWAIT) < 0 && errno == EAGAIN,
      "nothing queued: EAGAIN with MSG_DONTWAIT");
  ok (write (sv[0], "y", 1) == 1 && cm_recv_fd (sv[1], NULL, NULL, 0) < 0
      && errno == EBADMSG, "a message without an fd: EBADMSG");

  before = count_fds ();
  ok (send_two (sv[0], p[0], p[1]) == 1, "a message with two fds sent");
  fd = cm_recv_fd (sv[1], NULL, NULL, 0);
  ok (fd >= 0 && count_fds () == before + 1,
      "only the first is installed (%d fds, was %d)", count_fds (), before);
  if (fd >= 0)
    close (fd);

  close (sv[0]);
  ok (cm_recv_fd (sv[1], NULL, NULL, 0) < 0 && errno == ENODATA,
      "end of file: ENODATA");
  close (sv[1]);
  close (p[0]);
  close (p[1]);
  return tap_done ();
}
