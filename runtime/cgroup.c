/* cgroups: the lifecycle of one container's cgroup (create, open, kill,
 * pids, freeze, stats, destroy) over every hierarchy the host has.  Layout
 * and path rules are in cgroup-layout.c; the per-version file writing in
 * cgroup-v1.c and cgroup-v2.c; docs/cgroups.md has the mapping tables. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"
/* ---- lifecycle --------------------------------------------------------- */

static struct rt_cgroup *
cg_new (const struct cg_host *h, const char *path)
{
  struct rt_cgroup *cg = xcalloc (1, sizeof *cg);
  cg_host_copy (&cg->host, h);
  cg->path = xstrdup (path);
  cg->v1_on = xcalloc (h->v1_len, sizeof *cg->v1_on);
  return cg;
}

void
rt_cgroup_free (struct rt_cgroup *cg)
{
  if (cg == NULL)
    return;
  cg_host_clear (&cg->host);
  for (size_t i = 0; i < cg->made_len; i++)
    free (cg->made[i]);
  free (cg->made);
  free (cg->v1_on);
  free (cg->path);
  free (cg);
}

const char *
rt_cgroup_path (const struct rt_cgroup *cg)
{
  return cg->path;
}

/* Undo of a failed create: the pid leaves for the hierarchy root (the
 * caller kills it anyway) so that the directories we made can go. */
static void
undo_create (struct rt_cgroup *cg, pid_t pid)
{
  struct cm_err *e = NULL;
  if (pid > 0)
    {
      for (size_t i = 0; i < cg->host.v1_len; i++)
        if (cg->v1_on[i])
          cg_writef (cg->host.v1[i].dir, "cgroup.procs", &e, "%d", (int) pid);
      cm_err_free (&e);
      if (cg->v2_on)
        cg_writef (cg->host.v2_mount, "cgroup.procs", &e, "%d", (int) pid);
      cm_err_free (&e);
    }
  for (size_t i = cg->made_len; i-- > 0;)
    rmdir (cg->made[i]);
}

static int
move_pid (struct rt_cgroup *cg, pid_t pid, bool skip_v2, struct cm_err **err)
{
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (cg->v1_on[i])
      {
        _cleanup_free_ char *d = xasprintf ("%s%s", cg->host.v1[i].dir,
                                            cg->path);
        if (cg_writef (d, "cgroup.procs", err, "%d", (int) pid) < 0)
          return -1;
      }
  if (cg->v2_on && !skip_v2)
    {
      _cleanup_free_ char *d = cg_v2_dir (cg);
      if (cg_writef (d, "cgroup.procs", err, "%d", (int) pid) < 0)
        return -1;
    }
  return 0;
}

int
rt_cgroup_attach (struct rt_cgroup *cg, pid_t pid, bool skip_v2,
                  struct cm_err **err)
{
  return move_pid (cg, pid, skip_v2, err);
}

int
rt_cgroup_clone_fd (struct rt_cgroup *cg, struct cm_err **err)
{
  _cleanup_free_ char *d = NULL;
  int fd;
  if (!cg->v2_on)
    return cm_err_set (err, ENOENT, "cgroup `%s`: no cgroup v2 directory "
                       "for CLONE_INTO_CGROUP", cg->path);
  d = cg_v2_dir (cg);
  fd = open (d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "cgroup: open `%s`", d);
  return fd;
}

static int
check_resources (const struct cg_host *h, const struct rt_resources *r,
                 struct cm_err **err)
{
  if (h->layout == CG_NONE)
    return cm_err_set (err, ENOENT,
                       "cgroup: no cgroup hierarchy is mounted "
                       "(/proc/self/mountinfo has no cgroup or cgroup2)");
  if (r && r->unified_len && h->layout != CG_V2)
    return cm_err_set (err, EOPNOTSUPP,
                       "linux.resources.unified: needs a cgroup v2 host "
                       "(this host is %s)", cg_layout_name (h->layout));
  if (h->layout == CG_V2)
    return cg_v2_check (h, r, err);
  return cg_v1_check (h, r, err);
}

int
cg_create_on (const struct cg_host *h, const char *path,
              const struct rt_resources *r, pid_t pid,
              struct rt_cgroup **out, struct cm_err **err)
{
  struct rt_cgroup *cg;
  int ret;

  if (cg_validate_path (path, err) < 0 || check_resources (h, r, err) < 0)
    return -1;
  if (*path != '/')
    return cm_err_set (err, EINVAL, "cgroup: path `%s` is not absolute",
                       path);
  cg = cg_new (h, path);
  ret = 0;
  if (h->layout == CG_V1 || h->layout == CG_HYBRID)
    ret = cg_v1_mkdirs (cg, err);
  if (ret == 0 && h->v2_mount)
    ret = cg_v2_mkdirs (cg, h->layout == CG_V2 ? r : NULL, err);
  if (ret == 0 && r)
    ret = h->layout == CG_V2 ? cg_v2_apply (cg, r, err)
                             : cg_v1_apply (cg, r, false, err);
  if (ret == 0 && pid > 0)
    ret = move_pid (cg, pid, false, err);
  if (ret < 0)
    {
      undo_create (cg, pid);
      rt_cgroup_free (cg);
      return -1;
    }
  for (size_t i = 0; i < cg->made_len; i++)
    free (cg->made[i]);
  cg->made_len = 0;
  *out = cg;
  return 0;
}

/* The device restriction goes on before any process is in the cgroup. */
static int
create_devices (struct rt_cgroup *cg, const struct rt_cgroup_opts *o,
                pid_t pid, struct cm_err **err)
{
  struct cm_err *e = NULL;
  if (cg_dev_apply (cg, o->resources, o->devices_required, false, err) == 0
      && (pid <= 0 || move_pid (cg, pid, false, err) == 0))
    return 0;
  if (pid > 0)
    undo_create (cg, pid);
  rt_cgroup_destroy (cg, &e);
  cm_err_free (&e);
  rt_cgroup_free (cg);
  return -1;
}

static int
resolve_on (const struct cg_host *h, const struct rt_cgroup_opts *o,
            char **path, struct cm_err **err)
{
  _cleanup_free_ char *self = NULL;
  if (o->cgroups_path && *o->cgroups_path && *o->cgroups_path != '/'
      && !o->systemd
      && cm_read_file_at (AT_FDCWD, "/proc/self/cgroup", CG_FILE_MAX, &self,
                          NULL, err) < 0)
    return -1;
  return cg_resolve_path (o, h->layout, self ? self : "", path, err);
}

int
rt_cgroup_resolve (const struct rt_cgroup_opts *o, char **path,
                   struct cm_err **err)
{
  const struct cg_host *h = cg_host_get (err);
  *path = NULL;
  if (h == NULL)
    return -1;
  if (h->layout == CG_NONE)
    return 0;
  return resolve_on (h, o, path, err);
}

int
rt_cgroup_create (const struct rt_cgroup_opts *o, pid_t pid,
                  struct rt_cgroup **out, struct cm_err **err)
{
  const struct cg_host *h;
  _cleanup_free_ char *path = NULL;
  struct cm_err *e = NULL;

  h = cg_host_get (err);
  if (h == NULL)
    return -1;
  if (resolve_on (h, o, &path, err) < 0)
    return -1;
  if (h->layout == CG_NONE && !cg_resources_needed (o->resources)
      && !o->devices_required)
    {
      *out = NULL;
      return 0;
    }
  if (cg_create_on (h, path, o->resources, 0, out, &e) == 0)
    {
      if (create_devices (*out, o, pid, err) == 0)
        return 0;
      *out = NULL;
      return -1;
    }
  /* runc's rootless rule: a cgroup that only tracks is worth no failure
   * when the caller may not create one (rootless, or root in a user
   * namespace, or a read-only /sys/fs/cgroup in a container).  Not when
   * it is what keeps the container away from the host's devices. */
  if ((e->errno_ == EACCES || e->errno_ == EPERM || e->errno_ == EROFS)
      && !cg_resources_needed (o->resources) && !o->devices_required)
    {
      cm_err_free (&e);
      *out = NULL;
      return 0;
    }
  *err = cm_steal_ptr (&e);
  if (o->devices_required)
    return cm_err_wrap (err, "devices: the container may mknod (CAP_MKNOD, "
                        "no user namespace) and needs a cgroup to restrict "
                        "device access");
  return -1;
}

bool
cg_resources_needed (const struct rt_resources *r)
{
  if (r == NULL)
    return false;
  return r->memory.limit_present || r->memory.reservation_present
         || r->memory.swap_present || r->memory.swappiness_present
         || r->memory.disable_oom_killer_present || r->cpu.shares_present
         || r->cpu.quota_present || r->cpu.period_present
         || r->cpu.realtime_runtime_present || r->cpu.realtime_period_present
         || r->cpu.burst_present || r->cpu.idle_present || r->cpu.cpus
         || r->cpu.mems || r->pids.limit_present || r->blkio.weight_present
         || r->unified_len || cg_limits_needed (r);
}

int
cg_open_on (const struct cg_host *h, const char *path,
            struct rt_cgroup **out, struct cm_err **err)
{
  struct rt_cgroup *cg;
  bool any = false;

  if (cg_validate_path (path, err) < 0)
    return -1;
  if (*path != '/')
    return cm_err_set (err, EINVAL, "cgroup: path `%s` is not absolute",
                       path);
  cg = cg_new (h, path);
  for (size_t i = 0; i < h->v1_len; i++)
    {
      _cleanup_free_ char *d = xasprintf ("%s%s", h->v1[i].dir, path);
      any |= cg->v1_on[i] = cg_exists (d, NULL);
    }
  if (h->v2_mount)
    {
      _cleanup_free_ char *d = cg_v2_dir (cg);
      any |= cg->v2_on = cg_exists (d, NULL);
    }
  if (!any)
    {
      rt_cgroup_free (cg);
      return cm_err_set (err, ENOENT, "cgroup `%s` exists in no hierarchy",
                         path);
    }
  *out = cg;
  return 0;
}

int
rt_cgroup_open (const char *path, struct rt_cgroup **out, struct cm_err **err)
{
  const struct cg_host *h;
  h = cg_host_get (err);
  if (h == NULL)
    return -1;
  return cg_open_on (h, path, out, err);
}

/* The directory whose cgroup.procs tracks every process: v2 (or the hybrid
 * unified tree), else a v1 hierarchy every container process joins. */
static char *
procs_dir (const struct rt_cgroup *cg)
{
  static const char *const pref[] = { "pids", "freezer", "memory", "cpu" };
  if (cg->v2_on)
    return cg_v2_dir (cg);
  for (size_t i = 0; i < ARRAY_SIZE (pref); i++)
    {
      char *d = cg_v1_dir (cg, pref[i]);
      if (d)
        return d;
    }
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (cg->v1_on[i])
      return xasprintf ("%s%s", cg->host.v1[i].dir, cg->path);
  return NULL;
}

struct pidv
{
  pid_t *v;
  size_t n;
};

static void
pidv_add (struct pidv *p, pid_t pid)
{
  p->v = xrealloc (p->v, (p->n + 1) * sizeof *p->v);
  p->v[p->n++] = pid;
}

/* Appends the pids of |dir| and of every cgroup below it. */
static int
collect_pids (const char *dir, struct pidv *out, int depth,
              struct cm_err **err)
{
  _cleanup_free_ char *procs = NULL;
  DIR *d;
  struct dirent *de;
  int r;

  if (cg_read (dir, "cgroup.procs", &procs, err) < 0)
    return -1;
  if (procs == NULL)
    return 0;                   /* removed meanwhile */
  for (char *p = procs; *p;)
    {
      char *end;
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      pidv_add (out, (pid_t) v);
      p = end;
      while (*p == '\n')
        p++;
    }
  if (depth > 32 || (d = opendir (dir)) == NULL)
    return 0;
  r = 0;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", dir, de->d_name);
      r = collect_pids (sub, out, depth + 1, err);
    }
  closedir (d);
  return r;
}

int
rt_cgroup_pids (struct rt_cgroup *cg, pid_t **pids, size_t *n,
                struct cm_err **err)
{
  _cleanup_free_ char *dir = procs_dir (cg);
  struct pidv v = { NULL, 0 };
  if (dir == NULL)
    return cm_err_set (err, ENOENT, "cgroup `%s`: no hierarchy to list pids",
                       cg->path);
  if (collect_pids (dir, &v, 0, err) < 0)
    {
      free (v.v);
      return -1;
    }
  *pids = v.v;
  *n = v.n;
  return 0;
}

static int
pid_cmp (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}

/* The pids of the cgroup in every hierarchy, each once.  On a hybrid or v1
 * host a process can be in the container's cgroup of one hierarchy and not
 * of the one rt_cgroup_pids reads (moved by hand, or by a tool that knows
 * one controller); its rmdir then fails with EBUSY. */
static int
all_pids (struct rt_cgroup *cg, pid_t **pids, size_t *n, struct cm_err **err)
{
  struct pidv v = { NULL, 0 };
  size_t k = 0;
  for (size_t i = 0; i <= cg->host.v1_len; i++)
    {
      _cleanup_free_ char *d = NULL;
      if (i < cg->host.v1_len && cg->v1_on[i])
        d = xasprintf ("%s%s", cg->host.v1[i].dir, cg->path);
      else if (i == cg->host.v1_len && cg->v2_on)
        d = cg_v2_dir (cg);
      if (d && collect_pids (d, &v, 0, err) < 0)
        {
          free (v.v);
          return -1;
        }
    }
  if (v.n)
    qsort (v.v, v.n, sizeof *v.v, pid_cmp);
  for (size_t i = 0; i < v.n; i++)
    if (k == 0 || v.v[k - 1] != v.v[i])
      v.v[k++] = v.v[i];
  *pids = v.v;
  *n = k;
  return 0;
}

static bool
pidv_has (const struct pidv *p, pid_t pid)
{
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i] == pid)
      return true;
  return false;
}

/* Signals every pid, re-reading until a pass finds no pid it has not yet
 * signalled: a forking process cannot outrun the loop for long because each
 * pass signals its new children too. */
static int
kill_loop (struct rt_cgroup *cg, int sig, struct cm_err **err)
{
  struct pidv done = { NULL, 0 };
  int ret = 0;
  for (int round = 0;; round++)
    {
      pid_t *pids = NULL;
      size_t n = 0, fresh = 0;
      if (round > 10000)
        {
          ret = cm_err_set (err, EAGAIN,
                            "cgroup `%s`: processes keep appearing while "
                            "signalling", cg->path);
          break;
        }
      if (all_pids (cg, &pids, &n, err) < 0)
        {
          ret = -1;
          break;
        }
      for (size_t i = 0; i < n; i++)
        if (!pidv_has (&done, pids[i]))
          {
            fresh++;
            pidv_add (&done, pids[i]);
            if (kill (pids[i], sig) < 0 && errno != ESRCH)
              {
                ret = cm_err_set (err, errno, "cgroup: kill %d",
                                  (int) pids[i]);
                break;
              }
          }
      free (pids);
      if (ret < 0 || fresh == 0)
        break;
    }
  free (done.v);
  return ret;
}

static bool
any_v1 (const struct rt_cgroup *cg)
{
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (cg->v1_on[i])
      return true;
  return false;
}

static bool
use_v1_freezer (const struct rt_cgroup *cg)
{
  int i = cg_v1_index (&cg->host, "freezer");
  return i >= 0 && cg->v1_on[i];
}

int
rt_cgroup_kill (struct rt_cgroup *cg, int sig, struct cm_err **err)
{
  int r;
  bool v1f = sig == SIGKILL && use_v1_freezer (cg), thaw = false;
  struct cm_err *e = NULL;

  /* A task stopped by the v1 freezer (a paused container on a hybrid
   * host) does not act on SIGKILL until thawed, whoever sends it. */
  if (v1f && cg->v2_on)
    {
      thaw = cg_v1_is_frozen (cg, &e) == 1;
      cm_err_free (&e);
    }
  if (sig == SIGKILL && cg->v2_on)
    {
      r = cg_v2_kill (cg, err);
      if (r < 0)
        return -1;
      /* A process in the container's v1 cgroups only (hybrid host) is out
       * of cgroup.kill's reach: the loop reaches it. */
      if (r == 1 && !any_v1 (cg))
        return thaw ? cg_v1_freeze (cg, false, err) : 0;
      if (r == 1)
        v1f = false;            /* frozen tasks already have SIGKILL */
    }
  /* Without cgroup.kill, a frozen cgroup cannot fork between our reading
   * cgroup.procs and the signal landing; SIGKILL acts on thaw. */
  if (v1f)
    {
      thaw = cg_v1_freeze (cg, true, &e) == 0;
      cm_err_free (&e);
    }
  r = kill_loop (cg, sig, err);
  if (thaw && cg_v1_freeze (cg, false, r < 0 ? &e : err) < 0 && r == 0)
    r = -1;
  cm_err_free (&e);
  return r;
}

int
rt_cgroup_kill_v2 (struct rt_cgroup *cg, struct cm_err **err)
{
  return cg->v2_on ? cg_v2_kill (cg, err) : 0;
}

int
rt_cgroup_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err)
{
  if (use_v1_freezer (cg))
    return cg_v1_freeze (cg, frozen, err);
  if (cg->v2_on)
    return cg_v2_freeze (cg, frozen, err);
  return cm_err_set (err, ENOENT,
                     "cgroup `%s`: no freezer (no v1 freezer hierarchy and "
                     "no cgroup v2)", cg->path);
}

int
rt_cgroup_is_frozen (struct rt_cgroup *cg, struct cm_err **err)
{
  if (use_v1_freezer (cg))
    return cg_v1_is_frozen (cg, err);
  if (cg->v2_on)
    return cg_v2_is_frozen (cg, err);
  return cm_err_set (err, ENOENT,
                     "cgroup `%s`: no freezer (no v1 freezer hierarchy and "
                     "no cgroup v2)", cg->path);
}

int
rt_cgroup_update (struct rt_cgroup *cg, const struct rt_resources *r,
                  struct cm_err **err)
{
  if (r == NULL)
    return 0;
  if (check_resources (&cg->host, r, err) < 0)
    return -1;
  if (cg->host.layout == CG_V2)
    return cg_v2_apply (cg, r, err);
  return cg_v1_apply (cg, r, true, err);
}

int
rt_cgroup_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
                 struct cm_err **err)
{
  memset (st, 0, sizeof *st);
  if (cg->host.layout == CG_V2)
    return cg_v2_stats (cg, st, err);
  return cg_v1_stats (cg, st, err);
}

/* "pids 12 34 still running" for the processes whose pidfd is still open. */
static int
still_running (const pid_t *pids, const struct pollfd *pfd, size_t m,
               struct cm_err **err)
{
  char buf[512];
  size_t off = 0, left = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < m; i++)
    if (pfd[i].fd >= 0)
      {
        left++;
        if (off < sizeof buf - 16)
          off += (size_t) snprintf (buf + off, sizeof buf - off, " %d",
                                    (int) pids[i]);
      }
  return cm_err_set (err, ETIMEDOUT, "%zu process%s still running (pid%s%s) "
                     "after SIGKILL: frozen by a cgroup we do not own, or "
                     "in uninterruptible sleep", left, left == 1 ? "" : "es",
                     left == 1 ? "" : "s", buf);
}

/* Blocks until every pid of |pids| has exited or |deadline| passes
 * (pidfds become readable when the process exits; it has left its cgroups
 * by then, zombie or not). */
static int
wait_exits (const pid_t *pids, size_t n, long deadline, struct cm_err **err)
{
  struct pollfd *pfd = xcalloc (n, sizeof *pfd);
  pid_t *pv = xcalloc (n, sizeof *pv);
  size_t m = 0;
  int ret = 0;

  for (size_t i = 0; i < n; i++)
    {
      int fd = (int) syscall (SYS_pidfd_open, pids[i], 0);
      if (fd >= 0)
        {
          pv[m] = pids[i];
          pfd[m++] = (struct pollfd){ .fd = fd, .events = POLLIN };
        }
      else if (errno != ESRCH)
        {
          ret = cm_err_set (err, errno, "cgroup: pidfd_open %d",
                            (int) pids[i]);
          break;
        }
    }
  for (size_t left = m; ret == 0 && left > 0;)
    {
      long wait = deadline - cg_now_ms ();
      int r = wait > 0 ? poll (pfd, m, (int) wait) : 0;
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        ret = cm_err_set (err, errno, "cgroup: poll pidfds");
      else if (r == 0)
        ret = still_running (pv, pfd, m, err);
      for (size_t i = 0; ret == 0 && i < m; i++)
        if (pfd[i].fd >= 0 && pfd[i].revents)
          {
            close (pfd[i].fd);
            pfd[i].fd = -1;     /* poll ignores negative fds */
            left--;
          }
    }
  for (size_t i = 0; i < m; i++)
    if (pfd[i].fd >= 0)
      close (pfd[i].fd);
  free (pfd);
  free (pv);
  return ret;
}

/* cgroup.procs can be empty while the cgroup is still populated (a task
 * between leaving the pid list and leaving its css_set): v2 says when it
 * is really empty in cgroup.events. */
static int
wait_unpopulated (const struct rt_cgroup *cg, long deadline,
                  struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg);
  /* 1: no cgroup.events any more, the cgroup is gone: empty. */
  return cg_v2_events_wait (dir, "populated", 0, deadline, err) < 0 ? -1 : 0;
}

static int
wait_empty_until (struct rt_cgroup *cg, long deadline, struct cm_err **err)
{
  for (;;)
    {
      pid_t *pids = NULL;
      size_t n = 0;
      int r;
      if (all_pids (cg, &pids, &n, err) < 0)
        return -1;
      if (n == 0)
        {
          free (pids);
          break;
        }
      r = wait_exits (pids, n, deadline, err);
      free (pids);
      if (r < 0)
        return cm_err_wrap (err, "cgroup `%s`", cg->path);
    }
  if (cg->v2_on && wait_unpopulated (cg, deadline, err) < 0)
    return cm_err_wrap (err, "cgroup `%s`", cg->path);
  return 0;
}

int
rt_cgroup_wait_empty (struct rt_cgroup *cg, int timeout_ms,
                      struct cm_err **err)
{
  return wait_empty_until (cg, cg_now_ms () + timeout_ms, err);
}

/* rmdir leaf first; a cgroup directory holds only kernel files, which
 * rmdir(2) takes with it, so only sub-directories need walking. */
static int
rmdir_tree (const char *dir, int depth, struct cm_err **err)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    return errno == ENOENT ? 0
                           : cm_err_set (err, errno, "cgroup: open `%s`", dir);
  while (r == 0 && depth < 32 && (de = readdir (d)) != NULL)
    {
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", dir, de->d_name);
      r = rmdir_tree (sub, depth + 1, err);
    }
  closedir (d);
  if (r < 0)
    return -1;
  if (rmdir (dir) < 0 && errno != ENOENT)
    {
      if (errno == EBUSY)
        return cm_err_set (err, EBUSY,
                           "cgroup: cannot remove `%s`: processes remain in "
                           "it", dir);
      return cm_err_set (err, errno, "cgroup: rmdir `%s`", dir);
    }
  return 0;
}

int
rt_cgroup_destroy (struct rt_cgroup *cg, struct cm_err **err)
{
  int ret = 0;
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (cg->v1_on[i])
      {
        _cleanup_free_ char *d = xasprintf ("%s%s", cg->host.v1[i].dir,
                                            cg->path);
        if (rmdir_tree (d, 0, ret < 0 ? NULL : err) < 0)
          ret = -1;
        else
          cg->v1_on[i] = false;
      }
  if (cg->v2_on)
    {
      _cleanup_free_ char *d = cg_v2_dir (cg);
      if (rmdir_tree (d, 0, ret < 0 ? NULL : err) < 0)
        ret = -1;
      else
        cg->v2_on = false;
    }
  return ret;
}
