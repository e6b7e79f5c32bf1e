/* The exec server inside a namespace-less container (runtime/vroot-xs.h):
 *
 *   init ──fork──► server (its own session, non-dumpable, dies with the
 *                  init): accept ──fork──► handler (one per request,
 *                  non-dumpable, dies with the server) ──fork──► process
 *
 * The process is the init's descendant and carries the init's Landlock
 * domain, trap filter and seccomp filter; its cwd, the HOME lookup and
 * args[0] are resolved by the supervisor in the view, like any call of the
 * container.  Only the owner of the container may connect (the socket is
 * 0600 in the state directory, and the peer's uid is checked); what a
 * client gets is one more process with the container's confinement, and
 * with the user, capabilities and rlimits it asked for only as far as the
 * handler's own — the container's — credentials can give them (fit). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "common/util.h"
#include "internal.h"
#include "vroot-xs.h"

struct xs_req
{
  struct vr_xs_req h;
  char *cwd;
  char **args, **env;           /* point into the request buffer */
  int fds[VR_XS_MAXFDS];
  size_t nfds;
  struct rt_user user;
  struct rt_rlimit_plan *rl;
  struct rt_caps_plan *caps;
  struct rt_scheduler sched;
  struct rt_io_priority ioprio;
};

/* send(2), not sendmsg: the handler is under the trap filter, where a
 * send with an address (sendmsg's is in memory) is done by the supervisor
 * on-behalf — which cannot read a non-dumpable process's memory; a send
 * without one goes on in the kernel (runtime/vroot-send.c). */
static void
reply (int conn, uint32_t kind, pid_t pid, int code, const char *text)
{
  struct vr_xs_msg m = { .kind = kind, .pid = pid, .code = code };
  if (text)
    snprintf (m.text, sizeof m.text, "%s", text);
  ssize_t r;
  do
    r = send (conn, &m, sizeof m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
}

static bool
header_ok (const struct vr_xs_req *h, size_t len, size_t nfds)
{
  return h->magic == VR_XS_MAGIC && h->version == VR_XS_VERSION
         && h->nargs > 0 && h->nargs <= len && h->nenv <= len
         && h->nfds >= 3 && h->nfds == nfds && h->terminal <= 1
         && h->umask <= 0777 && h->ngids <= VR_XS_MAXGIDS
         && h->nrlimits <= VR_XS_MAXRLIMITS && h->noroot <= 1
         && h->sched <= 1 && h->ioprio <= 1 && h->zero == 0
         && sizeof *h + h->nrlimits * sizeof (struct vr_xs_rlimit)
                + h->ngids * sizeof (uint32_t) < len;
}

/* The rlimit plan and the groups after the header; -1 on a bad value. */
static int
parse_fields (const char *buf, struct xs_req *r)
{
  const char *p = buf + sizeof r->h;
  r->rl = xcalloc (r->h.nrlimits + 1, sizeof *r->rl);
  for (size_t i = 0; i < r->h.nrlimits; i++, p += sizeof (struct vr_xs_rlimit))
    {
      struct vr_xs_rlimit x;
      memcpy (&x, p, sizeof x);
      const char *name = rt_proc_rlimit_name (x.resource);
      if (name == NULL || x.zero != 0 || x.soft > x.hard)
        return -1;
      r->rl[i] = (struct rt_rlimit_plan){ x.resource, x.soft, x.hard, name };
    }
  r->user = (struct rt_user){ .uid = r->h.uid, .gid = r->h.gid,
                              .umask = r->h.umask, .umask_present = 1,
                              .additional_gids_len = r->h.ngids };
  r->user.additional_gids = xcalloc (r->h.ngids + 1, sizeof (uint32_t));
  memcpy (r->user.additional_gids, p, r->h.ngids * sizeof (uint32_t));
  r->caps = rt_caps_plan_new (r->h.bounding, r->h.effective, r->h.permitted,
                              r->h.inheritable, r->h.ambient, r->h.noroot);
  return (int) (sizeof r->h + r->h.nrlimits * sizeof (struct vr_xs_rlimit)
                + r->h.ngids * sizeof (uint32_t));
}

/* Checks and splits a request: the fields, then cwd, args, env, the
 * scheduler's policy and the I/O class when present, each NUL-ended,
 * which end the message. */
static int
parse (char *buf, size_t len, struct xs_req *r)
{
  if (len < sizeof r->h)
    return -1;
  memcpy (&r->h, buf, sizeof r->h);
  if (!header_ok (&r->h, len, r->nfds))
    return -1;
  int off0 = parse_fields (buf, r);
  if (off0 < 0)
    return -1;
  size_t want = 1 + r->h.nargs + r->h.nenv + r->h.sched + r->h.ioprio;
  size_t k = 0, off = (size_t) off0;
  char **v = xcalloc (want + 2, sizeof *v);
  for (; off < len && k < want; k++)
    {
      char *end = memchr (buf + off, '\0', len - off);
      if (end == NULL)
        break;
      v[k] = buf + off;
      off = (size_t) (end - buf) + 1;
    }
  if (k != want || off != len)
    return free (v), -1;
  r->cwd = v[0];
  /* args then a NULL, env then a NULL: v is shifted into two vectors */
  r->args = xcalloc (r->h.nargs + 1, sizeof *r->args);
  r->env = xcalloc (r->h.nenv + 1, sizeof *r->env);
  memcpy (r->args, v + 1, r->h.nargs * sizeof *v);
  memcpy (r->env, v + 1 + r->h.nargs, r->h.nenv * sizeof *v);
  k = 1 + r->h.nargs + r->h.nenv;
  r->sched = (struct rt_scheduler){ .policy = r->h.sched ? v[k++] : NULL,
                                    .nice = r->h.nice,
                                    .priority = r->h.sched_priority,
                                    .runtime = r->h.runtime,
                                    .deadline = r->h.deadline,
                                    .period = r->h.period };
  r->ioprio = (struct rt_io_priority){ .class_ = r->h.ioprio ? v[k] : NULL,
                                       .priority = r->h.io_priority };
  free (v);
  return 0;
}

/* What this handler's own credentials — the container's — cannot give is
 * refused before anything runs, naming the field.  An ordinary caller's
 * container switches no user and holds no capability (as its init:
 * rt_vroot_child_confine), so there only the user and rlimits are asked. */
static int
fit (struct xs_req *r, struct cm_err **err)
{
  bool keep = geteuid () != 0;
  if (rt_proc_fit_rlimits (r->rl, r->h.nrlimits, err) < 0
      || rt_caps_fit_user (&r->user, keep, err) < 0)
    return -1;
  return keep ? 0 : rt_caps_fit (r->caps, r->user.uid, err);
}

/* stdio and the preserved fds at 0..n-1, nothing else but |keep|. */
static int
place_fds (struct xs_req *r, int *keep)
{
  int n = (int) r->nfds;
  for (size_t i = 0; i < r->nfds; i++)
    if ((r->fds[i] = fcntl (r->fds[i], F_DUPFD_CLOEXEC, n)) < 0)
      return -1;
  if ((*keep = fcntl (*keep, F_DUPFD_CLOEXEC, n)) < 0)
    return -1;
  for (int i = 0; i < n; i++)
    if (dup2 (r->fds[i], i) < 0)
      return -1;
  rt_close_fds_except (n, keep, 1);
  return 0;
}

static void __attribute__ ((noreturn))
fail (int ep, int e, const char *what)
{
  char msg[512];
  snprintf (msg, sizeof msg, "%s%s%s", what, e ? ": " : "",
            e ? strerror (e) : "");
  if (write (ep, msg, strlen (msg)) < 0)
    _exit (126);
  _exit (127);
}

/* The process: its fds, session, cwd and HOME (the view's, through the
 * supervisor), then execve of args[0] looked up in the view. */
static void __attribute__ ((noreturn))
process (struct xs_req *r, int ep)
{
  struct cm_err *err = NULL;
  sigset_t none;
  char *path = NULL;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  /* The supervisor reads this process's memory (its paths). */
  prctl (PR_SET_DUMPABLE, 1);
  if (place_fds (r, &ep) < 0)
    fail (ep, errno, "exec: stdio");
  for (int sig = 1; sig < NSIG; sig++)
    signal (sig, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (setsid () < 0)
    fail (ep, errno, "exec: setsid");
  if (r->h.terminal && ioctl (0, TIOCSCTTY, 0) < 0)
    fail (ep, errno, "process.terminal: controlling terminal");
  if (chdir (r->cwd) < 0)
    {
      char what[PATH_MAX + 64];
      snprintf (what, sizeof what, "process.cwd: `%s` in the view", r->cwd);
      fail (ep, errno, what);
    }
  struct rt_process pr = { .args = r->args, .args_len = r->h.nargs,
                           .env = r->env, .env_len = r->h.nenv,
                           .cwd = r->cwd, .user = r->user,
                           .no_new_privileges = true,
                           .scheduler = r->h.sched ? &r->sched : NULL,
                           .io_priority = r->h.ioprio ? &r->ioprio : NULL };
  /* The namespaced exec's steps (its Landlock domain and personality are
   * the init's, in place): scheduler and I/O priority, rlimits, user and
   * capabilities (root's container only, as its init), umask. */
  if (rt_proc_sched (&pr, &err) < 0
      || rt_proc_confine (NULL, r->rl, r->h.nrlimits, r->caps, &pr,
                          geteuid () != 0, &err) < 0)
    fail (ep, 0, err->msg);
  /* A change of ids made it non-dumpable again. */
  prctl (PR_SET_DUMPABLE, 1);
  char **envp = rt_proc_envp (&pr);
  if (rt_proc_resolve_exec (&pr, &path, &err) < 0)
    fail (ep, 0, err->msg);
  execve (path, r->args, envp);
  char msg[512];
  snprintf (msg, sizeof msg, "exec: \"%s\"", r->args[0]);
  fail (ep, errno, msg);
}

/* Waits until the client hangs up: the process is reaped only then, so
 * the pid the client signals cannot be another's. */
static void
await_hangup (int conn)
{
  char b[64];
  ssize_t n;
  do
    n = recv (conn, b, sizeof b, 0);
  while (n > 0 || (n < 0 && errno == EINTR));
}

static void __attribute__ ((noreturn))
handler (int conn)
{
  struct xs_req r = { .nfds = VR_XS_MAXFDS };
  char *buf = xmalloc (VR_XS_MAX);
  char msg[512];
  int ep[2];
  siginfo_t si;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  struct cm_err *err = NULL;
  ssize_t n = vr_xs_recv (conn, buf, VR_XS_MAX, r.fds, &r.nfds);
  if (n <= 0 || parse (buf, (size_t) n, &r) < 0)
    {
      reply (conn, VR_XS_ERROR, 0, EINVAL, "exec server: bad request");
      _exit (1);
    }
  if (fit (&r, &err) < 0)
    {
      reply (conn, VR_XS_ERROR, 0, err->errno_, err->msg);
      _exit (1);
    }
  if (pipe2 (ep, O_CLOEXEC) < 0)
    _exit (1);
  pid_t c = fork ();
  if (c == 0)
    {
      close (ep[0]);
      close (conn);
      process (&r, ep[1]);
    }
  close (ep[1]);
  for (size_t i = 0; i < r.nfds; i++)
    close (r.fds[i]);
  if (c < 0)
    {
      reply (conn, VR_XS_ERROR, 0, errno, "exec server: fork");
      _exit (1);
    }
  /* EOF: execve closed the pipe, the program runs. */
  do
    n = read (ep[0], msg, sizeof msg - 1);
  while (n < 0 && errno == EINTR);
  if (n > 0)
    {
      msg[n] = '\0';
      reply (conn, VR_XS_ERROR, 0, 0, msg);
      waitpid (c, NULL, 0);
      _exit (0);
    }
  reply (conn, VR_XS_STARTED, c, 0, NULL);
  while (waitid (P_PID, (id_t) c, &si, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR)
      _exit (1);
  reply (conn, VR_XS_EXITED, c,
         si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status, NULL);
  await_hangup (conn);
  waitpid (c, NULL, 0);
  _exit (0);
}

static bool
peer_ok (int conn)
{
  struct ucred cr;
  socklen_t len = sizeof cr;
  return getsockopt (conn, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0
         && cr.uid == getuid ();
}

static void __attribute__ ((noreturn))
server (int lfd, pid_t init)
{
  int keep[1] = { lfd };
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (getppid () != init)
    _exit (0);
  /* Its memory and fds are not the container's to take (ptrace-class
   * access needs a dumpable target or CAP_SYS_PTRACE). */
  prctl (PR_SET_DUMPABLE, 0);
  /* Not in the init's session: a terminal's ^C is the init's business. */
  setsid ();
  rt_close_fds_except (0, keep, 1);
  /* The handlers are reaped by the kernel. */
  signal (SIGCHLD, SIG_IGN);
  for (;;)
    {
      int conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        {
          if (errno == EINTR || errno == ECONNABORTED)
            continue;
          _exit (1);
        }
      if (!peer_ok (conn))
        {
          close (conn);
          continue;
        }
      pid_t h = fork ();
      if (h == 0)
        {
          close (lfd);
          signal (SIGCHLD, SIG_DFL);
          handler (conn);
        }
      close (conn);
    }
}

int
vr_xs_spawn (int lfd, struct cm_err **err)
{
  pid_t init = getpid ();
  /* No exit signal: a "clone child", which wait(2) without __WALL or
   * __WCLONE neither reports nor counts (ECHILD once the program's own
   * children are reaped), and whose end sends the init no SIGCHLD.  A
   * raw clone leaves glibc's cached tid the init's: the server calls
   * nothing that uses it, and its handlers are fork()ed, which sets it. */
  pid_t s = (pid_t) syscall (SYS_clone, 0, 0, 0, 0, 0);
  if (s == 0)
    server (lfd, init);
  close (lfd);
  if (s < 0)
    return cm_err_set (err, errno, "namespace-less exec server: fork");
  return 0;
}
