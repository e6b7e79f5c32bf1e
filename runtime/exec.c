/* exec: a new process in a running container.
 *
 *   runtime ──fork──► A: setns(init's pidfd, every namespace that differs)
 *                        clone(CLONE_PARENT) ──► B (in the container's pid
 *                        namespace, but the runtime's child, so the runtime
 *                        can waitpid() it and a subreaper caller inherits it)
 *                        sends B's pid, exits
 *   runtime: puts B in the container's cgroup, sends GO
 *   B: pty, cwd, personality, Landlock, rlimits, user+caps, args[0]
 *      lookup, seccomp, execve.  The sync socket is O_CLOEXEC: EOF means
 *      execve succeeded, a message means it did not and says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"

struct exec_plan
{
  const struct rt_exec_opts *o;
  struct rt_caps_plan *caps;
  struct rt_confine *confine;
  struct rt_rlimit_plan *rlimits;
  size_t rlimits_len;
  int pidfd, console_fd, ns_flags;
  long personality;
};

static const struct
{
  const char *name;
  int flag;
} ns_files[] = {
  { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },
  { "pid", CLONE_NEWPID },   { "net", CLONE_NEWNET },
  { "ipc", CLONE_NEWIPC },   { "uts", CLONE_NEWUTS },
  { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

/* The namespaces of |pid| that differ from ours: exactly the ones to join
 * (setns into our own user namespace would fail with EINVAL). */
static int
differing_namespaces (pid_t pid)
{
  int flags = 0;
  for (size_t i = 0; i < ARRAY_SIZE (ns_files); i++)
    {
      char b[64];
      struct stat sb;
      snprintf (b, sizeof b, "/proc/%d/ns/%s", (int) pid, ns_files[i].name);
      if (stat (b, &sb) < 0)
        continue;
      if (rt_ns_is (&sb, "self", ns_files[i].name) != 1)
        flags |= ns_files[i].flag;
    }
  return flags;
}

static bool
config_has_ns (const struct rt_config *c, const char *type)
{
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (c->namespaces[i].type && strcmp (c->namespaces[i].type, type) == 0)
      return true;
  return false;
}

static void
close_inherited (struct exec_plan *p, int sock)
{
  int keep[] = { sock, p->console_fd, rt_confine_listener_fd (p->confine) };
  rt_close_fds_except (3 + p->o->preserve_fds, keep, ARRAY_SIZE (keep));
}

static int
exec_setup (struct exec_plan *p, struct cm_err **err)
{
  const struct rt_process *pr = p->o->process;
  /* Its own session with or without a terminal, as runc's nsexec and crun
   * do: the runtime's process group is not in the container's pid
   * namespace, where getpgrp() and getsid() would say 0. */
  if (setsid () < 0)
    return cm_err_set (err, errno, "setsid");
  if (pr->terminal && rt_proc_terminal (pr, p->console_fd, err) < 0)
    return -1;
  if (p->console_fd >= 0)
    close (p->console_fd);
  if (rt_proc_chdir (pr, err) < 0)
    return -1;
  if (rt_proc_sched (pr, err) < 0
      || rt_personality_apply (p->personality, err) < 0)
    return -1;
  return rt_proc_confine (p->confine, p->rlimits, p->rlimits_len, p->caps,
                          pr, false, err);
}

static void __attribute__ ((noreturn))
exec_child (struct exec_plan *p, int sock)
{
  const struct rt_process *pr = p->o->process;
  struct cm_err *err = NULL;
  struct sync_msg m;
  sigset_t none;
  _cleanup_free_ char *path = NULL;
  _cleanup_free_ char **argv = xcalloc (pr->args_len + 1, sizeof *argv);
  char **envp = NULL;

  close_inherited (p, sock);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_GO)
    _exit (1);
  /* HOME from the container's /etc/passwd before Landlock may hide it. */
  envp = rt_proc_envp (pr);
  if (exec_setup (p, &err) < 0 || rt_proc_resolve_exec (pr, &path, &err) < 0
      || rt_confine_child_seccomp (p->confine, &err) < 0)
    {
      rt_sync_send (sock, SYNC_ERROR, err->errno_, err->msg);
      _exit (127);
    }
  memcpy (argv, pr->args, pr->args_len * sizeof *argv);
  execve (path, argv, envp);
  {
    char msg[512];
    snprintf (msg, sizeof msg, "exec: \"%s\": %s", pr->args[0],
              errno == ENOENT ? "no such file or directory"
              : errno == EACCES ? "permission denied" : strerror (errno));
    rt_sync_send (sock, SYNC_ERROR, 0, msg);
  }
  _exit (127);
}

/* Child A: joins the namespaces and forks B as a sibling (CLONE_PARENT). */
static void __attribute__ ((noreturn))
joiner (struct exec_plan *p, int sock)
{
  pid_t b;
  struct sync_msg m = { .kind = SYNC_PID };
  int root = -1;
  /* The runtime binary enters the container: non-dumpable, like the init
   * (container.c child_undumpable), and so is B, which inherits it; the
   * runtime writes nothing under their /proc. */
  prctl (PR_SET_DUMPABLE, 0);
  /* Sharing our mount namespace, the container's root is a chroot
   * (runtime/rootfs-chroot.c): take the init's root, opened before
   * setns() moves us to its pid namespace. */
  if (!(p->ns_flags & CLONE_NEWNS))
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/root", (int) p->o->init_pid);
      root = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (root < 0)
        {
          rt_sync_send (sock, SYNC_ERROR, errno, "open the container's root");
          _exit (1);
        }
    }
  if (p->ns_flags && setns (p->pidfd, p->ns_flags) < 0)
    {
      rt_sync_send (sock, SYNC_ERROR, errno, "join the container's namespaces");
      _exit (1);
    }
  if (root >= 0 && (fchdir (root) < 0 || chroot (".") < 0 || chdir ("/") < 0))
    {
      rt_sync_send (sock, SYNC_ERROR, errno, "chroot to the container's root");
      _exit (1);
    }
  b = (pid_t) syscall (SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
  if (b < 0)
    {
      rt_sync_send (sock, SYNC_ERROR, errno, "clone");
      _exit (1);
    }
  if (b == 0)
    exec_child (p, sock);
  m.pid = b;
  send (sock, &m, sizeof m, MSG_NOSIGNAL);
  _exit (0);
}

static int
plan_exec (const struct rt_exec_opts *o, struct exec_plan *p,
           struct cm_err **err)
{
  const struct rt_process *pr = o->process;
  memset (p, 0, sizeof *p);
  p->o = o;
  p->pidfd = p->console_fd = -1;
  if (pr->args_len == 0)
    return cm_err_set (err, 0, "process.args: required and not empty");
  if (pr->cwd == NULL || pr->cwd[0] != '/')
    return cm_err_set (err, 0, "process.cwd: must be an absolute path");
  if (pr->terminal && o->console_socket == NULL)
    return cm_err_set (err, 0, "process.terminal is true: --console-socket "
                       "is required");
  if (rt_caps_prepare (pr, &p->caps, err) < 0
      || rt_proc_plan_rlimits (pr, &p->rlimits, &p->rlimits_len, err) < 0
      || rt_personality_plan (o->config, &p->personality, err) < 0
      || rt_confine_prepare (o->config, &p->confine, err) < 0)
    return -1;
  rt_confine_set_container (p->confine, o->id, o->bundle);
  rt_confine_for_exec (p->confine, config_has_ns (o->config, "pid"),
                       config_has_ns (o->config, "network")
                           || config_has_ns (o->config, "net"));
  if (rt_confine_use_pins (p->confine, o->landlock_pins,
                           o->landlock_pins_len, err) < 0)
    return -1;
  p->pidfd = (int) syscall (SYS_pidfd_open, o->init_pid, 0);
  if (p->pidfd < 0 || !rt_proc_alive (o->init_pid, o->init_start_time))
    return cm_err_set (err, 0, "container \"%s\" is not running", o->id);
  p->ns_flags = differing_namespaces (o->init_pid);
  if (pr->terminal)
    {
      p->console_fd = rt_connect_console (o->console_socket, err);
      if (p->console_fd < 0)
        return -1;
    }
  return 0;
}

static int
run_exec (struct exec_plan *p, pid_t *out, struct cm_err **err)
{
  int sv[2];
  struct sync_msg m;
  pid_t a, b = -1;
  int r;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return cm_err_set (err, errno, "socketpair");
  a = fork ();
  if (a < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return cm_err_set (err, errno, "fork");
    }
  if (a == 0)
    {
      close (sv[0]);
      joiner (p, sv[1]);
    }
  close (sv[1]);
  waitpid (a, NULL, 0);
  r = rt_sync_recv (sv[0], &m);
  if (r <= 0 || m.kind != SYNC_PID)
    {
      r = r > 0 && m.kind == SYNC_ERROR
              ? cm_err_set (err, m.errno_, "exec: %s", m.msg)
              : cm_err_set (err, 0, "exec: process setup failed");
      close (sv[0]);
      return r;
    }
  b = m.pid;
  if (p->o->cgroup_path)
    {
      struct rt_cgroup *cg = NULL;
      if (rt_cgroup_open (p->o->cgroup_path, &cg, err) < 0
          || rt_cgroup_attach (cg, b, false, err) < 0)
        {
          rt_cgroup_free (cg);
          goto fail;
        }
      rt_cgroup_free (cg);
    }
  if (rt_sync_send (sv[0], SYNC_GO, 0, NULL) < 0)
    {
      cm_err_set (err, errno, "exec: sync");
      goto fail;
    }
  r = rt_sync_recv (sv[0], &m);
  if (r != 0)
    {
      if (r > 0 && m.kind == SYNC_ERROR)
        {
          /* the text already carries strerror */
          cm_err_set (err, 0, "%s", m.msg);
          (*err)->errno_ = m.errno_;
        }
      else
        cm_err_set (err, 0, "exec: bad reply from the process");
      waitpid (b, NULL, 0);
      close (sv[0]);
      return -1;
    }
  close (sv[0]);
  *out = b;
  return 0;
fail:
  kill (b, SIGKILL);
  waitpid (b, NULL, 0);
  close (sv[0]);
  return -1;
}

int
rt_exec (const struct rt_exec_opts *o, pid_t *pid, struct cm_err **err)
{
  struct exec_plan p;
  int r = plan_exec (o, &p, err);
  if (r == 0)
    r = run_exec (&p, pid, err);
  if (p.pidfd >= 0)
    close (p.pidfd);
  if (p.console_fd >= 0)
    close (p.console_fd);
  rt_caps_free (p.caps);
  rt_confine_free (p.confine);
  free (p.rlimits);
  return r;
}
