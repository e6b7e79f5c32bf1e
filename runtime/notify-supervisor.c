/* The notify supervisor process (notify.h; docs/architecture.md "Notify
 * supervisor").  Forked by the runtime before the init, so it is the
 * init's sibling, never its parent: conmon or the shim stays the parent
 * that reaps the init.
 *
 * Its death must kill the container: trapped system calls would then fail
 * with ENOSYS (closed, not an escape), but the container would go on
 * running unsupervised.  A watcher process, forked by the supervisor once
 * it knows the init, waits on a pipe whose only write end is the
 * supervisor's: the kernel closes it however the supervisor dies, SIGKILL
 * included.  On hang-up without the supervisor's "done" byte, the watcher
 * kills the container (its cgroup when it has one, and the init through a
 * pidfd).  The supervisor watches the watcher the same way and kills the
 * container itself if the watcher dies first.  Killing both at the same
 * instant (one kill(2) of a group holding both; the watcher leaves the
 * supervisor's process group for that reason) defeats it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/fdpass.h"
#include "common/util.h"
#include "internal.h"
#include "notify.h"

struct target
{
  int pidfd;                    /* the init */
  char cgroup[4096];            /* "" when the container has no cgroup */
};

static void
logf_ (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void
logf_ (const char *fmt, ...)
{
  char buf[600];
  va_list ap;
  int n = snprintf (buf, sizeof buf, "sandlock-oci: notify supervisor %d: ",
                    (int) getpid ());
  va_start (ap, fmt);
  vsnprintf (buf + n, sizeof buf - (size_t) n - 1, fmt, ap);
  va_end (ap);
  strcat (buf, "\n");
  if (write (2, buf, strlen (buf)) < 0)
    return;
}

static void
kill_container (const struct target *t)
{
  if (*t->cgroup)
    {
      struct rt_cgroup *cg = NULL;
      struct cm_err *e = NULL;
      /* cgroup.kill of the v2 directory first: the init was cloned into
       * it and every process of the container is born there.  It is all
       * a namespace-less supervisor's domain grants of a hybrid host (not
       * the v1 hierarchies), and all it needs. */
      int r = rt_cgroup_open (t->cgroup, &cg, &e);
      if (r == 0 && (r = rt_cgroup_kill_v2 (cg, &e)) == 0)
        r = rt_cgroup_kill (cg, SIGKILL, &e);
      if (r < 0)
        logf_ ("kill cgroup %s: %s", t->cgroup, e->msg);
      cm_err_free (&e);
      rt_cgroup_free (cg);
    }
  /* In its own pid namespace the init's death takes every process along. */
  if (syscall (SYS_pidfd_send_signal, t->pidfd, SIGKILL, NULL, 0) < 0
      && errno != ESRCH)
    logf_ ("kill the init: %s", strerror (errno));
}

/* Only the socket, the log and the ops' keep_fds stay; stdin/stdout
 * become /dev/null so that a caller reading the runtime's output to its
 * end is not held up by a process that outlives the runtime. */
static void
hygiene (struct rt_notify_sup *s)
{
  size_t n = s->ops->keep_fds_len;
  _cleanup_free_ int *keep = xcalloc (n + 1, sizeof *keep);
  sigset_t none;
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2 (s->log_fd, 2) < 0 || dup2 (null, 0) < 0
      || dup2 (null, 1) < 0)
    _exit (1);
  keep[0] = s->sock;
  if (n)
    memcpy (keep + 1, s->ops->keep_fds, n * sizeof *keep);
  rt_close_fds_except (3, keep, n + 1);
  /* `run`'s forwarding handlers are the runtime's, not ours. */
  for (int sig = 1; sig < NSIG; sig++)
    signal (sig, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_IGN);
  /* Its own session: a signal to the runtime's process group or terminal
   * (`run`'s Ctrl-C) is the container's business, not the supervisor's. */
  setsid ();
  prctl (PR_SET_DUMPABLE, 0);
}

/* What stays: CAP_SYS_PTRACE to read a caller's memory (/proc/PID/mem of
 * a process of another uid), CAP_KILL and CAP_DAC_OVERRIDE to kill the
 * container (its init, its cgroup.kill); with |setid| (ops->switch_creds),
 * CAP_SETUID and CAP_SETGID permitted but not effective, for a handler
 * that acts in its caller's fs credentials (runtime/vroot-cred.c), and
 * |extra| permitted (ops->keep_permitted: the container's own).
 * Everything else goes, from the bounding set too, and no_new_privs holds
 * it there.  A runtime without capabilities has nothing to drop. */
static void
drop_privileges (bool setid, uint64_t extra)
{
  static const cap_value_t keep[] = { CAP_SYS_PTRACE, CAP_KILL,
                                      CAP_DAC_OVERRIDE, CAP_SETUID,
                                      CAP_SETGID };
  size_t nkeep = setid ? 5 : 3;
  cap_t c = cap_get_proc ();
  cap_flag_value_t have;
  for (cap_value_t i = 0; prctl (PR_CAPBSET_READ, i) >= 0; i++)
    {
      bool k = setid && i < 64 && (extra >> i & 1);
      for (size_t j = 0; j < nkeep; j++)
        k = k || i == keep[j];
      if (!k)
        prctl (PR_CAPBSET_DROP, i);
    }
  prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  cap_t n = cap_init ();
  for (size_t i = 0; c && i < nkeep; i++)
    if (cap_get_flag (c, keep[i], CAP_PERMITTED, &have) == 0 && have)
      {
        cap_set_flag (n, CAP_PERMITTED, 1, &keep[i], CAP_SET);
        if (i < 3)
          cap_set_flag (n, CAP_EFFECTIVE, 1, &keep[i], CAP_SET);
      }
  for (cap_value_t i = 0; setid && c && i < 64; i++)
    if ((extra >> i & 1) && cap_get_flag (c, i, CAP_PERMITTED, &have) == 0
        && have)
      cap_set_flag (n, CAP_PERMITTED, 1, &i, CAP_SET);
  if (cap_set_proc (n) < 0)
    logf_ ("drop capabilities: %s", strerror (errno));
  cap_free (n);
  cap_free (c);
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* One fd and its text, or 0 at EOF, or -1. */
static int
recv_fd (int sock, char *text, size_t max, int *fd)
{
  size_t len = max - 1;
  *fd = cm_recv_fd (sock, text, &len, 0);
  if (*fd < 0)
    return errno == ENODATA ? 0 : -1;
  text[len] = '\0';
  return 1;
}

/* The init's listener: it writes "listener:N" and waits (write and read:
 * trapped calls would wait for a supervisor with no listener yet); the
 * fd is taken with pidfd_getfd, then the init is told to go on.  An init
 * whose payload's execve is trapped does not wait (notify.c hand_over):
 * it may have closed its end already, so a failed "k" is not an error —
 * an init that died leaves a listener without users, and the loop ends.
 * 1, 0 at EOF (the init died: a failed create), -1. */
static int
take_listener (int sock, int pidfd, int *lfd)
{
  char text[32];
  ssize_t r;
  int n;
  while ((r = recv (sock, text, sizeof text - 1, 0)) < 0 && errno == EINTR)
    ;
  if (r <= 0)
    return r == 0 ? 0 : -1;
  text[r] = '\0';
  if (sscanf (text, "listener:%d", &n) != 1)
    return -1;
  *lfd = (int) syscall (SYS_pidfd_getfd, pidfd, n, 0);
  /* An init that did not wait (its payload's execve is trapped) and
   * failed its start first — the config's seccomp refused the execve, a
   * hook failed — has exited (ESRCH) or is exiting (EBADF: its fds are
   * gone): the same as its hang-up before start. */
  if (*lfd < 0 && (errno == ESRCH || errno == EBADF))
    return 0;
  if (*lfd < 0)
    {
      logf_ ("take the listener from the init: %s", strerror (errno));
      return -1;
    }
  if (send (sock, "k", 1, MSG_NOSIGNAL) != 1 && errno != EPIPE)
    {
      close (*lfd);
      *lfd = -1;
      return -1;
    }
  return 1;
}

/* Waits for the next message on |sock| unless the watcher dies first
 * (POLLHUP on |watch|).  1: readable, 0: the watcher is gone. */
static int
wait_sock (int sock, int watch)
{
  struct pollfd pf[2] = { { .fd = sock, .events = POLLIN },
                          { .fd = watch, .events = 0 } };
  int n = watch >= 0 ? 2 : 1;
  while (poll (pf, (nfds_t) n, -1) < 0)
    if (errno != EINTR)
      return 0;
  return !(n == 2 && pf[1].revents);
}

/* The watcher: blocks until the supervisor writes "done" or dies. */
static void __attribute__ ((noreturn))
watcher (const struct target *t, int done_fd)
{
  char b;
  ssize_t r;
  setpgid (0, 0);
  do
    r = read (done_fd, &b, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1)
    {
      logf_ ("the supervisor died: killing the container");
      kill_container (t);
    }
  _exit (0);
}

/* Forks the watcher; |done_w| gets the supervisor's write end of the
 * done pipe, |watch_r| the read end whose writer is the watcher. */
static pid_t
spawn_watcher (const struct target *t, int sock, int *done_w, int *watch_r)
{
  int done[2], watch[2];
  if (pipe2 (done, O_CLOEXEC) < 0)
    return -1;
  if (pipe2 (watch, O_CLOEXEC) < 0)
    return close (done[0]), close (done[1]), -1;
  pid_t w = fork ();
  if (w == 0)
    {
      close (sock);
      close (done[1]);
      close (watch[0]);
      watcher (t, done[0]);
    }
  close (done[0]);
  close (watch[1]);
  if (w < 0)
    return close (done[1]), close (watch[0]), -1;
  *done_w = done[1];
  *watch_r = watch[0];
  return w;
}

/* Answers |req| (received).  -1: the container must be killed. */
static int
answer (const struct rt_notify_ops *ops, int lfd,
        const struct seccomp_notif *req)
{
  struct seccomp_notif_resp resp;
  memset (&resp, 0, sizeof resp);
  resp.id = req->id;
  int r = ops->handle (ops->ud, lfd, req, &resp);
  if (r < 0)
    {
      logf_ ("handler failed on system call %d of pid %u", req->data.nr,
             req->pid);
      return -1;
    }
  if (r == 0 && ioctl (lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0
      && errno != ENOENT)
    {
      logf_ ("answer a notification: %s", strerror (errno));
      return -1;
    }
  return 0;
}

/* One notification.  ENOENT: its caller died meanwhile, not an error. */
static int
serve_one (const struct rt_notify_ops *ops, int lfd)
{
  struct seccomp_notif req;
  memset (&req, 0, sizeof req);
  if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    {
      if (errno == ENOENT || errno == EINTR)
        return 0;
      logf_ ("receive a notification: %s", strerror (errno));
      return -1;
    }
  return answer (ops, lfd, &req);
}

/* Until the listener hangs up (every process of the container is gone):
 * 0; or -1 when the container must be killed.  A kernel without
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: a blocked RECV would not see the
 * hang-up (it waits on a semaphore), so the loop polls first. */
static int
serve_poll (const struct rt_notify_ops *ops, int lfd, int watch)
{
  struct pollfd pf[2] = { { .fd = lfd, .events = POLLIN },
                          { .fd = watch, .events = 0 } };
  for (;;)
    {
      if (poll (pf, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          logf_ ("poll: %s", strerror (errno));
          return -1;
        }
      if (pf[1].revents)
        {
          logf_ ("the watcher died: killing the container");
          return -1;
        }
      if (pf[0].revents & POLLIN)
        {
          if (serve_one (ops, lfd) < 0)
            return -1;
        }
      else if (pf[0].revents)
        return 0;
    }
}

/* With SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6, where RECV also returns
 * once no process uses the filter), one blocking RECV per notification
 * and no poll: a system call less each time, and a trapped call wakes the
 * supervisor on its own CPU.  Nothing polls the watcher's pipe then: a
 * thread of the supervisor blocks in read() on it and, on EOF while the
 * loop still runs, kills the container and ends the supervisor.  Not a
 * signal (SIGCHLD): it would interrupt the loop's own calls, and an
 * ADDFD with SECCOMP_ADDFD_FLAG_SEND interrupted by one loses its answer
 * (the kernel marks the notification replied before it queues the fd,
 * and a restarted ADDFD gets EINPROGRESS): the container's call would
 * complete without its fd and the supervisor die (nsless_perf.bats
 * caught it with stray SIGCHLDs). */
struct watch
{
  const struct target *t;
  int fd;                       /* the read end whose writer is the watcher */
};
static volatile bool finishing; /* the supervisor ends the watcher itself */

static void *
watch_thread (void *p)
{
  const struct watch *wa = p;
  char b;
  ssize_t r;
  do
    r = read (wa->fd, &b, 1);
  while (r < 0 && errno == EINTR);
  if (__atomic_load_n (&finishing, __ATOMIC_SEQ_CST))
    return NULL;
  logf_ ("the watcher died: killing the container");
  kill_container (wa->t);
  _exit (1);
}

static int
serve_sync (const struct rt_notify_ops *ops, int lfd, struct watch *wa)
{
  struct pollfd pf = { .fd = lfd, .events = POLLIN };
  struct seccomp_notif req;
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init (&at);
  pthread_attr_setdetachstate (&at, PTHREAD_CREATE_DETACHED);
  int e = pthread_create (&th, &at, watch_thread, wa);
  pthread_attr_destroy (&at);
  if (e != 0)
    return serve_poll (ops, lfd, wa->fd);
  for (;;)
    {
      memset (&req, 0, sizeof req);
      if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
        {
          if (answer (ops, lfd, &req) < 0)
            return -1;
          continue;
        }
      if (errno == EINTR)
        continue;
      if (errno != ENOENT)
        {
          logf_ ("receive a notification: %s", strerror (errno));
          return -1;
        }
      /* A caller that died, or no caller left: the listener says which. */
      if (poll (&pf, 1, 0) > 0 && (pf.revents & POLLHUP)
          && !(pf.revents & POLLIN))
        return 0;
    }
}

static int
serve (const struct rt_notify_ops *ops, int lfd, struct watch *wa)
{
  uint64_t flag = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
  if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flag) == 0)
    return serve_sync (ops, lfd, wa);
  return serve_poll (ops, lfd, wa->fd);
}

/* After ops->init: the init, the watcher, the listener, the loop.
 * Returns the exit status; the container is killed on failure. */
static int
supervise (struct rt_notify_sup *s)
{
  struct target t = { .pidfd = -1 };
  char text[sizeof t.cgroup + 4];
  int done_w = -1, watch_r = -1, lfd = -1, r;
  pid_t w;

  r = recv_fd (s->sock, text, sizeof text, &t.pidfd);
  if (r <= 0 || strncmp (text, "cg:", 3) != 0)
    return r == 0 ? 0 : 1;      /* EOF: the create failed before clone */
  memcpy (t.cgroup, text + 3, strnlen (text + 3, sizeof t.cgroup - 1));
  w = spawn_watcher (&t, s->sock, &done_w, &watch_r);
  if (w < 0)
    {
      logf_ ("fork the watcher: %s", strerror (errno));
      kill_container (&t);
      return 1;
    }
  /* The runtime waits for this before its create returns: from then on
   * the supervisor's death kills the container. */
  if (send (s->sock, "w", 1, MSG_NOSIGNAL) != 1)
    r = -1;
  else if (!wait_sock (s->sock, watch_r))
    r = -1;
  else
    r = take_listener (s->sock, t.pidfd, &lfd);
  close (s->sock);
  /* EOF: the init died (a failed create, a delete before start). */
  if (r > 0)
    {
      struct watch wa = { .t = &t, .fd = watch_r };
      r = serve (s->ops, lfd, &wa) < 0 ? -1 : 0;
      /* Its own rights again before its own acts (the kill, the end). */
      if (s->ops->idle)
        s->ops->idle (s->ops->ud);
    }
  __atomic_store_n (&finishing, true, __ATOMIC_SEQ_CST);
  if (r < 0)
    kill_container (&t);
  else if (write (done_w, "d", 1) != 1)
    logf_ ("tell the watcher: %s", strerror (errno));
  close (done_w);
  /* Not waited for: it reads "done" (or EOF) and exits on its own, and
   * `delete` waits for this process's exit, not the watcher's (two
   * wake-ups less at the end of every run); whoever reaps this process's
   * orphans reaps it. */
  return r < 0 ? 1 : 0;
}

void
rt_notify_supervise (struct rt_notify_sup *s)
{
  struct cm_err *err = NULL;
  const char *msg = "ok";
  hygiene (s);
  if (s->ops->init)
    {
      if (s->ops->init (s->ops->ud, &err) < 0)
        msg = err && err->msg ? err->msg : "init failed";
      if (send (s->sock, msg, strlen (msg), MSG_NOSIGNAL) < 0 || err)
        _exit (1);
    }
  drop_privileges (s->ops->switch_creds, s->ops->keep_permitted);
  int status = supervise (s);
  if (s->ops->fini)
    s->ops->fini (s->ops->ud);
  _exit (status);
}
