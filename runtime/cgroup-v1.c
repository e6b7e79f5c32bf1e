/* cgroup v1: one hierarchy per mounted controller set (also the v1 half of a
 * hybrid host).  The container joins every mounted hierarchy, as runc does,
 * so each controller (and name=systemd) tracks its processes. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"

static int
missing (const char *ctrl, struct cm_err **err)
{
  return cm_err_set (err, ENOENT,
                     "cgroup controller \"%s\" is not available (no v1 "
                     "hierarchy is mounted for it)", ctrl);
}

/* The directory of a controller the resources need. */
static int
need_dir (const struct rt_cgroup *cg, const char *ctrl, char **dir,
          struct cm_err **err)
{
  *dir = cg_v1_dir (cg, ctrl);
  return *dir ? 0 : missing (ctrl, err);
}

static bool
memory_needed (const struct rt_resources *r)
{
  return r->memory.limit_present || r->memory.reservation_present
         || r->memory.swap_present || r->memory.swappiness_present
         || r->memory.disable_oom_killer_present;
}

static bool
cpu_needed (const struct rt_resources *r)
{
  return r->cpu.shares_present || r->cpu.quota_present
         || r->cpu.period_present || r->cpu.realtime_runtime_present
         || r->cpu.realtime_period_present || r->cpu.burst_present
         || r->cpu.idle_present;
}

int
cg_v1_check (const struct cg_host *h, const struct rt_resources *r,
             struct cm_err **err)
{
  if (r == NULL)
    return 0;
  if (memory_needed (r) && cg_v1_index (h, "memory") < 0)
    return missing ("memory", err);
  if (cpu_needed (r) && cg_v1_index (h, "cpu") < 0)
    return missing ("cpu", err);
  if ((r->cpu.cpus || r->cpu.mems) && cg_v1_index (h, "cpuset") < 0)
    return missing ("cpuset", err);
  if (r->pids.limit_present && cg_v1_index (h, "pids") < 0)
    return missing ("pids", err);
  /* Without it, a hybrid host's v2 tree takes the device program. */
  if (r->devices_len && cg_v1_index (h, "devices") < 0 && !h->v2_mount)
    return missing ("devices", err);
  return cg_v1_limits_check (h, r, err);
}

static bool
blank (const char *s)
{
  return s[strspn (s, " \t\n")] == '\0';
}

/* A new v1 cpuset starts with empty cpus/mems and refuses tasks until they
 * are set; inherit the parent's, as runc and crun do. */
static int
cpuset_inherit (const char *parent, const char *dir, const char *file,
                struct cm_err **err)
{
  _cleanup_free_ char *cur = NULL, *up = NULL;
  if (cg_read (dir, file, &cur, err) < 0)
    return -1;
  if (cur == NULL || !blank (cur))
    return 0;
  if (cg_read (parent, file, &up, err) < 0)
    return -1;
  if (up == NULL)
    return cm_err_set (err, ENOENT, "cgroup: `%s/%s` is missing", parent,
                       file);
  up[strcspn (up, "\n")] = '\0';
  return cg_write (dir, file, up, err);
}

static int
mkdirs_one (struct rt_cgroup *cg, size_t i, struct cm_err **err)
{
  bool cpuset = strstr (cg->host.v1[i].ctrls, ",cpuset,") != NULL;
  _cleanup_free_ char *cur = xstrdup (cg->host.v1[i].dir);
  const char *s = cg->path + 1;

  while (*s)
    {
      const char *e = strchrnul (s, '/');
      _cleanup_free_ char *parent = cur;
      cur = xasprintf ("%s/%.*s", parent, (int) (e - s), s);
      if (mkdir (cur, 0755) == 0)
        cg_made (cg, cur);
      else if (errno != EEXIST)
        return cm_err_set (err, errno, "cgroup: mkdir `%s`", cur);
      if (cpuset && (cpuset_inherit (parent, cur, "cpuset.cpus", err) < 0
                     || cpuset_inherit (parent, cur, "cpuset.mems", err) < 0))
        return -1;
      s = *e ? e + 1 : e;
    }
  cg->v1_on[i] = true;
  return 0;
}

int
cg_v1_mkdirs (struct rt_cgroup *cg, struct cm_err **err)
{
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (mkdirs_one (cg, i, err) < 0)
      return -1;
  return 0;
}

/* memory.memsw.limit_in_bytes (OCI "swap" = memory + swap) must stay >=
 * memory.limit_in_bytes after every single write, so the order depends on
 * whether the limit goes up or down: try the limit first and, when the
 * kernel refuses, raise memsw first. */
static int
v1_memory_limits (const char *dir, const struct rt_resources *r,
                  struct cm_err **err)
{
  bool memsw = cg_exists (dir, "memory.memsw.limit_in_bytes");
  bool sw = r->memory.swap_present;
  struct cm_err *e = NULL;
  long long lim = r->memory.limit, swap = r->memory.swap;

  if (sw && !memsw && swap != -1)
    return cm_err_set (err, ENOENT,
                       "linux.resources.memory.swap: %s has no "
                       "memory.memsw.limit_in_bytes (swap accounting is off)",
                       dir);
  sw = sw && memsw;
  if (sw && r->memory.limit_present && swap >= 0 && lim >= 0 && swap < lim)
    return cm_err_set (err, EINVAL,
                       "linux.resources.memory.swap (%lld) must be >= "
                       "memory.limit (%lld): it is memory+swap", swap, lim);
  if (!r->memory.limit_present)
    return sw ? cg_writef (dir, "memory.memsw.limit_in_bytes", err, "%lld",
                           swap)
              : 0;
  if (cg_writef (dir, "memory.limit_in_bytes", &e, "%lld", lim) == 0)
    {
      return sw ? cg_writef (dir, "memory.memsw.limit_in_bytes", err, "%lld",
                             swap)
                : 0;
    }
  if (!sw)
    {
      *err = e;
      return cm_err_wrap (err, "linux.resources.memory.limit");
    }
  cm_err_free (&e);
  if (cg_writef (dir, "memory.memsw.limit_in_bytes", err, "%lld", swap) < 0)
    return -1;
  return cg_writef (dir, "memory.limit_in_bytes", err, "%lld", lim);
}

static int
v1_memory (struct rt_cgroup *cg, const struct rt_resources *r,
           struct cm_err **err)
{
  _cleanup_free_ char *dir = NULL;
  if (!memory_needed (r))
    return 0;
  if (need_dir (cg, "memory", &dir, err) < 0)
    return -1;
  if ((r->memory.limit_present || r->memory.swap_present)
      && v1_memory_limits (dir, r, err) < 0)
    return -1;
  if (r->memory.reservation_present
      && cg_writef (dir, "memory.soft_limit_in_bytes", err, "%lld",
                    (long long) r->memory.reservation) < 0)
    return -1;
  if (r->memory.swappiness_present)
    {
      if (r->memory.swappiness > 100)
        return cm_err_set (err, EINVAL,
                           "linux.resources.memory.swappiness: %llu is not "
                           "in [0, 100]",
                           (unsigned long long) r->memory.swappiness);
      if (cg_writef (dir, "memory.swappiness", err, "%llu",
                     (unsigned long long) r->memory.swappiness) < 0)
        return -1;
    }
  if (r->memory.disable_oom_killer_present
      && cg_write (dir, "memory.oom_control",
                   r->memory.disable_oom_killer ? "1" : "0", err) < 0)
    return -1;
  return 0;
}

static long long
read_ll (const char *dir, const char *file, long long dflt)
{
  _cleanup_free_ char *v = NULL;
  if (cg_read (dir, file, &v, NULL) < 0 || v == NULL)
    return dflt;
  return strtoll (v, NULL, 10);
}

/* With RT group scheduling a new cgroup has no realtime budget, and none
 * may exceed its parent's share (runtime/period), so realtimeRuntime fails
 * (EINVAL) under our own parent (/sandlock-oci) which starts at 0.  Each
 * level between the hierarchy root and the container that has less than
 * the container's share gets it, top down; the kernel still refuses what
 * the host's budget cannot cover, and that error is named. */
static int
v1_rt_budget (const struct rt_cgroup *cg, const char *dir,
              const struct rt_resources *r, struct cm_err **err)
{
  int i = cg_v1_index (&cg->host, "cpu");
  long long period = r->cpu.realtime_period_present
                         ? (long long) r->cpu.realtime_period
                         : read_ll (dir, "cpu.rt_period_us", 1000000);
  _cleanup_free_ char *cur = NULL;
  if (i < 0 || r->cpu.realtime_runtime <= 0 || period <= 0
      || !cg_exists (dir, "cpu.rt_runtime_us"))
    return 0;
  cur = xstrdup (cg->host.v1[i].dir);
  for (const char *s = cg->path + 1, *e; *(e = strchrnul (s, '/')); s = e + 1)
    {
      char *up = cur;
      cur = xasprintf ("%s/%.*s", up, (int) (e - s), s);
      free (up);
      long long pp = read_ll (cur, "cpu.rt_period_us", 1000000);
      long long have = read_ll (cur, "cpu.rt_runtime_us", -1);
      long long need = (r->cpu.realtime_runtime * pp + period - 1) / period;
      if (have >= 0 && have < need
          && cg_writef (cur, "cpu.rt_runtime_us", err, "%lld", need) < 0)
        return cm_err_wrap (err, "linux.resources.cpu.realtimeRuntime: "
                            "realtime budget of the parent cgroup");
    }
  return 0;
}

static int
v1_cpu (struct rt_cgroup *cg, const struct rt_resources *r,
        struct cm_err **err)
{
  _cleanup_free_ char *dir = NULL;
  if (!cpu_needed (r))
    return 0;
  if (need_dir (cg, "cpu", &dir, err) < 0)
    return -1;
  if (r->cpu.shares_present && r->cpu.shares
      && cg_writef (dir, "cpu.shares", err, "%llu",
                    (unsigned long long) r->cpu.shares) < 0)
    return -1;
  if (r->cpu.period_present && r->cpu.period
      && cg_writef (dir, "cpu.cfs_period_us", err, "%llu",
                    (unsigned long long) r->cpu.period) < 0)
    return -1;
  if (r->cpu.quota_present && r->cpu.quota
      && cg_writef (dir, "cpu.cfs_quota_us", err, "%lld",
                    (long long) r->cpu.quota) < 0)
    return -1;
  if (r->cpu.burst_present
      && cg_writef (dir, "cpu.cfs_burst_us", err, "%llu",
                    (unsigned long long) r->cpu.burst) < 0)
    return -1;
  if (r->cpu.realtime_period_present
      && cg_writef (dir, "cpu.rt_period_us", err, "%llu",
                    (unsigned long long) r->cpu.realtime_period) < 0)
    return -1;
  if (r->cpu.realtime_runtime_present
      && (v1_rt_budget (cg, dir, r, err) < 0
          || cg_writef (dir, "cpu.rt_runtime_us", err, "%lld",
                        (long long) r->cpu.realtime_runtime) < 0))
    return -1;
  if (r->cpu.idle_present
      && cg_writef (dir, "cpu.idle", err, "%lld", (long long) r->cpu.idle) < 0)
    return -1;
  return 0;
}

static int
v1_cpuset_pids_blkio (struct rt_cgroup *cg, const struct rt_resources *r,
                      struct cm_err **err)
{
  _cleanup_free_ char *cs = NULL, *pids = NULL, *blkio = NULL;
  if (r->cpu.cpus || r->cpu.mems)
    {
      if (need_dir (cg, "cpuset", &cs, err) < 0)
        return -1;
      if (r->cpu.cpus && cg_write (cs, "cpuset.cpus", r->cpu.cpus, err) < 0)
        return -1;
      if (r->cpu.mems && cg_write (cs, "cpuset.mems", r->cpu.mems, err) < 0)
        return -1;
    }
  if (r->pids.limit_present)
    {
      if (need_dir (cg, "pids", &pids, err) < 0)
        return -1;
      if (r->pids.limit >= 0
              ? cg_writef (pids, "pids.max", err, "%lld",
                           (long long) r->pids.limit) < 0
              : cg_write (pids, "pids.max", "max", err) < 0)
        return -1;
    }
  /* Best effort: blkio.weight exists only with CFQ/BFQ on the device.
   * Weight 0 means "not set" (Docker writes blockIO.weight 0 for every
   * container; the kernel refuses 0 with ERANGE), as in runc and in the
   * v2 path. */
  blkio = cg_v1_dir (cg, "blkio");
  if (r->blkio.weight_present && r->blkio.weight && blkio)
    {
      const char *f = cg_exists (blkio, "blkio.weight") ? "blkio.weight"
                      : cg_exists (blkio, "blkio.bfq.weight")
                          ? "blkio.bfq.weight"
                          : NULL;
      if (f && cg_writef (blkio, f, err, "%u", r->blkio.weight) < 0)
        return -1;
    }
  return 0;
}

int
cg_v1_apply (struct rt_cgroup *cg, const struct rt_resources *r, bool update,
             struct cm_err **err)
{
  if (v1_memory (cg, r, err) < 0 || v1_cpu (cg, r, err) < 0
      || v1_cpuset_pids_blkio (cg, r, err) < 0
      || cg_v1_limits_apply (cg, r, err) < 0)
    return -1;
  /* At create, cg_dev_apply runs for every container (rules or none). */
  if (update && cg_dev_apply (cg, r, false, true, err) < 0)
    return -1;
  return 0;
}

/* v1 has no change notification for freezer.state: the state moves from
 * FREEZING to FROZEN once every task has entered the refrigerator, and only
 * a read of freezer.state re-evaluates it.  So re-read, yielding the CPU to
 * the tasks that still have to reach the refrigerator, with a bound; the
 * write is repeated now and then as runc does (a task forked while freezing
 * could have been missed). */
int
cg_v1_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err)
{
  _cleanup_free_ char *dir = NULL;
  if (need_dir (cg, "freezer", &dir, err) < 0)
    return -1;
  if (!frozen)
    return cg_write (dir, "freezer.state", "THAWED", err);
  for (int i = 0; i < 200000; i++)
    {
      _cleanup_free_ char *st = NULL;
      if (i % 1000 == 0 && cg_write (dir, "freezer.state", "FROZEN", err) < 0)
        return -1;
      if (cg_read (dir, "freezer.state", &st, err) < 0)
        return -1;
      if (st == NULL)
        return cm_err_set (err, ENOENT, "cgroup: `%s` has no freezer.state",
                           dir);
      if (cm_startswith (st, "FROZEN"))
        return 0;
      sched_yield ();
    }
  {
    struct cm_err *e = NULL;
    cg_write (dir, "freezer.state", "THAWED", &e);
    cm_err_free (&e);
  }
  return cm_err_set (err, ETIMEDOUT, "cgroup: `%s` did not reach FROZEN",
                     dir);
}

int
cg_v1_is_frozen (struct rt_cgroup *cg, struct cm_err **err)
{
  _cleanup_free_ char *dir = NULL, *st = NULL;
  if (need_dir (cg, "freezer", &dir, err) < 0)
    return -1;
  if (cg_read (dir, "freezer.state", &st, err) < 0)
    return -1;
  if (st == NULL)
    return cm_err_set (err, ENOENT, "cgroup: `%s` has no freezer.state", dir);
  return cm_startswith (st, "FROZEN") ? 1 : 0;
}

/* Reads one number; an absent file leaves *out alone. */
static int
read_u64 (const char *dir, const char *file, uint64_t *out,
          struct cm_err **err)
{
  _cleanup_free_ char *t = NULL;
  if (dir == NULL)
    return 0;
  if (cg_read (dir, file, &t, err) < 0)
    return -1;
  if (t)
    *out = cg_num (t);
  return 0;
}

/* v1 reports "unlimited" as PAGE_COUNTER_MAX pages; show it as max. */
static uint64_t
v1_unlimited (uint64_t v)
{
  return v >= 0x7ffffffffffff000ULL ? UINT64_MAX : v;
}

static int
v1_memory_stats (const char *dir, struct rt_cgroup_stats *st,
                 struct cm_err **err)
{
  _cleanup_free_ char *oom = NULL;
  uint64_t memsw = 0;
  if (read_u64 (dir, "memory.usage_in_bytes", &st->memory_usage, err) < 0
      || read_u64 (dir, "memory.limit_in_bytes", &st->memory_limit, err) < 0
      || read_u64 (dir, "memory.max_usage_in_bytes", &st->memory_max_usage,
                   err) < 0
      || read_u64 (dir, "memory.memsw.usage_in_bytes", &memsw, err) < 0)
    return -1;
  st->memory_limit = v1_unlimited (st->memory_limit);
  st->memory_swap_usage = memsw > st->memory_usage ? memsw - st->memory_usage
                                                   : 0;
  if (cg_read (dir, "memory.oom_control", &oom, err) < 0)
    return -1;
  if (oom)
    cg_keyed (oom, "oom_kill", &st->oom_kill_count);
  return 0;
}

static int
v1_cpu_stats (const char *acct, const char *cpu, struct rt_cgroup_stats *st,
              struct cm_err **err)
{
  _cleanup_free_ char *stat = NULL, *cstat = NULL;
  long hz = sysconf (_SC_CLK_TCK);
  uint64_t v;

  if (read_u64 (acct, "cpuacct.usage", &st->cpu_usage_ns, err) < 0)
    return -1;
  if (acct && cg_read (acct, "cpuacct.stat", &stat, err) < 0)
    return -1;
  if (stat && hz > 0)
    {
      if (cg_keyed (stat, "user", &v))
        st->cpu_user_ns = v * (1000000000ULL / (uint64_t) hz);
      if (cg_keyed (stat, "system", &v))
        st->cpu_system_ns = v * (1000000000ULL / (uint64_t) hz);
    }
  if (cpu && cg_read (cpu, "cpu.stat", &cstat, err) < 0)
    return -1;
  if (cstat)
    {
      cg_keyed (cstat, "nr_throttled", &st->cpu_throttled_periods);
      cg_keyed (cstat, "throttled_time", &st->cpu_throttled_ns);
    }
  return 0;
}

int
cg_v1_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
             struct cm_err **err)
{
  _cleanup_free_ char *mem = cg_v1_dir (cg, "memory");
  _cleanup_free_ char *pids = cg_v1_dir (cg, "pids");
  _cleanup_free_ char *acct = cg_v1_dir (cg, "cpuacct");
  _cleanup_free_ char *cpu = cg_v1_dir (cg, "cpu");

  if (mem && v1_memory_stats (mem, st, err) < 0)
    return -1;
  if (read_u64 (pids, "pids.current", &st->pids_current, err) < 0
      || read_u64 (pids, "pids.max", &st->pids_limit, err) < 0)
    return -1;
  return v1_cpu_stats (acct, cpu, st, err);
}
