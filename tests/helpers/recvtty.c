/* Test helper: a --console-socket receiver.  Listens on PATH, takes one
 * connection, receives the pty master over SCM_RIGHTS, optionally writes
 * INPUT to it, prints "winsize ROWSxCOLS" and then copies everything the
 * container writes to stdout until the pty closes.
 *   recvtty PATH [INPUT] */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

int main (int argc, char **argv);

int
main (int argc, char **argv)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  char buf[4096], cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                       .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm;
  struct winsize ws;
  int ls, c, fd = -1;
  ssize_t n;

  if (argc < 2 || strlen (argv[1]) >= sizeof sa.sun_path)
    return 2;
  strcpy (sa.sun_path, argv[1]);
  ls = socket (AF_UNIX, SOCK_STREAM, 0);
  if (ls < 0 || bind (ls, (struct sockaddr *) &sa, sizeof sa) < 0
      || listen (ls, 1) < 0)
    return perror ("listen"), 2;
  /* tell the test we are ready */
  printf ("ready\n");
  fflush (stdout);
  c = accept (ls, NULL, NULL);
  if (c < 0 || recvmsg (c, &mh, 0) < 0)
    return perror ("recvmsg"), 2;
  cm = CMSG_FIRSTHDR (&mh);
  if (cm == NULL || cm->cmsg_type != SCM_RIGHTS)
    return fprintf (stderr, "no fd received\n"), 2;
  memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  if (ioctl (fd, TIOCGWINSZ, &ws) == 0)
    printf ("winsize %ux%u\n", ws.ws_row, ws.ws_col);
  fflush (stdout);
  if (argc > 2)
    {
      if (write (fd, argv[2], strlen (argv[2])) < 0)
        return 2;
    }
  while ((n = read (fd, buf, sizeof buf)) > 0)
    if (write (1, buf, (size_t) n) < 0)
      return 2;
  return 0;
}
