/* The address of a unix socket bound in the view.  The supervisor binds
 * it on-behalf through /proc/self/fd/<pinned parent>/<name>
 * (vroot-net.c), and the kernel keeps that string as the socket's name:
 * getsockname, getpeername and /proc/net/unix reported
 * "/proc/self/fd/12/own.sock" where the container bound "/tmp/own.sock".
 * Each such bind is recorded here — the socket's inode, the string the
 * kernel keeps, the view path — and getsockname/getpeername are
 * serviced: done on a dup of the caller's socket (pidfd_getfd), the name
 * rewritten to the view path, copied out with the kernel's addrlen rules.
 * getsockname finds its record by the socket's inode (exact); a socket
 * accepted from it shares its name, and getpeername names the peer,
 * whose inode the caller's socket does not give: those by the kernel's
 * string, the latest bind that left it (the
 * pinned parent's fd number is reused, so two binds may have left the
 * same string: the last name is the same, the directory may not be).  A
 * record whose socket is gone is dropped at the next bind; the table is
 * bounded (VR_SOCKNAMES, oldest dropped).  accept's and recvfrom's
 * addresses are left as the kernel gives them (see docs/nsless.md). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#define VR_SOCKNAMES 256

struct vr_sockname
{
  unsigned long ino;
  char *kname;                  /* what the kernel keeps */
  char *vpath;                  /* what the container bound */
};

static void
drop (struct vr_sup *s, size_t i)
{
  free (s->names[i].kname);
  free (s->names[i].vpath);
  memmove (&s->names[i], &s->names[i + 1],
           (s->nnames - i - 1) * sizeof *s->names);
  s->nnames--;
}

void
vr_sockname_bound (struct vr_sup *s, int sock, const char *kname,
                   const char *vpath)
{
  struct stat st;
  if (fstat (sock, &st) < 0)
    return;
  for (size_t i = 0; i < s->nnames;)   /* the same inode: a stale record */
    if (s->names[i].ino == st.st_ino)
      drop (s, i);
    else
      i++;
  if (s->nnames == VR_SOCKNAMES)
    drop (s, 0);
  s->names = xrealloc (s->names, (s->nnames + 1) * sizeof *s->names);
  s->names[s->nnames++] = (struct vr_sockname) {
    .ino = st.st_ino, .kname = xstrdup (kname), .vpath = xstrdup (vpath) };
}

void
vr_sockname_free (struct vr_sup *s)
{
  while (s->nnames)
    drop (s, s->nnames - 1);
  free (s->names);
  s->names = NULL;
}

const char *
vr_sockname_view (const struct vr_sup *s, unsigned long ino, const char *kname)
{
  if (!cm_startswith (kname, "/proc/self/fd/"))
    return NULL;
  for (size_t i = s->nnames; ino != 0 && i-- > 0;)
    if (s->names[i].ino == ino)
      return strcmp (s->names[i].kname, kname) == 0 ? s->names[i].vpath
                                                    : NULL;
  /* Not the bound socket itself: one accepted from it (it shares the
   * listener's name), or the peer's name. */
  for (size_t i = s->nnames; i-- > 0;)
    if (strcmp (s->names[i].kname, kname) == 0)
      return s->names[i].vpath;
  return NULL;
}

/* |a| (|*len|) with its path replaced by |vpath|, when it fits. */
static void
rename_addr (struct sockaddr_un *a, socklen_t *len, const char *vpath)
{
  size_t n = strlen (vpath);
  if (n >= sizeof a->sun_path)
    return;
  memcpy (a->sun_path, vpath, n + 1);
  *len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n + 1);
}

int64_t
vr_do_sockname (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  bool peer = c->req->data.nr == SYS_getpeername;
  struct sockaddr_storage a;
  socklen_t len = sizeof a;
  int ulen, r;
  _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, (int) g[0]);
  if (fd < 0)
    return fd;
  if ((r = vr_read_mem (c, g[2], &ulen, sizeof ulen)) < 0)
    return r;
  if (ulen < 0)
    return -EINVAL;
  memset (&a, 0, sizeof a);
  if ((peer ? getpeername (fd, (struct sockaddr *) &a, &len)
            : getsockname (fd, (struct sockaddr *) &a, &len)) < 0)
    return -errno;
  struct sockaddr_un *u = (struct sockaddr_un *) &a;
  struct stat st;
  if (a.ss_family == AF_UNIX && len > offsetof (struct sockaddr_un, sun_path)
      && u->sun_path[0] != '\0')
    {
      const char *v = vr_sockname_view (c->s, peer || fstat (fd, &st) < 0
                                                  ? 0 : st.st_ino,
                                        u->sun_path);
      if (v)
        rename_addr (u, &len, v);
    }
  if ((r = vr_write_mem (c, g[1], &a,
                         (size_t) ulen < len ? (size_t) ulen : len)) < 0)
    return r;
  ulen = (int) len;
  r = vr_write_mem (c, g[2], &ulen, sizeof ulen);
  return r < 0 ? r : 0;
}
