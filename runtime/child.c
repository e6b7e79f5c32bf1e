/* The container init: the executor of the plan.  It runs an ordered table
 * of setup steps (name + function) built from nothing but the plan and
 * what the parent sends, parks on the exec fifo, runs the start steps, and
 * becomes its payload (runtime/payload.c).  docs/architecture.md
 * "Process model".
 *
 * Any failure before the park is sent to the runtime as {kind, errno,
 * text} and the child exits; after `start` it goes to the start-status
 * fifo.  Nothing here sleeps or polls. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "notify.h"
#include "vroot-run.h"

typedef int (*child_step_fn) (struct rt_child *ch, struct cm_err **err);

struct child_step
{
  const char *name;
  child_step_fn fn;
};

static int
step_time_ns (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_config *c = ch->p->c;
  char buf[128];
  int fd;
  if (ch->timens_fd < 0)
    return cm_err_set (err, ch->timens_errno, "linux.timeOffsets: open "
                       "/proc/self/timens_offsets");
  if (unshare (CLONE_NEWTIME) < 0)
    return cm_err_set (err, errno, "unshare time namespace");
  snprintf (buf, sizeof buf, "monotonic %lld %u\nboottime %lld %u\n",
            (long long) c->time_offsets[0].offset_secs,
            c->time_offsets[0].offset_nanosecs,
            (long long) c->time_offsets[1].offset_secs,
            c->time_offsets[1].offset_nanosecs);
  if (write (ch->timens_fd, buf, strlen (buf)) < 0)
    return cm_err_set (err, errno, "linux.timeOffsets: write "
                       "/proc/self/timens_offsets");
  close (ch->timens_fd);
  ch->timens_fd = -1;
  fd = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWTIME) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return cm_err_set (err, e, "enter time namespace");
    }
  close (fd);
  return 0;
}

static int
step_namespaces (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_ns_fds *ns = &ch->pp->ns;
  for (size_t i = 0; i < ns->len; i++)
    if (setns (ns->fds[i], ns->types[i]) < 0)
      return cm_err_set (err, errno, "join namespace (type %#x)",
                         ns->types[i]);
  if (p->new_user || p->joins_user)
    {
      /* Become root of the new user namespace when root is mapped. */
      if (setresgid (0, 0, 0) < 0 && errno != EINVAL)
        return cm_err_set (err, errno, "setresgid(0) in user namespace");
      if (setresuid (0, 0, 0) < 0 && errno != EINVAL)
        return cm_err_set (err, errno, "setresuid(0) in user namespace");
    }
  if (p->new_time && step_time_ns (ch, err) < 0)
    return -1;
  if (p->new_net && rt_child_loopback_up (err) < 0)
    return -1;
  if (setsid () < 0)
    return cm_err_set (err, errno, "setsid");
  return 0;
}

/* Waits (once) until the runtime has put the process in its cgroup, then
 * unshares the cgroup namespace when one is asked for. */
static int
step_cgroup (struct rt_child *ch, struct cm_err **err)
{
  struct sync_msg m;
  if (ch->in_cgroup)
    return 0;
  if (rt_sync_recv (ch->sync_fd, &m) <= 0 || m.kind != SYNC_CGROUP_DONE)
    _exit (1);                  /* the runtime reports its own error */
  ch->in_cgroup = true;
  if (ch->p->new_cgroup && unshare (CLONE_NEWCGROUP) < 0)
    return cm_err_set (err, errno, "unshare cgroup namespace");
  return 0;
}

/* Before the first cgroup mount, only when the config has one. */
static int
step_cgroup_for_mounts (struct rt_child *ch, struct cm_err **err)
{
  if (ch->p->first_cgroup_mount == ch->p->mounts_len)
    return 0;
  return step_cgroup (ch, err);
}

/* prestart and createRuntime run in the runtime, between the mounts and
 * pivot_root.  Namespace-less, createContainer too: its path resolves in
 * the runtime's namespaces (runtime-spec "POSIX-platform Hooks"), which
 * are the container's, but the init is already in the supervisor's
 * Landlock domain (runtime/vroot-domain.c), where a host path is not
 * there to run. */
static int
step_runtime_hooks (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_config *c = ch->p->c;
  struct sync_msg m;
  if (!c->hooks[RT_HOOK_PRESTART].len && !c->hooks[RT_HOOK_CREATE_RUNTIME].len
      && !(rt_vroot_mode (ch->p) && c->hooks[RT_HOOK_CREATE_CONTAINER].len))
    return 0;
  if (rt_sync_send (ch->sync_fd, SYNC_HOOKS, 0, NULL) < 0)
    return cm_err_set (err, errno, "sync with runtime");
  if (rt_sync_recv (ch->sync_fd, &m) <= 0 || m.kind != SYNC_HOOKS_DONE)
    _exit (1);                  /* the parent reports its own hook error */
  return 0;
}

static int
step_create_hooks (struct rt_child *ch, struct cm_err **err)
{
  return rt_hooks_run (&ch->p->c->hooks[RT_HOOK_CREATE_CONTAINER],
                       "createContainer", ch->state_json, err);
}

/* sysctls go in before readonlyPaths makes /proc/sys read-only (runc's
 * order). */
static int
step_sysctl_hostname (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_config *c = ch->p->c;
  if (rt_child_sysctl (ch->p, err) < 0)
    return -1;
  if (c->hostname && *c->hostname
      && sethostname (c->hostname, strlen (c->hostname)) < 0)
    return cm_err_set (err, errno, "hostname: set \"%s\"", c->hostname);
  if (c->domainname && *c->domainname
      && setdomainname (c->domainname, strlen (c->domainname)) < 0)
    return cm_err_set (err, errno, "domainname: set \"%s\"", c->domainname);
  return rt_proc_make_cwd (c->process->cwd, err);
}

static int
step_process (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_process *pr = p->c->process;
  if (!p->o->no_new_keyring
      && syscall (SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, p->o->id)
             < 0
      && errno != ENOSYS && errno != EPERM && errno != EACCES)
    return cm_err_set (err, errno, "join a new session keyring");
  if (rt_proc_sched (pr, err) < 0
      || rt_personality_apply (p->personality, err) < 0)
    return -1;
  if (pr->terminal && rt_proc_terminal (pr, ch->pp->console_fd, err) < 0)
    return -1;
  if (ch->pp->console_fd >= 0)
    {
      close (ch->pp->console_fd);
      ch->pp->console_fd = -1;
    }
  return rt_proc_chdir (pr, err);
}

static bool
sealed_payload (const struct rt_child *ch)
{
  return ch->p->o->payload.kind == RT_PAYLOAD_FN_SEAL;
}

/* Landlock, rlimits, user and capabilities, umask (rt_proc_confine says
 * why in that order).  A sealed payload gets Landlock and the rlimits:
 * the rest is its seal (runtime/seal.c). */
static int
step_confine (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_process *pr = p->c->process;
  if (sealed_payload (ch))
    return rt_confine_child_landlock_only (p->confine, err) < 0
               ? -1
               : rt_proc_apply_rlimits (p->rlimits, p->rlimits_len, err);
  return rt_proc_confine (p->confine, p->rlimits, p->rlimits_len, p->caps,
                          pr, false, err);
}

/* Until the park; the order is the container's setup sequence. */
static const struct child_step setup_steps[] = {
  { "namespaces", step_namespaces },
  { "rootfs", rt_child_rootfs },
  { "mounts", rt_child_mounts_head },
  { "cgroup before cgroup mounts", step_cgroup_for_mounts },
  { "cgroup mounts", rt_child_mounts_tail },
  { "devices", rt_child_devices },
  { "cgroup", step_cgroup },
  { "prestart/createRuntime hooks", step_runtime_hooks },
  { "createContainer hooks", step_create_hooks },
  { "pivot_root", rt_child_pivot },
  { "sysctl, hostname, cwd", step_sysctl_hostname },
  { "masked and read-only paths", rt_child_finish_rootfs },
  { "process", step_process },
  { "payload", rt_payload_prepare },
  { "confinement", step_confine },
};

/* RT_ROOTFS_VIRTUAL: nothing to create, mount or pivot; the kernel cwd is
 * the exec directory (runtime/vroot-run.c). */
static const struct child_step virtual_steps[] = {
  { "cgroup", step_cgroup },
  { "prestart/createRuntime/createContainer hooks", step_runtime_hooks },
  { "process", rt_vroot_child_process },
  { "payload", rt_payload_prepare },
  { "confinement", rt_vroot_child_confine },
};

static int
step_start_hooks (struct rt_child *ch, struct cm_err **err)
{
  return rt_hooks_run (&ch->p->c->hooks[RT_HOOK_START_CONTAINER],
                       "startContainer", ch->state_json, err);
}

static int
step_seccomp (struct rt_child *ch, struct cm_err **err)
{
  if (sealed_payload (ch))
    return 0;
  return rt_confine_child_seccomp (ch->p->confine, err);
}

/* After `start`, right before the payload. */
static const struct child_step start_steps[] = {
  { "startContainer hooks", step_start_hooks },
  { "notify filter", rt_notify_child_step },
  { "seccomp", step_seccomp },
};

/* RT_ROOTFS_VIRTUAL: the trap filter first, so that the startContainer
 * hooks' paths resolve in the container (runtime-spec "POSIX-platform
 * Hooks"), which is the view: their execve and everything they open is
 * serviced by the supervisor. */
static const struct child_step virtual_start_steps[] = {
  { "notify filter", rt_notify_child_step },
  { "startContainer hooks", step_start_hooks },
  { "seccomp", step_seccomp },
  { "exec server", rt_vroot_exec_server },
};

static int
run_steps (struct rt_child *ch, const struct child_step *s, size_t n,
           struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    if (s[i].fn (ch, err) < 0)
      return -1;
  return 0;
}

/* The container must not hold what the runtime had open: above all the
 * flock()ed state directory, which would stay locked while it is parked.
 * Keeps stdio, the preserved fds and the fds the setup still needs. */
static void
close_inherited_fds (struct rt_child *ch)
{
  const struct rt_prepared *pp = ch->pp;
  const struct rt_rootfs_source *src = &ch->p->o->rootfs_source;
  _cleanup_free_ int *keep = xcalloc (12 + ARRAY_SIZE (pp->ns.fds)
                                      + pp->mount_fds_len, sizeof *keep);
  size_t n = 0;
  keep[n++] = ch->sync_fd;
  keep[n++] = pp->fifo_fd;
  keep[n++] = pp->status_fd;
  keep[n++] = pp->console_fd;
  keep[n++] = ch->timens_fd;
  keep[n++] = rt_confine_listener_fd (ch->p->confine);
  keep[n++] = rt_confine_pins_fd (ch->p->confine);
  keep[n++] = rt_notify_child_fd ();
  keep[n++] = rt_vroot_exec_fd ();
  keep[n++] = rt_vroot_pty_fd (true);
  keep[n++] = rt_vroot_pty_fd (false);
  keep[n++] = src->premade ? src->mount_fd : -1; /* attached, then closed */
  for (size_t i = 0; i < pp->ns.len; i++)
    keep[n++] = pp->ns.fds[i];
  /* overlays made from the host, moved into place by the mount steps */
  for (size_t i = 0; i < pp->mount_fds_len; i++)
    keep[n++] = pp->mount_fds[i];
  rt_close_fds_except (3 + ch->p->o->preserve_fds, keep, n);
}

/* Until execve the init is the host's runtime binary: non-dumpable, no
 * process without CAP_SYS_PTRACE over it -- a sibling container sharing its
 * pid namespace, whatever its Landlock annotations -- may open its
 * /proc/<pid>/exe, mem or environ (CVE-2019-5736).  execve makes it
 * dumpable again.  A non-dumpable process's /proc files are root's: an
 * unprivileged runtime could no longer write uid_map, gid_map and
 * oom_score_adj, so there the child waits for GO, which says they are
 * written (runc has the same window).  The time offsets file is opened
 * now, by the runtime's uid: after setresuid in a user namespace that maps
 * root elsewhere the child could not open it. */
static void
child_undumpable (struct rt_child *ch)
{
  /* Namespace-less: the supervisor, same uid and no CAP_SYS_PTRACE, reads
   * the init's memory from its first trapped call (the execve) on. */
  if (!ch->p->proc_by_parent && !rt_vroot_mode (ch->p))
    prctl (PR_SET_DUMPABLE, 0);
  if (ch->p->new_time)
    {
      ch->timens_fd = open ("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
      ch->timens_errno = errno;
    }
}

/* PDEATHSIG acts only on a death after it is set.  getppid() cannot tell
 * whether the runtime died before (it is 0 in a new pid namespace), but the
 * runtime's end of the sync socket closes with it: hung up means gone. */
static bool
runtime_gone (int sock)
{
  struct pollfd pf = { .fd = sock, .events = POLLRDHUP };
  return poll (&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLRDHUP));
}

/* From clone to GO: a clean signal mask, PDEATHSIG, and what the runtime
 * sends (the host pid, the cgroup path, the state for the hooks). */
static void
child_await_go (struct rt_child *ch)
{
  struct sync_msg m;
  sigset_t none;

  child_undumpable (ch);
  close_inherited_fds (ch);
  /* `run` blocks signals to forward them; the container starts clean. */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* If the runtime dies during setup, so does the half-made container. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (runtime_gone (ch->sync_fd))
    _exit (1);
  if (rt_sync_recv (ch->sync_fd, &m) <= 0 || m.kind != SYNC_GO)
    _exit (1);
  if (ch->p->proc_by_parent)
    prctl (PR_SET_DUMPABLE, 0);
  rt_confine_child_set_host_pid (ch->p->confine, m.pid);
  ch->cgroup_path = rt_sync_recv_str (ch->sync_fd);
  ch->state_json = rt_sync_recv_str (ch->sync_fd);
  if (ch->cgroup_path == NULL || ch->state_json == NULL)
    _exit (1);
  if (*ch->cgroup_path == '\0')
    {
      free (ch->cgroup_path);
      ch->cgroup_path = NULL;
    }
}

/* READY, then PDEATHSIG stays until the runtime has recorded the container
 * as created: a runtime killed before that takes this process along, so no
 * parked init is ever orphaned without a state.json naming it.  Then the
 * park: `start` writes one byte; EOF means the fifo went away. */
static void
child_park (struct rt_child *ch)
{
  struct sync_msg m;
  char byte;
  ssize_t r;

  /* Only the preserved fds survive execve. */
  syscall (SYS_close_range, 3 + ch->p->o->preserve_fds, ~0U,
           CLOSE_RANGE_CLOEXEC);
  if (rt_sync_send (ch->sync_fd, SYNC_READY, 0, NULL) < 0)
    _exit (1);
  if (rt_sync_recv (ch->sync_fd, &m) <= 0 || m.kind != SYNC_RELEASE)
    _exit (1);
  prctl (PR_SET_PDEATHSIG, 0);
  if (rt_sync_send (ch->sync_fd, SYNC_RELEASED, 0, NULL) < 0)
    _exit (1);
  close (ch->sync_fd);
  do
    r = read (ch->pp->fifo_fd, &byte, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1)
    _exit (1);
  close (ch->pp->fifo_fd);
}

void
rt_child_main (struct rt_child *ch)
{
  struct cm_err *err = NULL;

  child_await_go (ch);
  bool virt = rt_vroot_mode (ch->p);
  if (run_steps (ch, virt ? virtual_steps : setup_steps,
                 virt ? ARRAY_SIZE (virtual_steps) : ARRAY_SIZE (setup_steps),
                 &err) < 0)
    {
      rt_sync_send (ch->sync_fd, SYNC_ERROR, err->errno_, err->msg);
      _exit (1);
    }
  child_park (ch);
  if (run_steps (ch, virt ? virtual_start_steps : start_steps,
                 virt ? ARRAY_SIZE (virtual_start_steps)
                      : ARRAY_SIZE (start_steps), &err) < 0)
    rt_payload_fail (ch, err ? err->msg : "start failed");
  rt_payload_run (ch);
}
