/* RT_ROOTFS_VIRTUAL: a create with no namespace, where the container's
 * filesystem is the view a notify supervisor draws (docs/nsless.md).  The
 * plan refuses what cannot be had without privilege, naming the field;
 * the prepare stage builds the view and rewrites the Landlock policy onto
 * its host objects; the supervisor is the notify seam's, with
 * vr_sup_answer as its handler; the init's setup is its own short
 * sequence.  One create per process, so the state lives here, as the
 * notify seam's does in notify.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "landlock.h"
#include "vroot-domain.h"
#include "vroot-run.h"
#include "vroot-setup.h"
#include "vroot-thread.h"
#include "vroot-xs.h"

static struct vr_setup setup;
static bool active;
static const struct rt_config *config;  /* the envp's length, at the end */
static char *rootfs, *state, *exec_path;
static const struct rt_ll_policy *policy;      /* the container's */
static char **envp;             /* process.env, HOME from the view */
static int xs_fd = -1;          /* the exec server's listening socket */
/* process.terminal: a pty of the host's devpts, opened by the runtime (the
 * init, born in the supervisor's domain, cannot open /dev/ptmx). */
static int pty_master = -1, pty_slave = -1;

bool
rt_vroot_mode (const struct rt_plan *p)
{
  return p->o->rootfs_source.kind == RT_ROOTFS_VIRTUAL;
}

static bool
identity (const struct rt_idmap *m, size_t n, uint32_t id)
{
  return n == 0 || (n == 1 && m[0].container_id == id && m[0].host_id == id);
}

/* What needs a privilege the mode does not have: refused, named. */
int
rt_vroot_plan (struct rt_plan *p, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  const struct rt_process *pr = c->process;
  if (rt_check_rootfs (p->o->rootfs, err) < 0)
    return -1;
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (c->namespaces[i].path && *c->namespaces[i].path)
      return cm_err_set (err, 0, "linux.namespaces[%zu].path: joining a "
                         "namespace needs privileges the namespace-less "
                         "mode does not have", i);
  if (!identity (c->uid_mappings, c->uid_mappings_len, getuid ())
      || !identity (c->gid_mappings, c->gid_mappings_len, getgid ()))
    return cm_err_set (err, 0, "linux.uidMappings/gidMappings: only the "
                       "caller's own ids in namespace-less mode");
  if (pr->user.uid != getuid () || pr->user.gid != getgid ())
    return cm_err_set (err, 0, "process.user: %u:%u, but namespace-less mode "
                       "runs as the caller (%u:%u)", pr->user.uid,
                       pr->user.gid, getuid (), getgid ());
  if (c->devices_len)
    return cm_err_set (err, 0, "linux.devices: making device nodes needs "
                       "privileges the namespace-less mode does not have");
  if (c->sysctl_len)
    return cm_err_set (err, 0, "linux.sysctl: there is no namespace to set "
                       "it in (namespace-less mode)");
  if (vr_caps_check (c, err) < 0)
    return -1;
  p->host_mount_ns = true;
  return 0;
}

static char *
dir_of (const char *path)
{
  char *d = xstrdup (path), *s = strrchr (d, '/');
  if (s && s != d)
    *s = '\0';
  return d;
}

static int
handle (void *ud, int listener, const struct seccomp_notif *req,
        struct seccomp_notif_resp *resp)
{
  return vr_sup_answer (ud, listener, req, resp);
}

/* The supervisor is forked after the view is built and keeps its pinned
 * fds (ops.keep_fds): the same numbers, the same objects, nothing to
 * build twice. */
/* The handler keeps its last caller's credentials across calls
 * (vroot-cred.c): the supervisor's own again before it acts on its own. */
static void
idle (void *ud)
{
  vr_cred_leave ();
}

static struct rt_notify_ops ops = { .handle = handle, .idle = idle,
                                    .log_fd = -1, .switch_creds = true };
static int *keep;

static void
keep_view_fds (void)
{
  size_t n = 0;
  free (keep);
  keep = xcalloc (setup.v.n + 1, sizeof *keep);
  for (size_t i = 0; i < setup.v.n; i++)
    keep[n++] = setup.v.e[i].fd;
  keep[n++] = setup.exec_dir;
  ops.keep_fds = keep;
  ops.keep_fds_len = n;
}

static char *lookup (const struct rt_process *pr, const char *name);

/* The container's bounding set: every capability a process of it (init or
 * exec'd) can hold, for the supervisor to keep permitted
 * (rt_notify_ops.keep_permitted). */
static int
container_caps (const struct rt_process *pr, uint64_t *mask,
                struct cm_err **err)
{
  struct rt_caps_plan *cp;
  uint64_t e, pm, i, a;
  bool noroot;
  if (rt_caps_prepare (pr, &cp, err) < 0)
    return -1;
  rt_caps_plan_masks (cp, mask, &e, &pm, &i, &a, &noroot);
  rt_caps_free (cp);
  return 0;
}

/* rt_proc_envp on the view's /etc/passwd (not a FIFO: O_NONBLOCK). */
static char **
view_envp (const struct rt_process *pr)
{
  static const struct vr_ctx none = { 0 };
  struct vr_path r;
  int fd = -1;
  if (vr_resolve (&setup.v, &none, "/", "/etc/passwd", 0, &r) == 0 && r.ent)
    fd = vr_open (&r, O_RDONLY | O_NONBLOCK, 0);
  char **e = rt_proc_envp_fd (pr, fd);
  if (fd >= 0)
    close (fd);
  return e;
}

/* The view under the state directory (beside the exec fifo), the Landlock
 * policy on its host objects, the supervisor's operations. */
int
rt_vroot_prepare (struct rt_plan *p, struct rt_create_opts *o,
                  struct cm_err **err)
{
  const char *a0 = p->c->process->args_len ? p->c->process->args[0] : "";
  /* The policy the confine plan built is this create's own; only its
   * rules change, from container paths to the view's host objects. */
  struct rt_ll_policy *ll
      = (struct rt_ll_policy *) rt_confine_landlock_policy (p->confine);
  config = p->c;
  policy = ll;
  rootfs = xstrdup (o->rootfs);
  state = dir_of (o->exec_fifo);
  /* Landlock is the boundary of the view: without its fs protection a
   * wrong view (or an unserviced call) would be the host. */
  if (ll->state[RT_LL_P_FS] != RT_LL_ACTIVE)
    return cm_err_set (err, 0, "namespace-less mode needs Landlock's fs "
                       "protection (it is the boundary of the view): "
                       "run.oci.sandlock.disable/degrade=fs cannot be used "
                       "with it, and the kernel must have Landlock");
  if (vr_setup_prepare (&setup, p->c, rootfs, state, err) < 0)
    return -1;
  active = true;
  if (vr_ll_translate (&setup.v, ll, err) < 0)
    return -1;
  /* The pid and network namespaces config.json lists are not made: the
   * container shares the runtime's, so the IPC scopes stay, as for a
   * config that lists none (docs/security.md "IPC scopes and
   * namespaces").  Without this, a container could signal every process
   * of its user on the host. */
  vr_inet_close (&setup.sup, ll);
  ll->pidns_private = ll->netns_private = false;
  if (ll->state[RT_LL_P_SCOPE_SIGNAL] == RT_LL_ACTIVE)
    ll->scoped |= RT_LL_SCOPE_SIGNAL;
  if (ll->state[RT_LL_P_SCOPE_ABSTRACT_UNIX] == RT_LL_ACTIVE)
    ll->scoped |= RT_LL_SCOPE_ABSTRACT_UNIX;
  /* HOME from the container's /etc/passwd, which is the view's: the
   * init's own open would reach the host's (or be refused by the
   * supervisor's Landlock domain, which it is born in). */
  envp = view_envp (p->c->process);
  /* Bound here, by the runtime: the path is outside the view. */
  xs_fd = vr_xs_listen (setup.dir, 3 + o->preserve_fds, err);
  if (xs_fd < 0)
    return -1;
  /* args[0] is looked up now: the init closes the view's fds. */
  exec_path = strchr (a0, '/') ? xstrdup (a0) : lookup (p->c->process, a0);
  if (o->payload.kind == RT_PAYLOAD_EXEC && exec_path == NULL)
    return cm_err_set (err, 0, "exec: \"%s\": executable file not found "
                       "in $PATH", a0);
  if (p->c->process->terminal
      && rt_proc_pty (p->c->process, &pty_master, &pty_slave, err) < 0)
    return -1;
  keep_view_fds ();
  ops.syscalls = setup.trapped;
  ops.syscalls_len = setup.ntrapped;
  ops.deny = vr_denied_calls;
  ops.deny_len = vr_denied_calls_len;
  if (container_caps (p->c->process, &ops.keep_permitted, err) < 0)
    return -1;
  ops.deny_ne = vr_deny_ne_list (p->c, &ops.deny_ne_len);
  ops.ud = &setup.sup;
  o->notify = &ops;
  return 0;
}

/* The supervisor's domain: the view's grants (vr_landlock_self), the
 * container's TCP ports, and what the supervisor itself needs: /dev/null
 * for its stdio, the container's cgroup (its watcher's cgroup.kill;
 * the init is cloned into it), and the init's terminal (/dev/tty). */
int
rt_vroot_spawn (int (*fn) (void *, struct cm_err **), void *ud,
                struct rt_cgroup *cg, struct cm_err **err)
{
  static struct vr_net net;
  static struct vr_ll_extra extra[3];
  size_t n = 0;
  net = (struct vr_net) {
    .tcp = policy->handled_net != 0, .handled = policy->handled_net,
    .bind = policy->bind_ports, .nbind = policy->bind_ports_len,
    .connect = policy->connect_ports, .nconnect = policy->connect_ports_len };
  int null = open ("/dev/null", O_PATH | O_CLOEXEC);
  if (null < 0)
    return cm_err_set (err, errno, "namespace-less mode: open /dev/null");
  extra[n++] = (struct vr_ll_extra) { null, RT_LL_FS_READ_FILE
                                      | RT_LL_FS_WRITE_FILE, "/dev/null" };
  /* The v2 directory (a hybrid host's v1 hierarchies are not granted:
   * there the watcher falls back to the init's pidfd, and delete — the
   * runtime, unconfined — kills through them). */
  struct cm_err *e = NULL;
  int cgfd = cg ? rt_cgroup_clone_fd (cg, &e) : -1;
  cm_err_free (&e);
  /* TRUNCATE too: cgroup files are written O_TRUNC (cm_write_file_at),
   * which Landlock checks as a truncation. */
  if (cgfd >= 0)
    extra[n++] = (struct vr_ll_extra) { cgfd, RT_LL_FS_READ_FILE
                                        | RT_LL_FS_WRITE_FILE
                                        | RT_LL_FS_TRUNCATE
                                        | RT_LL_FS_READ_DIR,
                                        "the container's cgroup" };
  /* process.terminal: the init's own pty, which the supervisor reopens
   * for the container's open of /dev/tty (vroot-devtty.c): that one
   * inode, with the ioctls the init's fds 0-2 of it have already. */
  char link[64];
  snprintf (link, sizeof link, "/proc/self/fd/%d", pty_slave);
  int tty = pty_slave < 0 ? -1 : open (link, O_PATH | O_CLOEXEC);
  if (tty >= 0)
    extra[n++] = (struct vr_ll_extra) { tty, RT_LL_FS_READ_FILE
                                        | RT_LL_FS_WRITE_FILE
                                        | RT_LL_FS_IOCTL_DEV,
                                        "the container's terminal" };
  int r = vr_domain_fork (&setup.v, setup.exec_dir, &net, extra, n, fn, ud,
                          err);
  for (size_t i = 0; i < n; i++)
    close (extra[i].fd);
  return r;
}

void
rt_vroot_end (void)
{
  vr_domain_release ();
  if (active)
    vr_setup_free (&setup);
  active = false;
  free (rootfs), free (state), free (exec_path), free (keep);
  if (xs_fd >= 0)
    close (xs_fd);
  xs_fd = -1;
  if (pty_master >= 0)
    close (pty_master), close (pty_slave);
  pty_master = pty_slave = -1;
  if (envp)
    free (envp[config && config->process ? config->process->env_len : 0]);
  free (envp);
  envp = NULL;
  rootfs = state = exec_path = NULL;
  keep = NULL;
  ops.keep_fds = NULL, ops.keep_fds_len = 0;
}

/* The init's process step: what step_process does, but the kernel cwd is
 * the exec directory (process.cwd is virtual: the supervisor's). */
int
rt_vroot_child_process (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_process *pr = p->c->process;
  if (rt_proc_sched (pr, err) < 0
      || rt_personality_apply (p->personality, err) < 0)
    return -1;
  /* Orphans stay under the init, as in a pid namespace: ps, kill and
   * delete find every process of the container among its descendants. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "namespace-less mode: subreaper");
  /* A session of its own, as the namespaced init's (child.c): left in the
   * caller's, the container has the caller's terminal as its controlling
   * tty, and TIOCSTI on it types into the host's shell (nsless_caps.bats;
   * the spec's pid namespace is not made). */
  if (setsid () < 0)
    return cm_err_set (err, errno, "namespace-less mode: setsid");
  /* process.terminal: the runtime's pty, as the namespaced init's step
   * (child.c) but with no devpts of the container's: the slave is an fd
   * of the host's devpts, owned by the caller already (no chown). */
  if (pr->terminal
      && rt_proc_pty_attach (pty_master, pty_slave, ch->pp->console_fd,
                             err) < 0)
    return -1;
  if (pty_master >= 0)
    close (pty_master), close (pty_slave);
  pty_master = pty_slave = -1;
  if (ch->pp->console_fd >= 0)
    close (ch->pp->console_fd);
  ch->pp->console_fd = -1;
  if (chdir (setup.exec_path) < 0)
    return cm_err_set (err, errno, "namespace-less mode: chdir `%s`",
                       setup.exec_path);
  /* Without CAP_SYS_ADMIN, Landlock (next step) and seccomp need it: the
   * mode always runs with no_new_privs, whatever process.noNewPrivileges
   * says. */
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "namespace-less mode: no_new_privs");
  return 0;
}

/* Landlock, rlimits, umask; the user and capability switch only for root:
 * an ordinary caller has no capability to give or drop (the container
 * runs with the caller's own, none), and process.user is the caller
 * (rt_vroot_plan). */
int
rt_vroot_child_confine (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_plan *p = ch->p;
  const struct rt_process *pr = p->c->process;
  return rt_proc_confine (p->confine, p->rlimits, p->rlimits_len, p->caps,
                          pr, geteuid () != 0, err);
}

/* process.args[0] looked up in the view: a name through PATH, each
 * candidate resolved as the supervisor will; the execve then names the
 * virtual path. */
static char *
lookup (const struct rt_process *pr, const char *name)
{
  static const struct vr_ctx none = { 0 };
  const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                     "/sbin:/bin";
  for (size_t i = 0; i < pr->env_len; i++)
    if (cm_startswith (pr->env[i], "PATH="))
      path = pr->env[i] + 5;
  _cleanup_free_ char *dup = xstrdup (path);
  char *save = NULL;
  for (char *d = strtok_r (dup, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      char *cand = xasprintf ("%s/%s", *d ? d : ".", name);
      struct vr_path r;
      if (vr_resolve (&setup.v, &none, setup.cwd, cand, 0, &r) == 0
          && r.ent && r.type == S_IFREG)
        return cand;
      free (cand);
    }
  return NULL;
}

int
rt_vroot_payload_prepare (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_process *pr = ch->p->c->process;
  ch->exec_path = xstrdup (exec_path);
  ch->envp = envp;
  envp = NULL;
  ch->argv = xcalloc (pr->args_len + 1, sizeof *ch->argv);
  memcpy (ch->argv, pr->args, pr->args_len * sizeof *ch->argv);
  return 0;
}

int
rt_vroot_exec_fd (void)
{
  return xs_fd;
}

int
rt_vroot_pty_fd (bool master)
{
  return master ? pty_master : pty_slave;
}

/* The last step before the payload: everything the container's processes
 * have is in place, so the exec server forked now has it too. */
int
rt_vroot_exec_server (struct rt_child *ch, struct cm_err **err)
{
  int fd = xs_fd;
  xs_fd = -1;
  return fd < 0 ? 0 : vr_xs_spawn (fd, err);
}
