/* Opens of a FIFO that wait for the other end (docs/nsless.md "FIFOs").
 * The kernel's open of a FIFO for reading (writing) without O_NONBLOCK
 * waits until a writer (a reader) opens it.  Done on the supervisor's one
 * main loop, that wait stopped every other call of the container, the
 * peer's open among them: `echo hi > fifo & cat fifo` hung the container.
 *
 * So such an open is done on a thread of its own, which answers with
 * ADDFD when the kernel's open returns.  It is the caller's open,
 * blocking, of the object the view resolved: |src| (an O_PATH fd from the
 * walk, or the fast path's O_NONBLOCK reader) reopened through
 * /proc/self/fd, in the caller's credentials (the thread is created by the
 * main loop while it holds them: a new thread has its creator's).
 *
 * The fast path learns that the object is a FIFO only after its open
 * (O_NONBLOCK added: vroot-open.c), and a reader's O_NONBLOCK open counts
 * as a reader at once: a writer waiting for one returns.  That reader
 * (|held|) is kept until the thread's own open counts, or a writer that
 * came, wrote and left meanwhile would see no reader at its write
 * (EPIPE) and its data would never be read.  A writer that came and left
 * between the two opens makes |held| readable (data, or POLLHUP: a
 * writer seen since its open and none now); |held| is then the answer
 * itself, as the kernel's reader would have returned then.
 *
 * A caller that dies while it waits (WAIT_KILLABLE_RECV: only a fatal
 * signal ends its wait) must not leave a thread blocked forever, nor a
 * reader or writer counted that the FIFO's peer would meet.  One watcher
 * thread waits (epoll, no timeout) on each waiting caller's pidfd and
 * |held|; when one is ready it marks that wait ended and signals its
 * thread (VR_FIFO_SIG), whose handler leaves the open by siglongjmp: from
 * the blocked open (EINTR, nothing opened), or from before it, where the
 * thread checks the mark after saying it waits, so no signal is lost
 * between a check and the call.  The one window left: a signal taken in
 * the few instructions between the open's return and the thread saying
 * it no longer waits loses that fd (a reader or writer the supervisor
 * keeps).  pthread_cancel would do the same with unwinding, which needs
 * libgcc_s loaded, and the confined supervisor cannot load it.  Bounded:
 * VR_FIFO_MAX waits at once, beyond which an open that would wait fails
 * with ENFILE. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define VR_FIFO_MAX 64
#define VR_FIFO_SIG (SIGRTMIN + 3)

struct job
{
  int listener;
  uint64_t id;
  int src, held, pidfd;         /* owned; held -1 when none */
  int flags;                    /* the caller's open flags */
  size_t slot;
  bool ready;                   /* |held| readable: it is the answer */
  volatile sig_atomic_t ended;  /* by the watcher, under fq.lock */
};

static __thread sigjmp_buf jb;
static __thread volatile sig_atomic_t waiting;

static void
on_end (int sig)
{
  (void) sig;
  if (waiting)
    {
      waiting = 0;
      siglongjmp (jb, 1);
    }
}

static struct
{
  pthread_mutex_t lock;
  int ep;                       /* -1 until the watcher runs */
  struct job *job[VR_FIFO_MAX];
  pthread_t th[VR_FIFO_MAX];
  uint64_t gen[VR_FIFO_MAX];
} fq = { .lock = PTHREAD_MUTEX_INITIALIZER, .ep = -1 };

bool
vr_fifo_may_wait (int oflags)
{
  int acc = oflags & O_ACCMODE;
  return !(oflags & (O_NONBLOCK | O_PATH | O_DIRECTORY))
         && (acc == O_RDONLY || acc == O_WRONLY)
         && (oflags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
}

static void
answer (struct job *j, int fd)
{
  struct seccomp_notif_addfd a = {
    .id = j->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t) fd,
    .newfd_flags = (j->flags & O_CLOEXEC) ? O_CLOEXEC : 0,
  };
  struct seccomp_notif_resp resp = { .id = j->id, .error = fd };
  if (fd >= 0)
    ioctl (j->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
  else
    ioctl (j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* |held| as the caller's fd: O_NONBLOCK was the supervisor's, not its. */
static void
answer_held (struct job *j)
{
  if (fcntl (j->held, F_SETFL, j->flags & ~O_NONBLOCK) < 0)
    answer (j, -errno);
  else
    answer (j, j->held);
}

static uint64_t
key (size_t slot)
{
  return fq.gen[slot] << 8 | slot;
}

static void *
watch (void *arg)
{
  struct epoll_event ev[16];
  sigset_t all;
  (void) arg;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, NULL);
  for (;;)
    {
      int n = epoll_wait (fq.ep, ev, ARRAY_SIZE (ev), -1);
      pthread_mutex_lock (&fq.lock);
      for (int i = 0; i < n; i++)
        {
          size_t s = ev[i].data.u64 & 0xff;
          if (s >= VR_FIFO_MAX || !fq.job[s] || key (s) != ev[i].data.u64)
            continue;           /* that wait ended already */
          fq.job[s]->ended = 1;
          pthread_kill (fq.th[s], VR_FIFO_SIG);
        }
      pthread_mutex_unlock (&fq.lock);
    }
  return NULL;
}

/* Under fq.lock: the watcher, started once. */
static int
watcher (void)
{
  struct sigaction sa = { .sa_handler = on_end };   /* no SA_RESTART */
  pthread_t t;
  pthread_attr_t at;
  int r;
  if (fq.ep >= 0)
    return 0;
  sigemptyset (&sa.sa_mask);
  if (sigaction (VR_FIFO_SIG, &sa, NULL) < 0
      || (fq.ep = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    return -errno;
  pthread_attr_init (&at);
  pthread_attr_setdetachstate (&at, PTHREAD_CREATE_DETACHED);
  r = pthread_create (&t, &at, watch, NULL);
  pthread_attr_destroy (&at);
  if (r != 0)
    {
      close (fq.ep);
      fq.ep = -1;
      return -r;
    }
  return 0;
}

static void
watch_fd (struct job *j, int fd)
{
  struct epoll_event ev = { .events = EPOLLIN | EPOLLHUP | EPOLLONESHOT,
                            .data.u64 = key (j->slot) };
  epoll_ctl (fq.ep, EPOLL_CTL_ADD, fd, &ev);
}

static void
job_free (struct job *j)
{
  close (j->src);
  close (j->pidfd);
  if (j->held >= 0)
    close (j->held);
  free (j);
}

/* The end of a wait: its slot freed, and, when ended by the watcher for
 * |held| (the caller alive), |held| is the answer. */
static void
job_end (struct job *j)
{
  pthread_mutex_lock (&fq.lock);
  epoll_ctl (fq.ep, EPOLL_CTL_DEL, j->pidfd, NULL);
  if (j->held >= 0)
    epoll_ctl (fq.ep, EPOLL_CTL_DEL, j->held, NULL);
  fq.job[j->slot] = NULL;
  fq.gen[j->slot]++;
  pthread_mutex_unlock (&fq.lock);
  struct pollfd p = { .fd = j->pidfd, .events = POLLIN };
  if (j->ready && poll (&p, 1, 0) == 0)
    answer_held (j);
  job_free (j);
}

static bool
readable (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  return fd >= 0 && poll (&p, 1, 0) > 0;
}

/* The caller's open, left (true) when the watcher ends the wait. */
static bool
open_or_end (struct job *j, const char *link, int *fd)
{
  sigset_t sig;
  sigemptyset (&sig);
  sigaddset (&sig, VR_FIFO_SIG);
  if (sigsetjmp (jb, 1) != 0)
    return true;                /* the mask as saved: the signal blocked */
  pthread_sigmask (SIG_UNBLOCK, &sig, NULL);
  waiting = 1;
  __atomic_thread_fence (__ATOMIC_SEQ_CST);
  if (j->ended)
    siglongjmp (jb, 1);
  *fd = open (link, (j->flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW))
                    | O_CLOEXEC);
  waiting = 0;
  if (*fd < 0)
    *fd = -errno;
  pthread_sigmask (SIG_BLOCK, &sig, NULL);
  return false;
}

static void *
wait_open (void *arg)
{
  struct job *j = arg;
  char link[64];
  sigset_t set;
  int fd = -EINTR;
  /* Only the watcher's signal, and only in the open (open_or_end): the
   * supervisor's own, SIGCHLD among them, go to its main thread, and
   * none interrupts the answer's ioctl. */
  sigfillset (&set);
  pthread_sigmask (SIG_SETMASK, &set, NULL);
  pthread_mutex_lock (&fq.lock);
  fq.th[j->slot] = pthread_self ();
  watch_fd (j, j->pidfd);
  if (j->held >= 0)
    watch_fd (j, j->held);
  pthread_mutex_unlock (&fq.lock);
  /* A writer already came and left: the reader's open had returned. */
  j->ready = readable (j->held);
  if (!j->ready)
    {
      snprintf (link, sizeof link, "/proc/self/fd/%d", j->src);
      if (!open_or_end (j, link, &fd))
        {
          answer (j, fd);
          if (fd >= 0)
            close (fd);
        }
      else
        j->ready = j->held >= 0;        /* ended: |held| ready, or no caller */
    }
  job_end (j);
  return NULL;
}

/* A pidfd that is readable once the caller's thread is gone. */
static int
caller_pidfd (struct vr_call *c)
{
  int fd = (int) syscall (SYS_pidfd_open, c->tid, PIDFD_THREAD);
  if (fd < 0 && errno == EINVAL)
    fd = (int) syscall (SYS_pidfd_open, c->task->tgid, 0);
  return fd < 0 ? -errno : fd;
}

int64_t
vr_fifo_wait (struct vr_call *c, int src, int flags, int held)
{
  struct job *j = xcalloc (1, sizeof *j);
  size_t s;
  int64_t r;
  *j = (struct job) { .listener = c->listener, .id = c->req->id, .src = src,
                      .held = held, .flags = flags };
  if ((j->pidfd = caller_pidfd (c)) < 0)
    {
      r = j->pidfd;
      j->pidfd = -1;
      close (src);
      if (held >= 0)
        close (held);
      free (j);
      return r;
    }
  pthread_mutex_lock (&fq.lock);
  for (s = 0; s < VR_FIFO_MAX && fq.job[s]; s++)
    ;
  r = s == VR_FIFO_MAX ? -ENFILE : watcher ();
  if (r == 0)
    {
      j->slot = s;
      fq.job[s] = j;
      r = vr_answer_later (wait_open, j);
      if (r != VR_ANSWERED)
        fq.job[s] = NULL;
    }
  pthread_mutex_unlock (&fq.lock);
  if (r != VR_ANSWERED)
    job_free (j);
  return r;
}
