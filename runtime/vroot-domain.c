/* The namespace-less supervisor's own Landlock domain in a create
 * (docs/nsless.md "The supervisor's domain").  Landlock lets a process
 * read another's memory and take its fds (ptrace-class access) only from
 * an ancestor domain, so the supervisor and the init are both forked by a
 * thread of the runtime that entered vr_landlock_self's domain: the
 * supervisor stays in it, the init nests its own domain below it.  The
 * runtime's other threads are not confined (Landlock and no_new_privs are
 * per thread): the state directory, hooks, --pid-file, `run`'s delete go
 * on as in the namespaced mode.  The thread lives until the create is
 * over: the init's PR_SET_PDEATHSIG follows the thread that forked it. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-domain.h"

static struct
{
  const struct vroot *v;
  int exec_dir;
  const struct vr_net *net;
  const struct vr_ll_extra *extra;
  size_t n;
  int (*fn) (void *, struct cm_err **);
  void *ud;
  struct cm_err *err;
  int rc;
  int done[2], release[2];
  pthread_t thread;
  bool running;
} d = { .done = { -1, -1 }, .release = { -1, -1 } };

static void *
thread_main (void *unused)
{
  char b = 0;
  int rfd = d.release[0];       /* vr_domain_release forgets it */
  (void) unused;
  d.rc = vr_landlock_self_with (d.v, d.exec_dir, d.net, d.extra, d.n, &d.err)
                 < 0 ? -1 : d.fn (d.ud, &d.err);
  if (write (d.done[1], &b, 1) != 1)
    d.rc = -1;
  /* Until vr_domain_release: a byte, not EOF (the init holds a copy of
   * the write end until its exec).  The read end is this thread's to
   * close: the runtime does not wait for it to leave. */
  while (read (rfd, &b, 1) < 0 && errno == EINTR)
    ;
  close (rfd);
  return NULL;
}

static void
close_pipes (void)
{
  for (int i = 0; i < 2; i++)
    {
      if (d.done[i] >= 0)
        close (d.done[i]);
      if (d.release[i] >= 0)
        close (d.release[i]);
      d.done[i] = d.release[i] = -1;
    }
}

int
vr_domain_fork (const struct vroot *v, int exec_dir, const struct vr_net *net,
                const struct vr_ll_extra *extra, size_t n,
                int (*fn) (void *, struct cm_err **), void *ud, struct cm_err **err)
{
  char b;
  ssize_t r;
  int e;
  d.v = v, d.exec_dir = exec_dir, d.net = net, d.extra = extra, d.n = n;
  d.fn = fn, d.ud = ud, d.err = NULL, d.rc = -1;
  if (pipe2 (d.done, O_CLOEXEC) < 0 || pipe2 (d.release, O_CLOEXEC) < 0)
    {
      e = errno;
      close_pipes ();
      return cm_err_set (err, e, "namespace-less mode: pipe");
    }
  e = pthread_create (&d.thread, NULL, thread_main, NULL);
  if (e != 0)
    {
      close_pipes ();
      return cm_err_set (err, e, "namespace-less mode: the supervisor's "
                         "domain thread");
    }
  d.running = true;
  while ((r = read (d.done[0], &b, 1)) < 0 && errno == EINTR)
    ;
  if (d.rc < 0 || r != 1)
    {
      if (d.err)
        {
          *err = d.err;
          d.err = NULL;
          return -1;
        }
      return cm_err_set (err, EIO, "namespace-less mode: the supervisor's "
                         "domain thread failed");
    }
  return 0;
}

/* Not joined: the thread leaves on its own once it has the byte (a
 * join waited for it to be scheduled, on the create's path), and closes
 * its read end itself — closed here, its number could be reused before
 * the thread's read. */
void
vr_domain_release (void)
{
  char b = 0;
  if (d.running)
    {
      pthread_detach (d.thread);
      /* Should the byte not go, EOF wakes it once the init execs. */
      ssize_t r = write (d.release[1], &b, 1);
      (void) r;
      d.release[0] = -1;
    }
  d.running = false;
  close_pipes ();
}
