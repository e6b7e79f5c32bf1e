/* The calling process of a trapped system call, as the handlers see it:
 * its memory (read, then the notification checked still valid), its fds,
 * its paths resolved in the view from its cwd or a dirfd, the fds
 * injected into it, its umask.  Below the dispatcher (vroot-sup.c) and
 * every handler (vroot-open.c, vroot-stat.c, ...), so none calls back. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"
#include "vroot-thread.h"

/* A field of /proc/<tid>/status ("Tgid:", "PPid:", "Umask:"); -1 if none. */
long
vr_status_field (pid_t tid, const char *key, int base)
{
  char path[64], buf[2048];
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  char *p;
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  p = strstr (buf, key);
  return p ? strtol (p + strlen (key), NULL, base) : -1;
}

int
vr_valid (struct vr_call *c)
{
  uint64_t id = c->req->id;
  if (ioctl (c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
    return -ENOENT;
  return 0;
}

/* The caller's memory and fds are reached with the supervisor's own
 * credentials (ptrace-class checks: a caller that changed its uid is not
 * dumpable), never with the caller's (vroot-cred.c); for
 * process_vm_readv/writev that is CAP_SYS_PTRACE (vr_cred_mem_out) where
 * the kernel's check needs it.  It usually does not: the real ids are the
 * supervisor's, and the caller's permitted set is a subset of the
 * supervisor's (rt_notify_ops.keep_permitted), so the first try is made
 * without it and only an EPERM (a caller of another uid, or not
 * dumpable) raises it — two capsets less per access. */
static ssize_t
vm_rw (struct vr_call *c, const struct iovec *l, const struct iovec *r,
       bool write)
{
  ssize_t n = write ? process_vm_writev (c->tid, l, 1, r, 1, 0)
                    : process_vm_readv (c->tid, l, 1, r, 1, 0);
  if (n >= 0 || errno != EPERM)
    return n;
  bool was = vr_cred_mem_out ();
  n = write ? process_vm_writev (c->tid, l, 1, r, 1, 0)
            : process_vm_readv (c->tid, l, 1, r, 1, 0);
  int e = errno;
  vr_cred_mem_back (was);
  errno = e;
  return n;
}

int
vr_read_mem (struct vr_call *c, uint64_t addr, void *buf, size_t len)
{
  struct iovec l = { buf, len }, r = { (void *) (uintptr_t) addr, len };
  ssize_t n = vm_rw (c, &l, &r, false);
  if (n < 0 || (size_t) n != len)
    return -EFAULT;
  return vr_valid (c);
}

int
vr_write_mem (struct vr_call *c, uint64_t addr, const void *buf, size_t len)
{
  struct iovec l = { (void *) buf, len }, r = { (void *) (uintptr_t) addr, len };
  ssize_t n = vm_rw (c, &l, &r, true);
  return n < 0 || (size_t) n != len ? -EFAULT : 0;
}

int
vr_poke_mem (struct vr_call *c, uint64_t addr, const void *buf, size_t len)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/mem", (int) c->tid);
  bool was = vr_cred_out ();
  _cleanup_fd_ int fd = open (path, O_WRONLY | O_CLOEXEC);
  vr_cred_back (was);
  if (fd < 0)
    return -errno;
  if (pwrite (fd, buf, len, (off_t) addr) != (ssize_t) len)
    return -EFAULT;
  return 0;
}

int
vr_read_path (struct vr_call *c, uint64_t addr, char out[PATH_MAX])
{
  size_t got = 0;
  if (addr == 0)
    return -EFAULT;
  while (got < PATH_MAX)
    {
      size_t page = 4096 - ((addr + got) & 4095), want = PATH_MAX - got;
      struct iovec l, r;
      ssize_t n;
      if (want > page)
        want = page;
      l = (struct iovec) { out + got, want };
      r = (struct iovec) { (void *) (uintptr_t) (addr + got), want };
      n = vm_rw (c, &l, &r, false);
      if (n <= 0)
        return -EFAULT;
      if (memchr (out + got, '\0', (size_t) n))
        return vr_valid (c);
      got += (size_t) n;
    }
  return -ENAMETOOLONG;
}

/* Another process's fd (/proc/<pid>/fd/N) only where the caller could
 * follow that link itself: the kernel's check (ptrace read, fs ids) is
 * made by a readlink in the caller's credentials. */
int
vr_caller_fd (struct vr_call *c, pid_t pid, int fd)
{
  char link[64], buf[8];
  int r, e;
  if (pid != c->task->tgid)
    {
      snprintf (link, sizeof link, "/proc/%d/fd/%d", (int) pid, fd);
      if (readlink (link, buf, sizeof buf) < 0)
        return errno == ENOENT ? -EBADF : -EACCES;
    }
  bool was = vr_cred_out ();
  _cleanup_fd_ int pfd = (int) syscall (SYS_pidfd_open, pid, 0);
  r = pfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pfd, fd, 0);
  e = errno;
  vr_cred_back (was);
  if (pfd < 0)
    return -ESRCH;
  if (r < 0)
    return e == EBADF ? -EBADF : -e;
  return r;
}

int
vr_fd_host_path (int fd, char *host)
{
  char link[64];
  ssize_t n;
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, host, PATH_MAX - 1);
  if (n < 0)
    return -errno;
  host[n] = '\0';
  return 0;
}

int64_t
vr_answer_later (void *(*fn) (void *), void *arg)
{
  pthread_t t;
  pthread_attr_t at;
  int r;
  pthread_attr_init (&at);
  pthread_attr_setdetachstate (&at, PTHREAD_CREATE_DETACHED);
  r = pthread_create (&t, &at, fn, arg);
  pthread_attr_destroy (&at);
  return r != 0 ? -r : VR_ANSWERED;
}

int
vr_caller_dir (struct vr_call *c, int dirfd, char *vpath)
{
  char host[PATH_MAX];
  struct stat st;
  int r;
  _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, dirfd);
  if (fd < 0)
    return fd;
  if (fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode))
    return -ENOTDIR;
  if ((r = vr_fd_host_path (fd, host)) < 0)
    return r;
  if (vr_host_to_virtual (c->s->v, host, vpath) < 0)
    return -EACCES;
  return 0;
}

int
vr_resolve_at (struct vr_call *c, int dirfd, const char *path, int flags,
               struct vr_path *out)
{
  char base[PATH_MAX];
  const char *b = c->task->cwd;
  int r;
  if (path[0] != '/' && dirfd != AT_FDCWD)
    {
      if ((r = vr_caller_dir (c, dirfd, base)) < 0)
        return r;
      b = base;
    }
  return vr_resolve (c->s->v, &c->ctx, b, path, flags, out);
}

int
vr_at (struct vr_call *c, const struct vr_path *p, char name[NAME_MAX + 1],
       int *empty)
{
  *empty = 0;
  if (p->ent == NULL)
    return -EACCES;
  if (strcmp (p->rel, ".") == 0)
    {
      int fd = fcntl (p->ent->fd, F_DUPFD_CLOEXEC, 0);
      name[0] = '\0';
      *empty = AT_EMPTY_PATH;
      return fd < 0 ? -errno : fd;
    }
  return vr_open_parent (c->s->v, p, name);
}

int64_t
vr_inject (struct vr_call *c, int fd, bool cloexec)
{
  struct seccomp_notif_addfd a = {
    .id = c->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t) fd,
    .newfd_flags = cloexec ? O_CLOEXEC : 0,
  };
  if (ioctl (c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0)
    return errno == ENOENT ? VR_ANSWERED : -(int64_t) errno;
  return VR_ANSWERED;
}

mode_t
vr_umask (struct vr_call *c)
{
  long m = vr_thread_umask (c->tid);
  if (m < 0)
    m = vr_status_field (c->tid, "Umask:", 8);
  return m < 0 ? 022 : (mode_t) m;
}

