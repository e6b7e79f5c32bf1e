/* connect and bind in the view.  A named unix socket is a path: left to
 * the kernel it would be resolved against the host root, and Landlock has
 * no right for connecting to one, so a container could reach a host
 * socket by its host path.  The address is copied once, the path resolved
 * in the view, and the call done here on a dup of the caller's socket
 * (pidfd_getfd) through /proc/self/fd/<pinned>; every other family is done
 * on-behalf from the same copy, so a sibling thread that swaps the
 * address after the check cannot turn it into a host path.  The
 * supervisor's own domain carries the container's TCP and scope rules
 * (vr_landlock_self), so on-behalf calls are no wider.  A connect may
 * block: it runs on a thread of its own and answers when it is done; that
 * thread takes the caller's ids (vroot-ids.c), which the listener's
 * SO_PEERCRED reports (its pid stays the supervisor's). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

struct job
{
  int listener;
  uint64_t id;
  int sock;                     /* dup of the caller's socket; owned */
  int pin;                      /* what /proc/self/fd names; owned or -1 */
  struct sockaddr_storage a;
  socklen_t len;
  struct vr_ids ids;            /* the caller's, for the connecting thread */
  char *vpath;                  /* bind: the view path; owned or NULL */
};

static void
answer (struct job *j, int rc)
{
  struct seccomp_notif_resp resp = { .id = j->id };
  if (rc < 0)
    resp.error = -errno;
  ioctl (j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void *
connect_job (void *arg)
{
  struct job *j = arg;
  int r = vr_ids_become (&j->ids);
  if (r < 0)
    errno = -r;
  answer (j, r < 0 ? r : connect (j->sock, (struct sockaddr *) &j->a, j->len));
  close (j->sock);
  if (j->pin >= 0)
    close (j->pin);
  free (j);
  return NULL;
}

static int64_t
start_connect (struct vr_call *c, struct job *j)
{
  j->listener = c->listener;
  j->id = c->req->id;
  return vr_answer_later (connect_job, j);
}

static int
proc_addr (struct job *j, const char *fmt, int fd, const char *name)
{
  struct sockaddr_un *u = (struct sockaddr_un *) &j->a;
  int n = snprintf (u->sun_path, sizeof u->sun_path, fmt, fd, name);
  if (n < 0 || (size_t) n >= sizeof u->sun_path)
    return -ENAMETOOLONG;
  j->len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + (size_t) n + 1);
  return 0;
}

/* A named socket: connect to the inode the view names, bind a new one in
 * the directory the view names. */
static int
unix_path (struct vr_call *c, struct job *j, bool bind_)
{
  struct sockaddr_un *u = (struct sockaddr_un *) &j->a;
  size_t max = j->len - offsetof (struct sockaddr_un, sun_path);
  char path[sizeof u->sun_path + 1], name[NAME_MAX + 1];
  struct vr_path p;
  int r;
  memcpy (path, u->sun_path, max);
  path[max] = '\0';
  r = vr_resolve_at (c, AT_FDCWD, path, bind_ ? VR_CREATE | VR_NOFOLLOW : 0, &p);
  if (r < 0)
    return r;
  if (p.ent == NULL)
    return -ECONNREFUSED;
  if (!bind_)
    {
      if (p.type != S_IFSOCK)
        return -ECONNREFUSED;
      if ((j->pin = vr_open (&p, O_PATH, 0)) < 0)
        return j->pin;
      return proc_addr (j, "/proc/self/fd/%d%s", j->pin, "");
    }
  if (!p.missing)
    return -EADDRINUSE;
  if (vr_readonly (&p))
    return -EROFS;
  if ((j->pin = vr_open_parent (c->s->v, &p, name)) < 0)
    return j->pin;
  j->vpath = xstrdup (p.vpath);
  return proc_addr (j, "/proc/self/fd/%d/%s", j->pin, name);
}

int64_t
vr_do_sock (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  bool bind_ = c->req->data.nr == SYS_bind;
  struct job *j = xcalloc (1, sizeof *j);
  struct sockaddr_un *u = (struct sockaddr_un *) &j->a;
  int64_t r;

  j->sock = j->pin = -1;
  j->len = (socklen_t) g[2];
  if (g[2] > sizeof j->a || j->len < sizeof (sa_family_t))
    r = -EINVAL;
  else if ((r = vr_read_mem (c, g[1], &j->a, j->len)) == 0
           && (r = j->sock = vr_caller_fd (c, c->task->tgid, (int) g[0])) >= 0)
    {
      r = vr_inet_check (c->s, u->sun_family, 0);
      if (r == 0 && u->sun_family == AF_UNIX
          && j->len > offsetof (struct sockaddr_un, sun_path)
          && u->sun_path[0] != '\0')
        r = unix_path (c, j, bind_);
      if (r == 0 && !bind_ && (r = vr_ids_of (c->tid, &j->ids)) == 0
          && (r = start_connect (c, j)) == VR_ANSWERED)
        return r;               /* the thread owns j */
      if (r == 0)
        r = bind (j->sock, (struct sockaddr *) &j->a, j->len) < 0 ? -errno : 0;
      if (r == 0 && j->vpath)
        vr_sockname_bound (c->s, j->sock, u->sun_path, j->vpath);
    }
  if (j->sock >= 0)
    close (j->sock);
  if (j->pin >= 0)
    close (j->pin);
  free (j->vpath);
  free (j);
  return r;
}
