/* The runtime <-> container-process sync channel (see internal.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "internal.h"
#define SYNC_MAX_PAYLOAD (64u << 20)
#define SYNC_CHUNK (32u << 10)

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
rt_sync_child_error (int fd, struct cm_err **err)
{
  struct sync_msg m;
  ssize_t r = recv (fd, &m, sizeof m, MSG_DONTWAIT);
  /* A child that exits with our message unread makes the next recv fail
   * with ECONNRESET once, ahead of what it queued for us. */
  if (r < 0 && errno == ECONNRESET)
    r = recv (fd, &m, sizeof m, MSG_DONTWAIT);
  if (r != (ssize_t) sizeof m || m.kind != SYNC_ERROR)
    return 0;
  m.msg[sizeof m.msg - 1] = '\0';
  return cm_err_set (err, 0, "%s", m.msg);
}

int
rt_sync_fail (int fd, const char *what, struct cm_err **err)
{
  int e = errno;
  if (rt_sync_child_error (fd, err) < 0)
    return -1;
  return cm_err_set (err, e, "%s", what);
}

int
rt_sync_send_go (int fd, pid_t pid)
{
  struct sync_msg m = { .kind = SYNC_GO, .pid = pid };
  return send (fd, &m, sizeof m, MSG_NOSIGNAL) == (ssize_t) sizeof m ? 0 : -1;
}

/* A variable-length string: its length (with the NUL), then the bytes in
 * messages of at most SYNC_CHUNK.  One message per string stopped at the
 * socket's buffer size (EMSGSIZE): a hook state JSON carrying a 40k-path
 * annotation is ~400 KB. */
int
rt_sync_send_str (int fd, const char *s)
{
  uint64_t len = s ? strlen (s) + 1 : 1;
  if (len > SYNC_MAX_PAYLOAD)
    {
      errno = EMSGSIZE;
      return -1;
    }
  if (send (fd, &len, sizeof len, MSG_NOSIGNAL) != (ssize_t) sizeof len)
    return -1;
  for (uint64_t off = 0; off < len; off += SYNC_CHUNK)
    {
      size_t n = len - off < SYNC_CHUNK ? (size_t) (len - off) : SYNC_CHUNK;
      if (send (fd, s ? s + off : "", n, MSG_NOSIGNAL) != (ssize_t) n)
        return -1;
    }
  return 0;
}

static ssize_t
recv_msg (int fd, void *buf, size_t len)
{
  ssize_t r;
  do
    r = recv (fd, buf, len, 0);
  while (r < 0 && errno == EINTR);
  return r;
}

char *
rt_sync_recv_str (int fd)
{
  uint64_t len;
  if (recv_msg (fd, &len, sizeof len) != (ssize_t) sizeof len || len == 0
      || len > SYNC_MAX_PAYLOAD)
    return NULL;
  _cleanup_free_ char *buf = xmalloc (len);
  for (uint64_t off = 0; off < len;)
    {
      size_t want = len - off < SYNC_CHUNK ? (size_t) (len - off) : SYNC_CHUNK;
      ssize_t r = recv_msg (fd, buf + off, want);
      if (r != (ssize_t) want)
        return NULL;
      off += want;
    }
  buf[len - 1] = '\0';
  return cm_steal_ptr (&buf);
}
