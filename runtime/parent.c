/* The parent's side of a create (the runtime process): the cgroup made
 * before the child so it can be born in it, clone(), the id maps and
 * oom_score_adj, GO with the cgroup path and state, the cgroup placement
 * while the child mounts, the prestart/createRuntime hooks on the child's
 * request, and the progress reports that let the caller record what a
 * killed create would leave behind.  docs/architecture.md "Process model". */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/util.h"
#include "confine.h"
#include "notify.h"
#include "internal.h"
#include "vroot-run.h"

static int
write_idmap (pid_t pid, const char *file, const struct rt_idmap *m, size_t n,
             struct cm_err **err)
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
  if (cm_write_file_at (AT_FDCWD, path, buf, strlen (buf), err) < 0)
    return cm_err_wrap (err, "linux.%s", strcmp (file, "uid_map") == 0
                        ? "uidMappings" : "gidMappings");
  return 0;
}

/* --cgroup-manager disabled (crun's): no cgroup, so nothing that needs
 * one may be asked for. */
static int
no_cgroup (const struct rt_cgroup_opts *co, struct cm_err **err)
{
  if (co->resources)
    return cm_err_set (err, 0, "linux.resources: cannot be applied with "
                       "--cgroup-manager disabled (no cgroup is made)");
  if (co->devices_required)
    return cm_err_set (err, 0, "devices: the container may mknod "
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
progress (const struct rt_plan *p, const struct rt_progress *pr,
          struct cm_err **err)
{
  struct rt_progress q = *pr;
  q.supervisor_pid = rt_notify_pid (&q.supervisor_start_time);
  return p->o->progress ? p->o->progress (p->o->progress_ud, &q, err) : 0;
}

static const char *
cgroup_path (const struct rt_parent *pa)
{
  return pa->cg ? rt_cgroup_path (pa->cg) : NULL;
}

/* The cgroup exists before the child, so the child can be born in it; its
 * path is recorded before the first directory is made. */
int
rt_parent_cgroup (const struct rt_plan *p, struct rt_parent *pa,
                  struct cm_err **err)
{
  struct rt_cgroup_opts co = cgroup_opts (p);
  _cleanup_free_ char *path = NULL;
  if (p->o->no_cgroup)
    return no_cgroup (&co, err);
  if (rt_cgroup_resolve (&co, &path, err) < 0
      || progress (p, &(struct rt_progress) { .cgroup_path = path }, err) < 0)
    return -1;
  if (rt_cgroup_create (&co, 0, &pa->cg, err) == 0)
    return 0;
  /* Rootless without a delegated cgroup: like runc, go on without one
   * unless the config asks for limits that need it. */
  bool denied = (*err)->errno_ == EACCES || (*err)->errno_ == EPERM
                || (*err)->errno_ == EROFS;
  if (!denied || geteuid () == 0 || co.devices_required)
    return -1;
  if (p->c->resources)
    return cm_err_wrap (err, "linux.resources need a cgroup this user may "
                        "write (rootless without delegation)");
  cm_err_free (err);
  pa->cg = NULL;
  return 0;
}

/* clone() with fork semantics: the namespaces exist from the first
 * instruction of the child, and it is pid 1 of a new pid namespace.  With a
 * cgroup v2 directory, clone3(CLONE_INTO_CGROUP) makes it born there: a
 * migration's first occurrence costs an RCU grace period (~10 ms here). */
static pid_t
clone_child (const struct rt_plan *p, struct rt_parent *pa)
{
  struct cm_err *e = NULL;
  int cgfd = pa->cg ? rt_cgroup_clone_fd (pa->cg, &e) : -1;
  pid_t pid;
  cm_err_free (&e);
  pa->born_in_cgroup = false;
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
          pa->born_in_cgroup = pid > 0;
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
clone_failed (const struct rt_plan *p, int e, struct cm_err **err)
{
  if (e == EPERM && geteuid () != 0 && !p->new_user && !p->joins_user)
    {
      cm_err_set (err, 0, "clone (namespaces %#x): %s: creating namespaces "
                  "needs root or a user namespace: use `sandlock-oci spec "
                  "--rootless`", p->clone_flags, strerror (e));
      (*err)->errno_ = e;
      return -1;
    }
  return cm_err_set (err, e, "clone (namespaces %#x)", p->clone_flags);
}

pid_t
rt_parent_clone (const struct rt_plan *p, struct rt_parent *pa,
                 struct cm_err **err)
{
  pid_t pid = clone_child (p, pa);
  if (pid < 0)
    return clone_failed (p, errno, err);
  if (pid > 0)
    pa->pid = pid;
  return pid;
}

/* The files of /proc/PID the child cannot write itself. */
static int
proc_files (const struct rt_plan *p, pid_t pid, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  if (p->new_user)
    {
      /* Without CAP_SETGID over the parent namespace the kernel takes a
       * gid_map only once setgroups is denied (user_namespaces(7)). */
      if (geteuid () != 0)
        {
          char path[64];
          snprintf (path, sizeof path, "/proc/%d/setgroups", (int) pid);
          if (cm_write_file_at (AT_FDCWD, path, "deny", 4, err) < 0)
            return cm_err_wrap (err, "rootless user namespace");
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
      if (cm_write_file_at (AT_FDCWD, path, val, strlen (val), err) < 0)
        return cm_err_wrap (err, "process.oomScoreAdj");
    }
  return 0;
}

/* GO, the cgroup path and the state; then the cgroup placement.  The
 * first migration into a v1 hierarchy waits for an RCU grace period: the
 * child does its first mounts meanwhile, and waits for CGROUP_DONE only
 * where it needs to be in its cgroup. */
static int
send_setup (const struct rt_plan *p, struct rt_parent *pa, int sock,
            const char *state, struct cm_err **err)
{
  if (rt_sync_send_go (sock, pa->pid) < 0
      || rt_sync_send_str (sock, cgroup_path (pa)) < 0
      || rt_sync_send_str (sock, p->child_hooks ? state : NULL) < 0)
    return rt_sync_fail (sock, "send setup to container process", err);
  if (pa->cg && rt_cgroup_attach (pa->cg, pa->pid, pa->born_in_cgroup, err)
                    < 0)
    {
      /* A child that failed first has its own, better, error waiting. */
      rt_sync_child_error (sock, err);
      return -1;
    }
  if (rt_sync_send (sock, SYNC_CGROUP_DONE, 0, NULL) < 0)
    return rt_sync_fail (sock, "sync with container process", err);
  return 0;
}

/* Serves the child until it is parked (READY) or fails. */
static int
serve_child (const struct rt_plan *p, int sock, const char *state,
             struct cm_err **err)
{
  const struct rt_config *c = p->c;
  struct sync_msg m;
  for (;;)
    {
      int r = rt_sync_recv (sock, &m);
      if (r <= 0)
        {
          if (r < 0 && rt_sync_child_error (sock, err) < 0)
            return -1;
          return cm_err_set (err, 0, "container process exited during setup");
        }
      switch (m.kind)
        {
        case SYNC_HOOKS:
          if (rt_hooks_run (&c->hooks[RT_HOOK_PRESTART], "prestart", state,
                            err) < 0
              || rt_hooks_run (&c->hooks[RT_HOOK_CREATE_RUNTIME],
                               "createRuntime", state, err) < 0
              || (rt_vroot_mode (p)
                  && rt_hooks_run (&c->hooks[RT_HOOK_CREATE_CONTAINER],
                                   "createContainer", state, err) < 0))
            return -1;
          if (rt_sync_send (sock, SYNC_HOOKS_DONE, 0, NULL) < 0)
            return rt_sync_fail (sock, "sync with container process", err);
          break;
        case SYNC_READY:
          return 0;
        case SYNC_ERROR:
          errno = 0;
          return cm_err_set (err, 0, "%s", m.msg);
        default:
          return cm_err_set (err, 0, "container process: bad sync message %d",
                             m.kind);
        }
    }
}

/* The create is recorded: the child drops PDEATHSIG and says so, before
 * this process may exit (which would otherwise kill it). */
static int
release_child (int sock, struct cm_err **err)
{
  struct sync_msg m;
  if (rt_sync_send (sock, SYNC_RELEASE, 0, NULL) < 0)
    return cm_err_set (err, errno, "sync with container process");
  if (rt_sync_recv (sock, &m) <= 0 || m.kind != SYNC_RELEASED)
    return cm_err_set (err, 0, "container process exited during setup");
  return 0;
}

/* Parked: the caller records the container as created, with what exec
 * needs (the Landlock pins), before the child drops PDEATHSIG. */
static int
record_ready (const struct rt_plan *p, struct rt_parent *pa,
              struct rt_created *out, struct cm_err **err)
{
  struct rt_progress pr = { .cgroup_path = cgroup_path (pa), .pid = pa->pid,
                            .start_time = pa->start_time, .ready = true };
  if (rt_confine_take_pins (p->confine, &out->landlock_pins,
                            &out->landlock_pins_len, err) < 0)
    return -1;
  pr.landlock_pins = out->landlock_pins;
  pr.landlock_pins_len = out->landlock_pins_len;
  return progress (p, &pr, err);
}

int
rt_parent_run (const struct rt_plan *p, struct rt_prepared *pp,
               struct rt_parent *pa, struct rt_created *out,
               struct cm_err **err)
{
  const struct rt_create_opts *o = p->o;
  int sock = pp->sock[0];
  _cleanup_free_ char *state = NULL;

  pa->start_time = rt_proc_start_time (pa->pid);
  if (progress (p, &(struct rt_progress) { .cgroup_path = cgroup_path (pa),
                                           .pid = pa->pid,
                                           .start_time = pa->start_time },
                err) < 0
      || proc_files (p, pa->pid, err) < 0)
    return -1;
  state = o->state_json ? o->state_json (o->state_json_ud, pa->pid, "creating")
                        : xstrdup ("{}");
  if (send_setup (p, pa, sock, state, err) < 0
      || serve_child (p, sock, state, err) < 0
      || record_ready (p, pa, out, err) < 0 || release_child (sock, err) < 0)
    return -1;
  out->pid = pa->pid;
  out->start_time = pa->start_time;
  out->cgroup_path = pa->cg ? xstrdup (rt_cgroup_path (pa->cg)) : NULL;
  return 0;
}

void
rt_parent_end (struct rt_parent *pa, bool failed)
{
  if (failed && pa->pid > 0)
    {
      kill (pa->pid, SIGKILL);
      waitpid (pa->pid, NULL, 0);
    }
  if (pa->cg)
    {
      if (failed)
        {
          struct cm_err *e2 = NULL;
          rt_cgroup_destroy (pa->cg, &e2);
          cm_err_free (&e2);
        }
      rt_cgroup_free (pa->cg);
    }
  pa->cg = NULL;
  pa->pid = -1;
}
