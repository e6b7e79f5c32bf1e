/* Creating the container process (docs/architecture.md "Process model").
 *
 * Parent (the `create` process)            Child (the container init)
 * validate config -> plan                   .
 * cgroup created; clone3 into it  --------> waits for GO
 * uid/gid maps, oom_score_adj               .
 * GO + cgroup path + state JSON ---------->  setns, mounts, devices...
 * attach to the v1 hierarchies              (in parallel)
 * CGROUP_DONE ---------------------------->  (awaited before the first cgroup
 *                                            mount): unshare cgroup ns
 *                     <--------- HOOKS       (only if prestart/createRuntime)
 * prestart, createRuntime hooks              .
 * HOOKS_DONE ----------------------------->  createContainer hooks, pivot_root,
 *                                            masked/ro paths, sysctl, hostname,
 *                                            rlimits, tty, Landlock, user, caps
 *                     <--------- READY       parks: read(exec fifo)
 * writes pid file, exits                     `start` writes the fifo ->
 *                                            startContainer hooks, seccomp, execve
 *
 * Any child failure is sent as {kind, errno, text} and the child exits; the
 * parent kills and reaps it and removes the cgroup, so a failed create
 * leaves nothing behind.  Nothing here sleeps or polls. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "landlock.h"
#include "notify.h"

/* ---- validation: config -> plan ------------------------------------- */

static const struct
{
  const char *name;
  int flag;
} ns_types[] = {
  { "pid", CLONE_NEWPID },      { "network", CLONE_NEWNET },
  { "net", CLONE_NEWNET },      { "mount", CLONE_NEWNS },
  { "ipc", CLONE_NEWIPC },      { "uts", CLONE_NEWUTS },
  { "user", CLONE_NEWUSER },    { "cgroup", CLONE_NEWCGROUP },
  { "time", CLONE_NEWTIME },
};

/* Whether |fd| is the namespace the runtime itself is in (/proc/self/ns/
 * |name|): joining it changes nothing, and setting its state (hostname)
 * would change the host's. */
static bool
is_own_ns (int fd, const char *name)
{
  struct stat a;
  return fstat (fd, &a) == 0 && rt_ns_is (&a, "self", name) == 1;
}

/* hostname/domainname need a UTS namespace of the container's own: a new
 * one, or one joined by path (runc) that is not the runtime's. */
static int
check_uts (const struct rt_plan *p, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  const char *key = c->hostname && *c->hostname ? "hostname"
                    : c->domainname && *c->domainname ? "domainname" : NULL;
  int fd = rt_plan_joined_fd (p, CLONE_NEWUTS);
  if (key == NULL || p->new_uts)
    return 0;
  if (fd < 0)
    return rt_err_set (err, 0, "%s: needs a new \"uts\" namespace (or one "
                       "joined by path)", key);
  if (is_own_ns (fd, "uts"))
    return rt_err_set (err, 0, "%s: the \"uts\" namespace path is the "
                       "runtime's own UTS namespace: setting it would change "
                       "the host's %s", key, key);
  return 0;
}

static int
plan_namespaces (struct rt_plan *p, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  int seen = 0, user_fd = -1;

  for (size_t i = 0; i < ARRAY_SIZE (p->ns_fds); i++)
    p->ns_fds[i] = -1;
  for (size_t i = 0; i < c->namespaces_len; i++)
    {
      const struct rt_namespace *n = &c->namespaces[i];
      int flag = 0;
      for (size_t j = 0; j < ARRAY_SIZE (ns_types); j++)
        if (n->type && strcmp (n->type, ns_types[j].name) == 0)
          flag = ns_types[j].flag;
      if (flag == 0)
        return rt_err_set (err, 0, "linux.namespaces[%zu].type: unknown "
                           "namespace \"%s\"", i, n->type ? n->type : "");
      if (seen & flag)
        return rt_err_set (err, 0, "linux.namespaces[%zu]: duplicate \"%s\" "
                           "namespace", i, n->type);
      seen |= flag;
      if (n->path && *n->path)
        {
          int fd = open (n->path, O_RDONLY | O_CLOEXEC);
          if (fd < 0)
            return rt_err_set (err, errno, "linux.namespaces[%zu].path `%s`",
                               i, n->path);
          /* Checked here, naming the field, rather than as a bare EINVAL
           * from setns in the child. */
          if (ioctl (fd, NS_GET_NSTYPE) != flag)
            {
              close (fd);
              return rt_err_set (err, 0, "linux.namespaces[%zu].path `%s`: "
                                 "not a \"%s\" namespace", i, n->path,
                                 n->type);
            }
          if (flag == CLONE_NEWPID || flag == CLONE_NEWTIME)
            {
              /* Affects only children of this process: the container. */
              int r = setns (fd, flag);
              close (fd);
              if (r < 0)
                return rt_err_set (err, errno, "linux.namespaces[%zu]: join "
                                   "`%s`", i, n->path);
              continue;
            }
          if (flag == CLONE_NEWUSER)
            {
              user_fd = fd;
              continue;
            }
          p->ns_fds[p->ns_len] = fd;
          p->ns_types[p->ns_len++] = flag;
          continue;
        }
      switch (flag)
        {
        case CLONE_NEWUSER:
          p->new_user = true;
          break;
        case CLONE_NEWNS:
          p->new_mount = true;
          break;
        case CLONE_NEWPID:
          p->new_pid = true;
          break;
        case CLONE_NEWNET:
          p->new_net = true;
          break;
        case CLONE_NEWUTS:
          p->new_uts = true;
          break;
        case CLONE_NEWIPC:
          p->new_ipc = true;
          break;
        case CLONE_NEWCGROUP:
          p->new_cgroup = true;
          continue;             /* unshared after joining the cgroup */
        case CLONE_NEWTIME:
          p->new_time = true;
          continue;             /* unshared by the child, offsets first */
        default:
          break;
        }
      p->clone_flags |= flag;
    }
  /* The user namespace is joined first: the others are owned by it. */
  if (user_fd >= 0)
    {
      memmove (&p->ns_fds[1], &p->ns_fds[0], p->ns_len * sizeof (int));
      memmove (&p->ns_types[1], &p->ns_types[0], p->ns_len * sizeof (int));
      p->ns_fds[0] = user_fd;
      p->ns_types[0] = CLONE_NEWUSER;
      p->ns_len++;
    }
  p->host_mount_ns = !(seen & CLONE_NEWNS);
  if (p->new_user && (c->uid_mappings_len == 0 || c->gid_mappings_len == 0))
    return rt_err_set (err, 0, "linux.uidMappings/gidMappings: required with "
                       "a new user namespace");
  return check_uts (p, err);
}

/* A container given CAP_SYS_ADMIN usually means to mount (systemd, nested
 * containers), which Landlock forbids inside its domain: the program only
 * sees EPERM, so the runtime says why and what to do. */
static char *
mount_warning (const struct rt_plan *p)
{
  const struct rt_capabilities *caps = p->c->process->capabilities;
  const struct rt_ll_policy *ll = rt_confine_landlock_policy (p->confine);
  bool admin = false;
  for (size_t i = 0; caps && i < caps->effective_len; i++)
    admin |= strcmp (caps->effective[i], "CAP_SYS_ADMIN") == 0;
  if (!admin || ll == NULL || ll->state[RT_LL_P_FS] != RT_LL_ACTIVE)
    return NULL;
  return xstrdup ("the container has CAP_SYS_ADMIN, but Landlock forbids "
                  "mount, umount and pivot_root inside it: if it needs to "
                  "mount, add the annotation run.oci.sandlock.disable=fs, "
                  "or run the runtime with --sandlock-disable=fs (or "
                  "\"disable\": [\"fs\"] in /etc/sandlock-oci/config.json)");
}

static int
plan_new (const struct rt_create_opts *o, struct rt_plan *p,
          struct rt_err **err)
{
  const struct rt_config *c = o->config;
  memset (p, 0, sizeof *p);
  p->c = c;
  p->o = o;
  p->console_fd = -1;
  p->fifo_fd = -1;
  p->status_fd = -1;
  p->timens_fd = -1;
  if (c->process == NULL || c->process->args_len == 0)
    return rt_err_set (err, 0, "process.args: required and not empty");
  if (c->process->cwd == NULL || c->process->cwd[0] != '/')
    return rt_err_set (err, 0, "process.cwd: must be an absolute path");
  if (c->process->terminal && o->console_socket == NULL && !o->console_fd_set)
    return rt_err_set (err, 0, "process.terminal is true: --console-socket "
                       "is required");
  if (plan_namespaces (p, err) < 0 || rt_plan_sysctl (p, err) < 0
      || rt_personality_plan (c, &p->personality, err) < 0
      || rt_proc_plan_rlimits (c->process, &p->rlimits, &p->rlimits_len, err)
             < 0
      || rt_plan_mounts (p, err) < 0)
    return -1;
  {
    struct rt_caps_plan *cp = NULL;
    if (rt_caps_prepare (c->process, &cp, err) < 0)
      return -1;
    p->caps = cp;
  }
  {
    struct rt_confine *cf = NULL;
    if (rt_confine_prepare (c, &cf, err) < 0)
      return -1;
    rt_confine_set_container (cf, o->id, o->bundle);
    p->confine = cf;
    if (rt_confine_record_pins (cf, err) < 0)
      return -1;
  }
  return 0;
}

/* ---- child ------------------------------------------------------------ */

static void __attribute__ ((noreturn))
child_fail (int sock, struct rt_err **err)
{
  rt_sync_send (sock, SYNC_ERROR, (*err)->errno_, (*err)->msg);
  _exit (1);
}

static int
child_time_ns (struct rt_plan *p, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  char buf[128];
  int fd;
  if (p->timens_fd < 0)
    return rt_err_set (err, p->timens_errno, "linux.timeOffsets: open "
                       "/proc/self/timens_offsets");
  if (unshare (CLONE_NEWTIME) < 0)
    return rt_err_set (err, errno, "unshare time namespace");
  snprintf (buf, sizeof buf, "monotonic %lld %u\nboottime %lld %u\n",
            (long long) c->time_offsets[0].offset_secs,
            c->time_offsets[0].offset_nanosecs,
            (long long) c->time_offsets[1].offset_secs,
            c->time_offsets[1].offset_nanosecs);
  if (write (p->timens_fd, buf, strlen (buf)) < 0)
    return rt_err_set (err, errno, "linux.timeOffsets: write "
                       "/proc/self/timens_offsets");
  close (p->timens_fd);
  p->timens_fd = -1;
  fd = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWTIME) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return rt_err_set (err, e, "enter time namespace");
    }
  close (fd);
  return 0;
}

static int
child_namespaces (struct rt_plan *p, struct rt_err **err)
{
  for (size_t i = 0; i < p->ns_len; i++)
    if (setns (p->ns_fds[i], p->ns_types[i]) < 0)
      return rt_err_set (err, errno, "join namespace (type %#x)",
                         p->ns_types[i]);
  if (p->new_user || (p->ns_len && p->ns_types[0] == CLONE_NEWUSER))
    {
      /* Become root of the new user namespace when root is mapped. */
      if (setresgid (0, 0, 0) < 0 && errno != EINVAL)
        return rt_err_set (err, errno, "setresgid(0) in user namespace");
      if (setresuid (0, 0, 0) < 0 && errno != EINVAL)
        return rt_err_set (err, errno, "setresuid(0) in user namespace");
    }
  if (p->new_time && child_time_ns (p, err) < 0)
    return -1;
  return 0;
}

int
rt_child_cgroup_ready (struct rt_plan *p, struct rt_err **err)
{
  struct sync_msg m;
  if (p->in_cgroup)
    return 0;
  if (rt_sync_recv (p->sync_fd, &m) <= 0 || m.kind != SYNC_CGROUP_DONE)
    _exit (1);                  /* the runtime reports its own error */
  p->in_cgroup = true;
  if (p->new_cgroup && unshare (CLONE_NEWCGROUP) < 0)
    return rt_err_set (err, errno, "unshare cgroup namespace");
  return 0;
}

static int
child_sysctl_hostname (struct rt_plan *p, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  if (rt_child_sysctl (p, err) < 0)
    return -1;
  if (c->hostname && *c->hostname
      && sethostname (c->hostname, strlen (c->hostname)) < 0)
    return rt_err_set (err, errno, "hostname: set \"%s\"", c->hostname);
  if (c->domainname && *c->domainname
      && setdomainname (c->domainname, strlen (c->domainname)) < 0)
    return rt_err_set (err, errno, "domainname: set \"%s\"", c->domainname);
  return 0;
}

static int
child_setup (struct rt_plan *p, int sock, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  const struct rt_process *pr = c->process;
  struct sync_msg m;

  if (child_namespaces (p, err) < 0
      || (p->new_net && rt_child_loopback_up (err) < 0))
    return -1;
  if (setsid () < 0)
    return rt_err_set (err, errno, "setsid");
  if (rt_child_rootfs (p, err) < 0)
    return -1;
  if (c->hooks[RT_HOOK_PRESTART].len || c->hooks[RT_HOOK_CREATE_RUNTIME].len)
    {
      if (rt_sync_send (sock, SYNC_HOOKS, 0, NULL) < 0)
        return rt_err_set (err, errno, "sync with runtime");
      if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_HOOKS_DONE)
        _exit (1);              /* the parent reports its own hook error */
    }
  if (rt_hooks_run (&c->hooks[RT_HOOK_CREATE_CONTAINER], "createContainer",
                    p->state_json, err) < 0)
    return -1;
  /* sysctls go in before readonlyPaths makes /proc/sys read-only (runc's
   * order). */
  if (rt_child_pivot (p, err) < 0 || child_sysctl_hostname (p, err) < 0
      || rt_proc_make_cwd (pr->cwd, err) < 0
      || rt_child_finish_rootfs (p, err) < 0)
    return -1;
  if (!p->o->no_new_keyring
      && syscall (SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */,
                  p->o->id) < 0
      && errno != ENOSYS && errno != EPERM && errno != EACCES)
    return rt_err_set (err, errno, "join a new session keyring");
  if (rt_proc_sched (pr, err) < 0
      || rt_personality_apply (p->personality, err) < 0)
    return -1;
  if (pr->terminal && rt_proc_terminal (pr, p->console_fd, err) < 0)
    return -1;
  if (p->console_fd >= 0)
    {
      close (p->console_fd);
      p->console_fd = -1;
    }
  if (rt_proc_chdir (pr, err) < 0)
    return -1;
  if (rt_proc_resolve_exec (pr, &p->exec_path, err) < 0)
    return -1;
  p->envp = rt_proc_envp (pr);
  /* Landlock while the process still holds its capabilities (it needs
   * CAP_SYS_ADMIN or no_new_privs), then the user and capability switch. */
  if (rt_confine_child_landlock (p->confine, err) < 0)
    return -1;
  /* rlimits once the setup has opened its last fd (a low RLIMIT_NOFILE
   * must not fail the Landlock ruleset), before the capability drop (a
   * raise needs CAP_SYS_RESOURCE). */
  if (rt_proc_apply_rlimits (p->rlimits, p->rlimits_len, err) < 0)
    return -1;
  if (rt_caps_child_apply (p->caps, &pr->user, pr->no_new_privileges, err) < 0)
    return -1;
  if (pr->user.umask_present)
    umask (pr->user.umask & 0777);
  else
    umask (022);
  return 0;
}

/* The container must not hold what the runtime had open: above all the
 * flock()ed state directory, which would stay locked while it is parked.
 * Keeps stdio, the preserved fds and the fds the setup still needs. */
static void
close_inherited_fds (struct rt_plan *p, int sock)
{
  int keep[8 + ARRAY_SIZE (p->ns_fds)];
  size_t n = 0;
  keep[n++] = sock;
  keep[n++] = p->fifo_fd;
  keep[n++] = p->status_fd;
  keep[n++] = p->console_fd;
  keep[n++] = p->timens_fd;
  keep[n++] = rt_confine_listener_fd (p->confine);
  keep[n++] = rt_confine_pins_fd (p->confine);
  keep[n++] = rt_notify_child_fd ();
  for (size_t i = 0; i < p->ns_len; i++)
    keep[n++] = p->ns_fds[i];
  rt_close_fds_except (3 + p->o->preserve_fds, keep, n);
}

/* After `start`: the process will not run its program.  `start` reads the
 * message from the status fifo (whose write end closes on execve, which is
 * how it learns of success) and reports it; the process exits. */
static void __attribute__ ((noreturn))
start_fail (struct rt_plan *p, const char *msg)
{
  size_t n = strlen (msg);
  if (p->status_fd < 0 || write (p->status_fd, msg, n) != (ssize_t) n)
    fprintf (stderr, "sandlock-oci: %s\n", msg);
  _exit (127);
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
child_undumpable (struct rt_plan *p)
{
  if (!p->proc_by_parent)
    prctl (PR_SET_DUMPABLE, 0);
  if (p->new_time)
    {
      p->timens_fd = open ("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
      p->timens_errno = errno;
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

static void __attribute__ ((noreturn))
child_main (struct rt_plan *p, int sock)
{
  struct rt_err *err = NULL;
  struct sync_msg m;
  const struct rt_process *pr = p->c->process;
  char byte;
  ssize_t r;
  _cleanup_free_ char **argv = NULL;

  sigset_t none;

  child_undumpable (p);
  close_inherited_fds (p, sock);
  /* `run` blocks signals to forward them; the container starts clean. */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* If the runtime dies during setup, so does the half-made container. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (runtime_gone (sock))
    _exit (1);
  if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_GO)
    _exit (1);
  if (p->proc_by_parent)
    prctl (PR_SET_DUMPABLE, 0);
  rt_confine_child_set_host_pid (p->confine, m.pid);
  p->sync_fd = sock;
  p->cgroup_path = rt_sync_recv_str (sock);
  p->state_json = rt_sync_recv_str (sock);
  if (p->cgroup_path == NULL || p->state_json == NULL)
    _exit (1);
  if (*p->cgroup_path == '\0')
    {
      free (p->cgroup_path);
      p->cgroup_path = NULL;
    }
  if (child_setup (p, sock, &err) < 0)
    child_fail (sock, &err);

  argv = xcalloc (pr->args_len + 1, sizeof *argv);
  memcpy (argv, pr->args, pr->args_len * sizeof *argv);
  /* Only the preserved fds survive execve. */
  syscall (SYS_close_range, 3 + p->o->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
  if (rt_sync_send (sock, SYNC_READY, 0, NULL) < 0)
    _exit (1);
  /* PDEATHSIG stays until the runtime has recorded the container as
   * created: a runtime killed before that takes this process along, so
   * no parked init is ever orphaned without a state.json naming it. */
  if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_RELEASE)
    _exit (1);
  prctl (PR_SET_PDEATHSIG, 0);
  if (rt_sync_send (sock, SYNC_RELEASED, 0, NULL) < 0)
    _exit (1);
  close (sock);

  /* Parked: `start` writes one byte.  EOF means the fifo went away. */
  do
    r = read (p->fifo_fd, &byte, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1)
    _exit (1);
  close (p->fifo_fd);

  if (rt_hooks_run (&p->c->hooks[RT_HOOK_START_CONTAINER], "startContainer",
                    p->state_json, &err) < 0
      || rt_notify_child_install (&err) < 0
      || rt_confine_child_seccomp (p->confine, &err) < 0)
    start_fail (p, err ? err->msg : "start failed");
  execve (p->exec_path, argv, p->envp);
  {
    char msg[512];
    snprintf (msg, sizeof msg, "exec: \"%s\": %s", pr->args[0],
              strerror (errno));
    start_fail (p, msg);
  }
}

/* ---- parent ----------------------------------------------------------- */

static int
write_idmap (pid_t pid, const char *file, const struct rt_idmap *m, size_t n,
             struct rt_err **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/%s", (int) pid, file);
  _cleanup_free_ char *buf = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *nb = xasprintf ("%s%u %u %u\n", buf, m[i].container_id,
                            m[i].host_id, m[i].size);
      free (buf);
      buf = nb;
    }
  if (rt_write_file_at (AT_FDCWD, path, buf, strlen (buf), err) < 0)
    return rt_err_wrap (err, "linux.%s", strcmp (file, "uid_map") == 0
                        ? "uidMappings" : "gidMappings");
  return 0;
}

/* Moves |fd| above the preserved range so it cannot clobber a passed fd. */
static int
fd_above (int fd, int floor_)
{
  int n;
  if (fd >= floor_)
    return fd;
  n = fcntl (fd, F_DUPFD_CLOEXEC, floor_);
  close (fd);
  return n;
}

/* --cgroup-manager disabled (crun's): no cgroup, so nothing that needs
 * one may be asked for. */
static int
no_cgroup (const struct rt_cgroup_opts *co, struct rt_err **err)
{
  if (co->resources)
    return rt_err_set (err, 0, "linux.resources: cannot be applied with "
                       "--cgroup-manager disabled (no cgroup is made)");
  if (co->devices_required)
    return rt_err_set (err, 0, "devices: the container may mknod "
                       "(CAP_MKNOD, no user namespace) and device access "
                       "cannot be restricted with --cgroup-manager disabled");
  return 0;
}


static struct rt_cgroup_opts
cgroup_opts (const struct rt_plan *p)
{
  struct rt_cgroup_opts co = { .cgroups_path = p->c->cgroups_path,
                               .id = p->o->id, .systemd = p->o->systemd_cgroup,
                               .resources = p->c->resources,
                               .devices_required
                               = rt_devices_required (p->c) };
  return co;
}

static int
progress (const struct rt_plan *p, const char *cgroup_path, pid_t pid,
          uint64_t start_time, bool ready, struct rt_err **err)
{
  struct rt_progress pr = { .cgroup_path = cgroup_path, .pid = pid,
                            .start_time = start_time, .ready = ready };
  pr.supervisor_pid = rt_notify_pid (&pr.supervisor_start_time);
  return p->o->progress ? p->o->progress (p->o->progress_ud, &pr, err) : 0;
}

/* Parked: the caller records the container as created, with what exec
 * needs (the Landlock pins), before the child drops PDEATHSIG. */
static int
progress_ready (const struct rt_plan *p, struct rt_cgroup *cg, pid_t pid,
                uint64_t start_time, const struct rt_created *out,
                struct rt_err **err)
{
  struct rt_progress pr = { .cgroup_path = cg ? rt_cgroup_path (cg) : NULL,
                            .pid = pid, .start_time = start_time,
                            .ready = true,
                            .landlock_pins = out->landlock_pins,
                            .landlock_pins_len = out->landlock_pins_len };
  pr.supervisor_pid = rt_notify_pid (&pr.supervisor_start_time);
  return p->o->progress ? p->o->progress (p->o->progress_ud, &pr, err) : 0;
}

/* The cgroup exists before the child, so the child can be born in it; its
 * path is recorded before the first directory is made. */
static int
make_cgroup (struct rt_plan *p, struct rt_cgroup **cg, struct rt_err **err)
{
  const struct rt_config *c = p->c;
  struct rt_cgroup_opts co = cgroup_opts (p);
  _cleanup_free_ char *path = NULL;
  if (p->o->no_cgroup)
    return no_cgroup (&co, err);
  if (rt_cgroup_resolve (&co, &path, err) < 0
      || progress (p, path, 0, 0, false, err) < 0)
    return -1;
  if (rt_cgroup_create (&co, 0, cg, err) == 0)
    return 0;
  /* Rootless without a delegated cgroup: like runc, go on without one
   * unless the config asks for limits that need it. */
  bool denied = (*err)->errno_ == EACCES || (*err)->errno_ == EPERM
                || (*err)->errno_ == EROFS;
  if (!denied || geteuid () == 0 || co.devices_required)
    return -1;
  if (c->resources)
    return rt_err_wrap (err, "linux.resources need a cgroup this user may "
                        "write (rootless without delegation)");
  rt_err_free (err);
  *cg = NULL;
  return 0;
}

/* clone() with fork semantics: the namespaces exist from the first
 * instruction of the child, and it is pid 1 of a new pid namespace.  With a
 * cgroup v2 directory, clone3(CLONE_INTO_CGROUP) makes it born there: a
 * migration's first occurrence costs an RCU grace period (~10 ms here). */
static pid_t
clone_child (struct rt_plan *p, struct rt_cgroup *cg)
{
  struct rt_err *e = NULL;
  int cgfd = cg ? rt_cgroup_clone_fd (cg, &e) : -1;
  pid_t pid;
  rt_err_free (&e);
  p->born_in_cgroup = false;
  if (cgfd >= 0)
    {
      struct clone_args ca = { .flags = (uint64_t) p->clone_flags
                                        | CLONE_INTO_CGROUP,
                               .exit_signal = SIGCHLD,
                               .cgroup = (uint64_t) cgfd };
      pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
      close (cgfd);
      if (pid >= 0)
        {
          p->born_in_cgroup = pid > 0;
          return pid;
        }
      if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
        return -1;
    }
  return (pid_t) syscall (SYS_clone, (unsigned long) p->clone_flags | SIGCHLD,
                          0, 0, 0, 0);
}

/* An ordinary user without a user namespace in the config gets EPERM from
 * the kernel and nothing more: say what to do instead. */
static int
clone_failed (const struct rt_plan *p, int e, struct rt_err **err)
{
  if (e == EPERM && geteuid () != 0 && !p->new_user
      && (p->ns_len == 0 || p->ns_types[0] != CLONE_NEWUSER))
    {
      rt_err_set (err, 0, "clone (namespaces %#x): %s: creating namespaces "
                  "needs root or a user namespace: use `sandlock-oci spec "
                  "--rootless`", p->clone_flags, strerror (e));
      (*err)->errno_ = e;
      return -1;
    }
  return rt_err_set (err, e, "clone (namespaces %#x)", p->clone_flags);
}

static int
parent_setup (struct rt_plan *p, pid_t pid, int sock, struct rt_cgroup **cg,
              struct rt_err **err)
{
  const struct rt_create_opts *o = p->o;
  const struct rt_config *c = p->c;
  _cleanup_free_ char *state = NULL;
  struct sync_msg m;
  bool child_hooks;
  int r;

  if (p->new_user)
    {
      /* Without CAP_SETGID over the parent namespace the kernel takes a
       * gid_map only once setgroups is denied (user_namespaces(7)). */
      if (geteuid () != 0)
        {
          char path[64];
          snprintf (path, sizeof path, "/proc/%d/setgroups", (int) pid);
          if (rt_write_file_at (AT_FDCWD, path, "deny", 4, err) < 0)
            return rt_err_wrap (err, "rootless user namespace");
        }
      if (write_idmap (pid, "uid_map", c->uid_mappings, c->uid_mappings_len,
                       err) < 0
          || write_idmap (pid, "gid_map", c->gid_mappings, c->gid_mappings_len,
                          err) < 0)
        return -1;
    }
  if (c->process->oom_score_adj_present)
    {
      char path[64], val[16];
      snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int) pid);
      snprintf (val, sizeof val, "%d", c->process->oom_score_adj);
      if (rt_write_file_at (AT_FDCWD, path, val, strlen (val), err) < 0)
        return rt_err_wrap (err, "process.oomScoreAdj");
    }
  state = o->state_json ? o->state_json (o->state_json_ud, pid, "creating")
                        : xstrdup ("{}");
  /* The child needs the state only for the hooks it runs itself. */
  child_hooks = c->hooks[RT_HOOK_CREATE_CONTAINER].len
                || c->hooks[RT_HOOK_START_CONTAINER].len;
  if (rt_sync_send_go (sock, pid) < 0
      || rt_sync_send_str (sock, *cg ? rt_cgroup_path (*cg) : NULL) < 0
      || rt_sync_send_str (sock, child_hooks ? state : NULL) < 0)
    return rt_sync_fail (sock, "send setup to container process", err);
  /* The first migration into a v1 hierarchy waits for an RCU grace period:
   * the child does its first mounts meanwhile, and waits for CGROUP_DONE
   * only where it needs to be in its cgroup. */
  if (*cg && rt_cgroup_attach (*cg, pid, p->born_in_cgroup, err) < 0)
    {
      /* A child that failed first has its own, better, error waiting. */
      rt_sync_child_error (sock, err);
      return -1;
    }
  if (rt_sync_send (sock, SYNC_CGROUP_DONE, 0, NULL) < 0)
    return rt_sync_fail (sock, "sync with container process", err);
  for (;;)
    {
      r = rt_sync_recv (sock, &m);
      if (r <= 0)
        {
          if (r < 0 && rt_sync_child_error (sock, err) < 0)
            return -1;
          return rt_err_set (err, 0, "container process exited during setup");
        }
      switch (m.kind)
        {
        case SYNC_HOOKS:
          if (rt_hooks_run (&c->hooks[RT_HOOK_PRESTART], "prestart", state,
                            err) < 0
              || rt_hooks_run (&c->hooks[RT_HOOK_CREATE_RUNTIME],
                               "createRuntime", state, err) < 0)
            return -1;
          if (rt_sync_send (sock, SYNC_HOOKS_DONE, 0, NULL) < 0)
            return rt_sync_fail (sock, "sync with container process", err);
          break;
        case SYNC_READY:
          return 0;
        case SYNC_ERROR:
          errno = 0;
          return rt_err_set (err, 0, "%s", m.msg);
        default:
          return rt_err_set (err, 0, "container process: bad sync message %d",
                             m.kind);
        }
    }
}

/* The create is recorded: the child drops PDEATHSIG and says so, before
 * this process may exit (which would otherwise kill it). */
static int
release_child (int sock, struct rt_err **err)
{
  struct sync_msg m;
  if (rt_sync_send (sock, SYNC_RELEASE, 0, NULL) < 0)
    return rt_err_set (err, errno, "sync with container process");
  if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_RELEASED)
    return rt_err_set (err, 0, "container process exited during setup");
  return 0;
}

int
rt_container_create (const struct rt_create_opts *o, struct rt_created *out,
                     struct rt_err **err)
{
  struct rt_plan p;
  struct rt_cgroup *cg = NULL;
  int sv[2] = { -1, -1 };
  int floor_ = 3 + (o->preserve_fds > 0 ? o->preserve_fds : 0);
  int ret = -1;
  pid_t pid = -1;
  uint64_t start_time;

  if (plan_new (o, &p, err) < 0)
    goto out;
  if (o->config->process->terminal && o->console_fd_set)
    {
      p.console_fd = fcntl (o->console_fd, F_DUPFD_CLOEXEC, floor_);
      if (p.console_fd < 0)
        {
          rt_err_set (err, errno, "console socket");
          goto out;
        }
    }
  else if (o->console_socket && o->config->process->terminal)
    {
      p.console_fd = rt_connect_console (o->console_socket, err);
      if (p.console_fd < 0)
        goto out;
      p.console_fd = fd_above (p.console_fd, floor_);
    }
  p.fifo_fd = open (o->exec_fifo, O_RDWR | O_CLOEXEC);
  if (p.fifo_fd < 0)
    {
      rt_err_set (err, errno, "open exec fifo `%s`", o->exec_fifo);
      goto out;
    }
  p.fifo_fd = fd_above (p.fifo_fd, floor_);
  if (o->start_status)
    {
      p.status_fd = open (o->start_status, O_RDWR | O_CLOEXEC);
      if (p.status_fd < 0)
        {
          rt_err_set (err, errno, "open start status fifo `%s`",
                      o->start_status);
          goto out;
        }
      p.status_fd = fd_above (p.status_fd, floor_);
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      rt_err_set (err, errno, "socketpair");
      goto out;
    }
  sv[0] = fd_above (sv[0], floor_);
  sv[1] = fd_above (sv[1], floor_);
  for (size_t i = 0; i < p.ns_len; i++)
    p.ns_fds[i] = fd_above (p.ns_fds[i], floor_);
  p.proc_by_parent = geteuid () != 0
                     && (p.new_user
                         || o->config->process->oom_score_adj_present);
  if (make_cgroup (&p, &cg, err) < 0 || rt_notify_spawn (o, err) < 0)
    goto out;
  pid = clone_child (&p, cg);
  if (pid < 0)
    {
      clone_failed (&p, errno, err);
      goto out;
    }
  if (pid == 0)
    {
      close (sv[0]);
      child_main (&p, sv[1]);
    }
  close (sv[1]);
  sv[1] = -1;
  start_time = rt_proc_start_time (pid);
  if (progress (&p, cg ? rt_cgroup_path (cg) : NULL, pid, start_time, false,
                err) < 0
      || rt_notify_parent (pid, cg ? rt_cgroup_path (cg) : NULL, err) < 0
      || parent_setup (&p, pid, sv[0], &cg, err) < 0
      || rt_confine_take_pins (p.confine, &out->landlock_pins,
                               &out->landlock_pins_len, err) < 0
      || progress_ready (&p, cg, pid, start_time, out, err) < 0
      || release_child (sv[0], err) < 0)
    goto out;
  out->pid = pid;
  out->start_time = start_time;
  out->cgroup_path = cg ? xstrdup (rt_cgroup_path (cg)) : NULL;
  out->warning = mount_warning (&p);
  out->supervisor_pid = rt_notify_pid (&out->supervisor_start_time);
  pid = -1;
  ret = 0;
out:
  if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  rt_notify_end (ret == 0);
  if (cg)
    {
      if (ret < 0)
        {
          struct rt_err *e2 = NULL;
          rt_cgroup_destroy (cg, &e2);
          rt_err_free (&e2);
        }
      rt_cgroup_free (cg);
    }
  if (sv[0] >= 0)
    close (sv[0]);
  if (p.fifo_fd >= 0)
    close (p.fifo_fd);
  if (p.status_fd >= 0)
    close (p.status_fd);
  if (p.console_fd >= 0)
    close (p.console_fd);
  rt_confine_free (p.confine);
  rt_caps_free (p.caps);
  rt_plan_free (&p);
  return ret;
}

/* Reads the status fifo to EOF: empty when the container's write end went
 * away with execve, its message when it failed first. */
static int
wait_started (int sfd, struct rt_err **err)
{
  char msg[1024];
  size_t n = 0;
  ssize_t r;

  if (fcntl (sfd, F_SETFL, 0) < 0)
    return rt_err_set (err, errno, "start status fifo");
  for (;;)
    {
      r = read (sfd, msg + n, sizeof msg - 1 - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0 || (n += (size_t) r) == sizeof msg - 1)
        break;
    }
  if (r < 0)
    return rt_err_set (err, errno, "read start status fifo");
  if (n == 0)
    return 0;
  msg[n] = '\0';
  return rt_err_set (err, 0, "%s", msg);
}

int
rt_container_start (const char *exec_fifo, const char *start_status,
                    struct rt_err **err)
{
  _cleanup_fd_ int sfd = -1, fd = -1;

  /* Opened before the fifo is written: a message written by a process
   * that then exits would be lost with the last open reference. */
  if (start_status)
    {
      sfd = open (start_status, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (sfd < 0 && errno != ENOENT)   /* ENOENT: made by an older runtime */
        return rt_err_set (err, errno, "open start status fifo");
    }
  fd = open (exec_fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENXIO)
        return rt_err_set (err, ENXIO, "container process is not waiting to "
                           "start");
      return rt_err_set (err, errno, "open exec fifo");
    }
  if (write (fd, "0", 1) != 1)
    return rt_err_set (err, errno, "write exec fifo");
  return sfd >= 0 ? wait_started (sfd, err) : 0;
}

/* For `features`: the linux.namespaces types plan_namespaces() accepts
 * ("net" is an alias of "network" and not listed); NULL past the end. */
const char *
rt_feature_namespace (size_t i)
{
  for (size_t j = 0; j < ARRAY_SIZE (ns_types); j++)
    if (strcmp (ns_types[j].name, "net") != 0 && i-- == 0)
      return ns_types[j].name;
  return NULL;
}
