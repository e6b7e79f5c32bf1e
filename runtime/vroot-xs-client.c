/* `exec` into a namespace-less container: the request to its exec server
 * (runtime/vroot-xs.h), made by the runtime on the host.  A terminal is a
 * pty of the host's devpts, opened here (the container has no devpts of
 * its own): the master goes to --console-socket, the slave is the
 * process's stdio, passed as fds — the container reaches no pty by path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "caps.h"
#include "common/fdpass.h"
#include "common/util.h"
#include "internal.h"
#include "vroot-xs.h"

static int
connect_server (const char *dir, struct cm_err **err)
{
  _cleanup_fd_ int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int s = -1;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  if (dfd < 0)
    return cm_err_set (err, errno, "exec: `%s`", dir);
  snprintf (a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/" VR_XS_SOCK,
            dfd);
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0 || connect (s, (struct sockaddr *) &a, sizeof a) < 0)
    return cm_err_set (err, errno, "exec: the container's exec server "
                       "(`%s/" VR_XS_SOCK "`)", dir);
  return cm_steal_fd (&s);
}

/* The request's bytes: the header with the capability plan, the rlimit
 * plan, the groups, then cwd, args, env, NUL-ended. */
static char *
request (const struct rt_process *pr, const struct rt_caps_plan *caps,
         const struct rt_rlimit_plan *rl, size_t nrl, size_t nfds,
         size_t *len)
{
  struct vr_xs_req h = {
    .magic = VR_XS_MAGIC, .version = VR_XS_VERSION,
    .nargs = (uint32_t) pr->args_len, .nenv = (uint32_t) pr->env_len,
    .nfds = (uint32_t) nfds, .terminal = pr->terminal,
    .uid = pr->user.uid, .gid = pr->user.gid,
    .umask = pr->user.umask_present ? pr->user.umask & 0777 : 022,
    .ngids = (uint32_t) pr->user.additional_gids_len,
    .nrlimits = (uint32_t) nrl,
    .sched = pr->scheduler != NULL, .ioprio = pr->io_priority != NULL,
  };
  const char *policy = pr->scheduler ? pr->scheduler->policy : NULL;
  const char *class_ = pr->io_priority ? pr->io_priority->class_ : NULL;
  if (policy)
    {
      h.nice = pr->scheduler->nice;
      h.sched_priority = pr->scheduler->priority;
      h.runtime = pr->scheduler->runtime;
      h.deadline = pr->scheduler->deadline;
      h.period = pr->scheduler->period;
    }
  if (class_)
    h.io_priority = pr->io_priority->priority;
  bool noroot;
  rt_caps_plan_masks (caps, &h.bounding, &h.effective, &h.permitted,
                      &h.inheritable, &h.ambient, &noroot);
  h.noroot = noroot;
  size_t n = sizeof h + nrl * sizeof (struct vr_xs_rlimit)
             + h.ngids * sizeof (uint32_t) + strlen (pr->cwd) + 1;
  for (size_t i = 0; i < pr->args_len; i++)
    n += strlen (pr->args[i]) + 1;
  for (size_t i = 0; i < pr->env_len; i++)
    n += strlen (pr->env[i]) + 1;
  n += (policy ? strlen (policy) + 1 : 0) + (class_ ? strlen (class_) + 1 : 0);
  char *b = xmalloc (n), *p = b;
  memcpy (p, &h, sizeof h);
  p += sizeof h;
  for (size_t i = 0; i < nrl; i++)
    {
      struct vr_xs_rlimit r = { .resource = rl[i].resource,
                                .soft = rl[i].soft, .hard = rl[i].hard };
      memcpy (p, &r, sizeof r);
      p += sizeof r;
    }
  if (h.ngids)
    memcpy (p, pr->user.additional_gids, h.ngids * sizeof (uint32_t));
  p += h.ngids * sizeof (uint32_t);
  p = stpcpy (p, pr->cwd) + 1;
  for (size_t i = 0; i < pr->args_len; i++)
    p = stpcpy (p, pr->args[i]) + 1;
  for (size_t i = 0; i < pr->env_len; i++)
    p = stpcpy (p, pr->env[i]) + 1;
  if (policy)
    p = stpcpy (p, policy) + 1;
  if (class_)
    p = stpcpy (p, class_) + 1;
  *len = n;
  return b;
}

/* A pty of the host's devpts (rt_proc_pty): the master to the console
 * socket, the slave returned. */
static int
host_pty (const struct rt_process *pr, const char *console_socket,
          struct cm_err **err)
{
  _cleanup_fd_ int console = -1, master = -1, slave = -1;
  if (console_socket == NULL)
    return cm_err_set (err, 0, "process.terminal is true: --console-socket "
                       "is required");
  console = rt_connect_console (console_socket, err);
  if (console < 0 || rt_proc_pty (pr, &master, &slave, err) < 0)
    return -1;
  if (cm_send_fd_str (console, master, "/dev/ptmx") < 0)
    return cm_err_set (err, errno, "--console-socket: send pty master");
  return cm_steal_fd (&slave);
}

static int
check (const struct rt_exec_opts *o, struct cm_err **err)
{
  const struct rt_process *pr = o->process;
  if (pr->args_len == 0)
    return cm_err_set (err, 0, "process.args: required and not empty");
  if (pr->cwd == NULL || pr->cwd[0] != '/')
    return cm_err_set (err, 0, "process.cwd: must be an absolute path");
  /* process.user, capabilities and rlimits: the server decides, it has
   * the container's credentials (vroot-xs-server.c). */
  if (pr->user.additional_gids_len > VR_XS_MAXGIDS)
    return cm_err_set (err, 0, "process.user.additionalGids: at most %d in "
                       "namespace-less mode", VR_XS_MAXGIDS);
  if (pr->rlimits_len > VR_XS_MAXRLIMITS)
    return cm_err_set (err, 0, "process.rlimits: at most %d in "
                       "namespace-less mode", VR_XS_MAXRLIMITS);
  if (o->preserve_fds < 0 || 3 + o->preserve_fds > VR_XS_MAXFDS)
    return cm_err_set (err, 0, "--preserve-fds: at most %d in "
                       "namespace-less mode", VR_XS_MAXFDS - 3);
  return 0;
}

int
rt_exec_vroot (const struct rt_exec_opts *o, pid_t *pid, int *status_fd,
               struct cm_err **err)
{
  const struct rt_process *pr = o->process;
  _cleanup_fd_ int s = -1, slave = -1;
  _cleanup_free_ char *req = NULL;
  _cleanup_free_ int *fds = NULL;
  _cleanup_free_ struct rt_rlimit_plan *rl = NULL;
  struct rt_caps_plan *caps = NULL;
  size_t len, nrl = 0;
  size_t nfds = 3 + (size_t) (o->preserve_fds > 0 ? o->preserve_fds : 0);
  struct vr_xs_msg m;

  if (check (o, err) < 0 || rt_proc_plan_rlimits (pr, &rl, &nrl, err) < 0
      || rt_caps_prepare (pr, &caps, err) < 0)
    return -1;
  req = request (pr, caps, rl, nrl, nfds, &len);
  rt_caps_free (caps);
  if (len > VR_XS_MAX)
    return cm_err_set (err, E2BIG, "exec: process.args and process.env "
                       "exceed %u KiB (the namespace-less exec server's "
                       "limit)", VR_XS_MAX >> 10);
  if (pr->terminal && (slave = host_pty (pr, o->console_socket, err)) < 0)
    return -1;
  fds = xcalloc (nfds, sizeof *fds);
  for (size_t i = 0; i < nfds; i++)
    fds[i] = i < 3 && slave >= 0 ? slave : (int) i;
  s = connect_server (o->vroot_dir, err);
  if (s < 0)
    return -1;
  if (vr_xs_send (s, req, len, fds, nfds) < 0)
    return cm_err_set (err, errno, "exec: send to the exec server");
  ssize_t n = vr_xs_recv (s, &m, sizeof m, NULL, NULL);
  if (n != (ssize_t) sizeof m)
    return cm_err_set (err, n < 0 ? errno : 0, "exec: the container's exec "
                       "server did not answer (is the container running?)");
  m.text[sizeof m.text - 1] = '\0';
  if (m.kind != VR_XS_STARTED)
    {
      cm_err_set (err, 0, "%s", m.text);
      (*err)->errno_ = m.code;
      return -1;
    }
  *pid = m.pid;
  *status_fd = cm_steal_fd (&s);
  return 0;
}

int
rt_exec_vroot_status (int status_fd)
{
  struct vr_xs_msg m;
  ssize_t n = vr_xs_recv (status_fd, &m, sizeof m, NULL, NULL);
  if (n != (ssize_t) sizeof m || m.kind != VR_XS_EXITED)
    return -1;
  return m.code;
}
