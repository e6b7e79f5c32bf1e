/* The runtime <-> container-process sync channel (see internal.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "internal.h"
#define SYNC_MAX_PAYLOAD (1u << 20)

int
rt_sync_send (int fd, int kind, int errno_, const char *msg)
{
  struct sync_msg m = { .kind = kind, .errno_ = errno_ };
  if (msg)
    snprintf (m.msg, sizeof m.msg, "%s", msg);
  return send (fd, &m, sizeof m, MSG_NOSIGNAL) == (ssize_t) sizeof m ? 0 : -1;
}

int
rt_sync_recv (int fd, struct sync_msg *m)
{
  ssize_t r;
  do
    r = recv (fd, m, sizeof *m, 0);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return 0;
  if (r != (ssize_t) sizeof *m)
    return -1;
  m->msg[sizeof m->msg - 1] = '\0';
  return 1;
}

int
rt_sync_send_go (int fd, pid_t pid)
{
  struct sync_msg m = { .kind = SYNC_GO, .pid = pid };
  return send (fd, &m, sizeof m, MSG_NOSIGNAL) == (ssize_t) sizeof m ? 0 : -1;
}

/* A variable-length string as one SOCK_SEQPACKET message ("" for NULL). */
int
rt_sync_send_str (int fd, const char *s)
{
  return send (fd, s ? s : "", s ? strlen (s) + 1 : 1, MSG_NOSIGNAL) < 0 ? -1
                                                                         : 0;
}

char *
rt_sync_recv_str (int fd)
{
  char *buf = xmalloc (SYNC_MAX_PAYLOAD);
  ssize_t r;
  do
    r = recv (fd, buf, SYNC_MAX_PAYLOAD - 1, 0);
  while (r < 0 && errno == EINTR);
  if (r <= 0)
    {
      free (buf);
      return NULL;
    }
  buf[r] = '\0';
  return buf;
}

