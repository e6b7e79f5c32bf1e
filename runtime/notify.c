/* The notify supervisor's steps in rt_container_create (notify.h): fork it
 * before the init, hand it the init's pidfd after clone, install the trap
 * filter in the init after `start` and hand it the listener.
 *
 * One socketpair, made before both forks: the supervisor holds one end;
 * the other is the runtime's until clone and the init's until the listener
 * is sent.  On it, in order: the supervisor's ops->init outcome (text, ""
 * when it worked; none without an ops->init), the init's pidfd with the
 * cgroup path, "w" back once the watcher is up (read at the end of the
 * create), the listener. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/util.h"
#include "internal.h"
#include "notify.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static struct
{
  const struct rt_notify_ops *ops;
  int init_sock;                /* the init's end of the socketpair */
  pid_t pid;
  uint64_t start_time;
  struct sock_filter *prog;
  unsigned short prog_len;
} nt = { .init_sock = -1 };

/* Installing a filter needs no_new_privs or CAP_SYS_ADMIN; the trap filter
 * goes in after the capabilities are dropped.  And the kernel allows one
 * listener per process tree of filters. */
static int
check_config (const struct rt_config *c, struct cm_err **err)
{
  const struct rt_process *pr = c->process;
  bool admin = false;
  if (c->seccomp && c->seccomp->listener_path && *c->seccomp->listener_path)
    return cm_err_set (err, 0, "linux.seccomp.listenerPath: a process has one "
                       "seccomp listener, and the runtime's notify "
                       "supervisor holds it");
  for (size_t i = 0; pr && pr->capabilities
                     && i < pr->capabilities->effective_len; i++)
    admin |= strcmp (pr->capabilities->effective[i], "CAP_SYS_ADMIN") == 0;
  if (pr && !pr->no_new_privileges && !admin)
    return cm_err_set (err, 0, "process.noNewPrivileges: must be true for "
                       "the notify supervisor's filter (or keep "
                       "CAP_SYS_ADMIN)");
  return 0;
}

/* The supervisor's answer to ops->init: "" or its error. */
static int
wait_init (int sock, struct cm_err **err)
{
  char msg[512];
  ssize_t r;
  do
    r = recv (sock, msg, sizeof msg - 1, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return cm_err_set (err, errno, "notify supervisor");
  if (r == 0)
    return cm_err_set (err, 0, "notify supervisor: exited during its init");
  msg[r] = '\0';
  if (strcmp (msg, "ok") != 0)
    return cm_err_set (err, 0, "notify supervisor: %s", msg);
  return 0;
}

static void __attribute__ ((noreturn))
supervisor_child (const struct rt_notify_ops *ops, int sock)
{
  struct rt_notify_sup s = { .ops = ops, .sock = sock,
                             .log_fd = ops->log_fd >= 0 ? ops->log_fd : 2 };
  rt_notify_supervise (&s);
}

int
rt_notify_spawn (const struct rt_create_opts *o, struct cm_err **err)
{
  const struct rt_notify_ops *ops = o->notify;
  int sv[2];
  size_t len;

  if (ops == NULL)
    return 0;
  if (ops->handle == NULL)
    return cm_err_set (err, EINVAL, "notify: no handler");
  if (!rt_kfeat (RT_KF_SECCOMP)->seccomp_notify)
    return cm_err_set (err, ENOSYS, "notify: this kernel has no seccomp "
                       "user notification");
  if (check_config (o->config, err) < 0
      || rt_notify_filter (ops, &nt.prog, &len, err) < 0)
    return -1;
  nt.prog_len = (unsigned short) len;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return cm_err_set (err, errno, "notify: socketpair");
  /* Above the preserved fds, which the init keeps as they are. */
  nt.init_sock = fcntl (sv[1], F_DUPFD_CLOEXEC, 3 + o->preserve_fds);
  close (sv[1]);
  if (nt.init_sock < 0)
    {
      close (sv[0]);
      return cm_err_set (err, errno, "notify: socketpair");
    }
  nt.ops = ops;
  nt.pid = fork ();
  if (nt.pid == 0)
    {
      close (nt.init_sock);
      supervisor_child (ops, sv[0]);
    }
  close (sv[0]);
  if (nt.pid < 0)
    return cm_err_set (err, errno, "notify: fork the supervisor");
  nt.start_time = rt_proc_start_time (nt.pid);
  /* Without an init there is no outcome to wait for: the create goes on
   * while the supervisor settles (one hand-off less on the start path);
   * a supervisor that died is seen when the init's pidfd is sent. */
  return ops->init ? wait_init (nt.init_sock, err) : 0;
}

int
rt_notify_parent (pid_t init, const char *cgroup_path, struct cm_err **err)
{
  if (nt.ops == NULL)
    return 0;
  _cleanup_fd_ int pidfd = (int) syscall (SYS_pidfd_open, init, 0);
  _cleanup_free_ char *msg = xasprintf ("cg:%s", cgroup_path ? cgroup_path
                                                             : "");
  if (pidfd < 0)
    return cm_err_set (err, errno, "notify: pidfd_open of the init");
  /* The init is this process's unreaped child: the pid cannot be reused. */
  if (cm_send_fd_str (nt.init_sock, pidfd, msg) < 0)
    return cm_err_set (err, errno, "notify: send the init to the supervisor");
  return 0;
}

/* Its watcher is up: a supervisor killed after the create returns takes
 * the container with it (without the wait, a SIGKILL right after the
 * create could land before the watcher existed).  Asked for last, not
 * right after the pidfd: the supervisor forks its watcher while the init
 * runs its own steps, instead of holding them up (the init parks with
 * PR_SET_PDEATHSIG until the create is recorded, and reads nothing on
 * this socket before `start`, so the byte is the runtime's). */
int
rt_notify_watched (struct cm_err **err)
{
  char w;
  ssize_t r;
  if (nt.ops == NULL)
    return 0;
  while ((r = recv (nt.init_sock, &w, 1, 0)) < 0 && errno == EINTR)
    ;
  if (r != 1 || w != 'w')
    return cm_err_set (err, r < 0 ? errno : 0,
                       "notify: the supervisor died before its watcher");
  return 0;
}

pid_t
rt_notify_pid (uint64_t *start_time)
{
  if (start_time)
    *start_time = nt.ops ? nt.start_time : 0;
  return nt.ops ? nt.pid : 0;
}

/* On failure the init is gone (killed and reaped), the runtime's end
 * closes here: the supervisor sees the hang-up, ends its watcher and
 * exits, and is reaped. */
void
rt_notify_end (bool ok)
{
  free (nt.prog);               /* made before a check may have failed */
  nt.prog = NULL;
  if (nt.ops == NULL)
    return;
  if (nt.init_sock >= 0)
    close (nt.init_sock);
  nt.init_sock = -1;
  if (!ok && nt.pid > 0)
    while (waitpid (nt.pid, NULL, 0) < 0 && errno == EINTR)
      ;
}

int
rt_notify_child_fd (void)
{
  return nt.ops ? nt.init_sock : -1;
}

/* Trapped system calls from here on wait in the listener's queue until
 * the supervisor has it.  So the hand-over is write and read, which are
 * never trapped (sendmsg may be: the namespace-less supervisor draws
 * datagrams): the supervisor takes the fd with pidfd_getfd, then says go
 * on, and the init closes it.  Unless the payload is an execve and
 * execve is trapped (|wait| false): then the fd stays open, close-on-exec,
 * until that execve, which waits for the supervisor, and the supervisor
 * takes the listener before it serves anything — one wake-up less on the
 * start path.  (A function payload never execs: it must not keep the
 * listener, so it waits and closes it.)  0 or errno. */
static bool
exec_trapped (const struct rt_notify_ops *ops)
{
  for (size_t i = 0; ops && i < ops->syscalls_len; i++)
    if (ops->syscalls[i] == SYS_execve)
      return true;
  return false;
}

static int
hand_over (int fd, bool wait)
{
  char msg[32], b;
  int n = snprintf (msg, sizeof msg, "listener:%d", fd), e = 0;
  ssize_t r;
  if (!wait && fcntl (fd, F_SETFD, FD_CLOEXEC) < 0)
    e = errno;
  else if ((r = write (nt.init_sock, msg, (size_t) n)) != n)
    e = r < 0 ? errno : EIO;
  else if (wait)
    {
      while ((r = read (nt.init_sock, &b, 1)) < 0 && errno == EINTR)
        ;
      e = r == 1 ? 0 : r == 0 ? EPIPE : errno;
    }
  if (wait || e)
    close (fd);
  return e;
}

int
rt_notify_child_step (struct rt_child *ch, struct cm_err **err)
{
  if (nt.ops == NULL)
    return 0;
  struct sock_fprog prog = { .len = nt.prog_len, .filter = nt.prog };
  unsigned flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
                   | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  long fd = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (fd < 0 && errno == EINVAL)
    {
      /* Before 5.19: a trapped call is interruptible while it waits. */
      flags &= ~(unsigned) SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
      fd = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    }
  if (fd < 0)
    return cm_err_set (err, errno, "notify: load the trap filter");
  int e = hand_over ((int) fd, !(exec_trapped (nt.ops)
                                 && ch->p->o->payload.kind
                                        == RT_PAYLOAD_EXEC));
  close (nt.init_sock);
  nt.init_sock = -1;
  if (e)
    return cm_err_set (err, e, "notify: hand the listener to the supervisor");
  return 0;
}
