/* sendto, sendmsg, sendmmsg in the view (docs/nsless.md "Datagrams").
 * A unix datagram socket sends to whatever named address each call
 * gives: left to the kernel, that path is resolved against the host root,
 * and Landlock has no right for sending to a socket, so a container could
 * reach any host datagram socket (/dev/log, a daemon's) by its host path.
 * And the address of sendmsg sits in memory a sibling thread can rewrite
 * after any check, as can the fd number (dup2) — so no call that carries
 * an address is let go on: each is done here, on a dup of the caller's
 * socket (pidfd_getfd), from copies read once, a named unix address
 * resolved in the view to the socket inode and sent to through
 * /proc/self/fd/<pin>.  sendto with no address (a register: send(2), a
 * connected socket) goes on in the kernel.  A send may block: it runs on
 * a thread of its own (in the caller's credentials, which it inherits)
 * and answers when done.
 *
 * What the receiver sees: the caller's uid and gid in SCM_CREDENTIALS
 * (the send is made on a thread that took the caller's ids: vroot-ids.c),
 * and the supervisor's pid — naming another needs CAP_SYS_ADMIN; an
 * explicit SCM_CREDENTIALS naming the caller's own pid is sent with the
 * supervisor's (the kernel would refuse it: EPERM), its uid and gid
 * checked by the kernel against the caller's ids as for the caller.
 * SCM_RIGHTS carries the caller's fds, taken with pidfd_getfd. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define SEND_MAX (1 << 20)      /* bytes of one message copied: 1 MiB */
#define CTL_MAX 4096            /* control bytes of one message */
#define MMSG_MAX 64             /* messages of one sendmmsg */

struct msg
{
  struct sockaddr_storage a;
  socklen_t alen;
  int pin;                      /* the socket inode a unix path names, or -1 */
  char *data;
  size_t len;
  char *ctl;
  size_t ctllen;
  int *fds;                     /* dups of SCM_RIGHTS fds; owned */
  size_t nfds;
  ssize_t sent;                 /* bytes sent */
};

struct send_job
{
  int listener;
  uint64_t id;
  int sock;                     /* dup of the caller's socket; owned */
  int flags;
  bool mmsg;
  struct vr_call call;          /* for writing msg_len back (mmsg) */
  struct seccomp_notif req;
  uint64_t vec;                 /* the caller's mmsghdr array (mmsg) */
  struct vr_ids ids;            /* the caller's, for the sending thread */
  size_t sent;                  /* messages sent */
  int err;                      /* errno of the one that failed */
  struct msg m[MMSG_MAX];
  size_t n;
};

static void
msg_free (struct msg *m)
{
  if (m->pin >= 0)
    close (m->pin);
  for (size_t i = 0; i < m->nfds; i++)
    close (m->fds[i]);
  free (m->fds), free (m->data), free (m->ctl);
}

static void
job_free (struct send_job *j)
{
  for (size_t i = 0; i < MMSG_MAX; i++)
    msg_free (&j->m[i]);
  if (j->sock >= 0)
    close (j->sock);
  free (j);
}

/* The address, copied once: a named unix path is resolved in the view and
 * replaced by /proc/self/fd/<pin> of the socket inode it names. */
static int
read_addr (struct vr_call *c, uint64_t addr, socklen_t len, struct msg *m)
{
  struct sockaddr_un *u = (struct sockaddr_un *) &m->a;
  char path[sizeof u->sun_path + 1];
  struct vr_path p;
  int r;
  m->alen = len;
  if (addr == 0 || len == 0)
    {
      m->alen = 0;
      return 0;
    }
  if (len > sizeof m->a || len < sizeof (sa_family_t))
    return -EINVAL;
  if ((r = vr_read_mem (c, addr, &m->a, len)) < 0
      || (r = vr_inet_check (c->s, u->sun_family, 0)) < 0)
    return r;
  if (u->sun_family != AF_UNIX || len <= offsetof (struct sockaddr_un, sun_path)
      || u->sun_path[0] == '\0')
    return 0;                   /* not a path: as given */
  memcpy (path, u->sun_path, len - offsetof (struct sockaddr_un, sun_path));
  path[len - offsetof (struct sockaddr_un, sun_path)] = '\0';
  if ((r = vr_resolve_at (c, AT_FDCWD, path, 0, &p)) < 0)
    return r;
  if (p.ent == NULL || p.type != S_IFSOCK)
    return -ECONNREFUSED;
  if ((m->pin = vr_open (&p, O_PATH, 0)) < 0)
    return m->pin;
  r = snprintf (u->sun_path, sizeof u->sun_path, "/proc/self/fd/%d", m->pin);
  m->alen = (socklen_t) (offsetof (struct sockaddr_un, sun_path)
                         + (size_t) r + 1);
  return 0;
}

/* SCM_RIGHTS: the caller's fd numbers become dups of its fds here.
 * SCM_CREDENTIALS naming the caller's own pid: the sender's, which is
 * the supervisor (the kernel refuses any other pid without CAP_SYS_ADMIN;
 * the uid and gid it checks against the sending thread's, the caller's). */
static int
rights (struct vr_call *c, struct msg *m)
{
  struct msghdr h = { .msg_control = m->ctl, .msg_controllen = m->ctllen };
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&h); cm; cm = CMSG_NXTHDR (&h, cm))
    {
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS
          && cm->cmsg_len >= CMSG_LEN (sizeof (struct ucred)))
        {
          struct ucred u;
          memcpy (&u, CMSG_DATA (cm), sizeof u);
          if (u.pid == c->task->tgid)
            u.pid = getpid ();
          memcpy (CMSG_DATA (cm), &u, sizeof u);
        }
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        continue;
      int *fd = (int *) CMSG_DATA (cm);
      size_t n = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < n; i++)
        {
          int d = vr_caller_fd (c, c->task->tgid, fd[i]);
          if (d < 0)
            return d;
          m->fds = xrealloc (m->fds, (m->nfds + 1) * sizeof *m->fds);
          m->fds[m->nfds++] = d;
          fd[i] = d;
        }
    }
  return 0;
}

/* One msghdr of the caller at |addr|: address, data, control. */
static int
read_msg (struct vr_call *c, uint64_t addr, struct msg *m)
{
  struct msghdr h;
  struct iovec iov[64];
  int r;
  if ((r = vr_read_mem (c, addr, &h, sizeof h)) < 0)
    return r;
  if (h.msg_iovlen > ARRAY_SIZE (iov) || h.msg_controllen > CTL_MAX)
    return -EMSGSIZE;
  if (h.msg_iovlen
      && (r = vr_read_mem (c, (uintptr_t) h.msg_iov, iov,
                           h.msg_iovlen * sizeof *iov)) < 0)
    return r;
  for (size_t i = 0; i < h.msg_iovlen; i++)
    {
      if (iov[i].iov_len > SEND_MAX - m->len)
        return -EMSGSIZE;
      m->data = xrealloc (m->data, m->len + iov[i].iov_len + 1);
      if (iov[i].iov_len
          && (r = vr_read_mem (c, (uintptr_t) iov[i].iov_base, m->data + m->len,
                               iov[i].iov_len)) < 0)
        return r;
      m->len += iov[i].iov_len;
    }
  if (h.msg_controllen)
    {
      m->ctl = xmalloc (h.msg_controllen);
      m->ctllen = h.msg_controllen;
      if ((r = vr_read_mem (c, (uintptr_t) h.msg_control, m->ctl,
                            m->ctllen)) < 0
          || (r = rights (c, m)) < 0)
        return r;
    }
  return read_addr (c, (uintptr_t) h.msg_name, h.msg_namelen, m);
}

static ssize_t
send_one (struct send_job *j, struct msg *m)
{
  struct iovec io = { m->data, m->len };
  struct msghdr h = { .msg_name = m->alen ? &m->a : NULL,
                      .msg_namelen = m->alen, .msg_iov = &io,
                      .msg_iovlen = 1, .msg_control = m->ctl,
                      .msg_controllen = m->ctllen };
  return sendmsg (j->sock, &h, j->flags | MSG_NOSIGNAL);
}

/* The messages, in the caller's ids (vroot-ids.c): a thread that takes
 * them runs this and ends. */
static void *
send_all (void *arg)
{
  struct send_job *j = arg;
  if ((j->err = -vr_ids_become (&j->ids)) != 0)
    return NULL;
  for (; j->sent < j->n; j->sent++)
    if ((j->m[j->sent].sent = send_one (j, &j->m[j->sent])) < 0)
      {
        j->err = errno;
        break;
      }
  return NULL;
}

/* Sends (on a thread of the caller's ids unless this one has them), then
 * writes each msg_len back (mmsg) and answers, in the supervisor's own. */
static void *
send_thread (void *arg)
{
  struct send_job *j = arg;
  struct seccomp_notif_resp resp = { .id = j->id };
  pthread_t t;
  size_t i;
  if (j->ids.same)
    send_all (j);
  else if ((j->err = pthread_create (&t, NULL, send_all, j)) == 0)
    pthread_join (t, NULL);
  for (i = 0; j->mmsg && i < j->sent; i++)
    {
      unsigned len = (unsigned) j->m[i].sent;
      uint64_t at = j->vec + i * sizeof (struct mmsghdr)
                    + offsetof (struct mmsghdr, msg_len);
      j->call.req = &j->req;
      if (vr_write_mem (&j->call, at, &len, sizeof len) < 0)
        break;
    }
  if (j->mmsg && i > 0)
    resp.val = (int64_t) i;     /* how many were sent, as the kernel says */
  else if (j->sent < j->n)
    resp.error = -(j->err ? j->err : EFAULT);
  else
    resp.val = j->mmsg ? 0 : j->m[0].sent;
  ioctl (j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  job_free (j);
  return NULL;
}

static int64_t
start (struct vr_call *c, struct send_job *j)
{
  j->listener = c->listener;
  j->id = c->req->id;
  j->req = *c->req;
  j->call = *c;
  return vr_answer_later (send_thread, j);
}

static int
read_job (struct vr_call *c, struct send_job *j)
{
  const __u64 *g = c->req->data.args;
  int r;
  switch (c->req->data.nr)
    {
    case SYS_sendto:
      j->n = 1;
      j->flags = (int) g[3];
      if (g[2] > SEND_MAX)
        return -EMSGSIZE;
      j->m[0].len = (size_t) g[2];
      j->m[0].data = xmalloc (j->m[0].len + 1);
      if (j->m[0].len && (r = vr_read_mem (c, g[1], j->m[0].data,
                                           j->m[0].len)) < 0)
        return r;
      return read_addr (c, g[4], (socklen_t) g[5], &j->m[0]);
    case SYS_sendmsg:
      j->n = 1;
      j->flags = (int) g[2];
      return read_msg (c, g[1], &j->m[0]);
    default:                    /* sendmmsg */
      j->mmsg = true;
      j->vec = g[1];
      j->flags = (int) g[3];
      if (g[2] == 0)
        return 0;
      for (size_t i = 0; i < g[2] && i < MMSG_MAX; i++, j->n++)
        {
          if ((r = read_msg (c, g[1] + i * sizeof (struct mmsghdr),
                             &j->m[i])) < 0)
            return r;
        }
      return 0;
    }
}

int64_t
vr_do_send (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  int64_t r;
  /* send(2) and sendto with no address: the destination is the socket's
   * peer, fixed by a connect the view drew; the registers cannot change. */
  if (c->req->data.nr == SYS_sendto && g[4] == 0)
    return VR_CONTINUE;
  if (c->req->data.nr == SYS_sendmmsg && g[2] == 0)
    return 0;
  struct send_job *j = xcalloc (1, sizeof *j);
  for (size_t i = 0; i < MMSG_MAX; i++)
    j->m[i].pin = -1;
  j->sock = vr_caller_fd (c, c->task->tgid, (int) g[0]);
  if (j->sock < 0)
    r = j->sock == -EBADF ? -EBADF : j->sock;
  else if ((r = read_job (c, j)) == 0
           && (r = vr_inet_check (c->s, AF_UNSPEC, j->flags)) == 0
           && (r = vr_ids_of (c->tid, &j->ids)) == 0)
    {
      if ((r = start (c, j)) == VR_ANSWERED)
        return r;               /* the thread owns j */
    }
  job_free (j);
  return r;
}
