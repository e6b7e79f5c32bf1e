/* The backlog a listening socket was given (listen(2)'s argument, as the
 * kernel capped it): not readable through the socket itself, but
 * sock_diag reports it (inet_diag's idiag_wqueue, unix_diag's
 * UNIX_DIAG_RQLEN wqueue, for a listener: sk_max_ack_backlog), and the
 * connections waiting in its accept queue (idiag_rqueue, the rqueue:
 * sk_ack_backlog), which restore cannot carry and lists, by the
 * socket's inode, in the socket's network namespace.  A netlink socket
 * of that namespace comes from a short-lived child that enters it
 * (setns) and passes the socket back, so the capture itself never
 * changes namespace.  0 when not knowable (no sock_diag): restore then
 * listens with SOMAXCONN. */
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/util.h"
#include "criu-lite/internal.h"

/* A NETLINK_SOCK_DIAG socket in the network namespace of |pid|, or -1. */
static int
diag_socket (pid_t pid)
{
  char path[64];
  int sp[2], st, fd = -1;
  _cleanup_fd_ int ns = -1;
  pid_t kid;
  snprintf (path, sizeof path, "%d/ns/net", pid);
  ns = openat (cl_proc_dir (), path, O_RDONLY | O_CLOEXEC);
  if (ns < 0 || socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return -1;
  kid = fork ();
  if (kid == 0)
    {
      int s;
      close (sp[0]);
      if (setns (ns, CLONE_NEWNET) < 0)
        _exit (1);
      s = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
      _exit (s >= 0 && cm_send_fd_str (sp[1], s, "s") == 0 ? 0 : 1);
    }
  close (sp[1]);
  if (kid > 0)
    {
      fd = cm_recv_fd (sp[0], NULL, NULL, 0);
      while (waitpid (kid, &st, 0) < 0 && errno == EINTR)
        ;
    }
  close (sp[0]);
  return fd;
}

/* The payload of the answer about inode |ino| to the dump request
 * |req|, copied into |out|; 0 when found. */
static int
ask (int nl, const void *req, size_t len, uint32_t ino, bool inet,
     char *out, size_t cap)
{
  char buf[32768];
  ssize_t n;
  if (send (nl, req, len, 0) != (ssize_t) len)
    return -1;
  while ((n = recv (nl, buf, sizeof buf, 0)) > 0)
    for (struct nlmsghdr *h = (void *) buf; NLMSG_OK (h, (size_t) n);
         h = NLMSG_NEXT (h, n))
      {
        const struct inet_diag_msg *im = NLMSG_DATA (h);
        const struct unix_diag_msg *um = NLMSG_DATA (h);
        size_t got = h->nlmsg_len - NLMSG_LENGTH (0);
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
          return -1;
        if ((inet ? im->idiag_inode : um->udiag_ino) != ino)
          continue;
        memcpy (out, NLMSG_DATA (h), got < cap ? got : cap);
        return 0;
      }
  return -1;
}

static uint32_t
inet_backlog (int nl, int family, uint32_t ino, uint32_t *queued)
{
  struct
  {
    struct nlmsghdr h;
    struct inet_diag_req_v2 r;
  } req;
  struct inet_diag_msg m;
  memset (&req, 0, sizeof req);
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.r.sdiag_family = (uint8_t) family;
  req.r.sdiag_protocol = IPPROTO_TCP;
  req.r.idiag_states = 1u << TCP_LISTEN;
  if (ask (nl, &req, sizeof req, ino, true, (char *) &m, sizeof m) < 0)
    return 0;
  *queued = m.idiag_rqueue;
  return m.idiag_wqueue;
}

static uint32_t
unix_backlog (int nl, uint32_t ino, uint32_t *queued)
{
  struct
  {
    struct nlmsghdr h;
    struct unix_diag_req r;
  } req;
  char msg[4096];
  size_t off = NLMSG_ALIGN (sizeof (struct unix_diag_msg));
  memset (&req, 0, sizeof req);
  memset (msg, 0, sizeof msg);
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.r.sdiag_family = AF_UNIX;
  req.r.udiag_states = 1u << TCP_LISTEN;
  req.r.udiag_show = UDIAG_SHOW_RQLEN;
  if (ask (nl, &req, sizeof req, ino, false, msg, sizeof msg) < 0)
    return 0;
  /* the attributes after the message: UNIX_DIAG_RQLEN */
  while (off + sizeof (struct nlattr) <= sizeof msg)
    {
      struct nlattr a;
      memcpy (&a, msg + off, sizeof a);
      if (a.nla_len < sizeof a || off + a.nla_len > sizeof msg)
        break;
      if (a.nla_type == UNIX_DIAG_RQLEN
          && a.nla_len >= sizeof a + sizeof (struct unix_diag_rqlen))
        {
          struct unix_diag_rqlen q;
          memcpy (&q, msg + off + sizeof a, sizeof q);
          *queued = q.udiag_rqueue;
          return q.udiag_wqueue;
        }
      off += NLA_ALIGN (a.nla_len);
    }
  return 0;
}

uint32_t
cl_listen_backlog (pid_t pid, int family, uint64_t ino, uint32_t *queued)
{
  _cleanup_fd_ int nl = diag_socket (pid);
  *queued = 0;
  if (nl < 0)
    return 0;
  return family == AF_UNIX ? unix_backlog (nl, (uint32_t) ino, queued)
                           : inet_backlog (nl, family, (uint32_t) ino, queued);
}
