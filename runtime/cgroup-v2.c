/* cgroup v2: one tree, controllers enabled top-down through
 * cgroup.subtree_control.  On a hybrid host the same code makes the
 * container's directory in the controller-less "unified" tree (tracking,
 * cgroup.kill, and the freezer when no v1 freezer is mounted). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"

char *
cg_v2_dir (const struct rt_cgroup *cg)
{
  return xasprintf ("%s%s", cg->host.v2_mount, cg->path);
}

/* Is |word| one of the space-separated words of |list|? */
static bool
has_word (const char *list, const char *word, size_t wl)
{
  for (const char *p = list; *p;)
    {
      size_t n;
      p += strspn (p, " \t\n");
      n = strcspn (p, " \t\n");
      if (n == wl && strncmp (p, word, n) == 0)
        return true;
      p += n;
    }
  return false;
}

/* Does |r| need controller |c| (of length |cl|) on v2? */
static bool
v2_needs (const struct rt_resources *r, const char *c, size_t cl)
{
#define IS(s) (cl == strlen (s) && strncmp (c, s, cl) == 0)
  if (r == NULL)
    return false;
  if (IS ("memory") && (r->memory.limit_present || r->memory.reservation_present
                        || r->memory.swap_present))
    return true;
  if (IS ("pids") && r->pids.limit_present)
    return true;
  if (IS ("cpu") && (r->cpu.shares_present || r->cpu.quota_present
                     || r->cpu.period_present || r->cpu.burst_present
                     || r->cpu.idle_present))
    return true;
  if (IS ("cpuset") && (r->cpu.cpus || r->cpu.mems))
    return true;
  if (cg_v2_limits_need (r, c, cl))
    return true;
  for (size_t i = 0; i < r->unified_len; i++)
    {
      const char *k = r->unified[i].key, *dot = strchr (k, '.');
      if (dot && (size_t) (dot - k) == cl && strncmp (k, c, cl) == 0
          && !IS ("cgroup"))
        return true;
    }
  return false;
#undef IS
}

static const char *const v2_ctrls[] = {
  "cpuset", "cpu", "io", "memory", "pids", "hugetlb", "rdma", "misc",
};

int
cg_v2_check (const struct cg_host *h, const struct rt_resources *r,
             struct cm_err **err)
{
  _cleanup_free_ char *avail = NULL;
  if (r == NULL)
    return 0;
  if (cg_v2_limits_check (r, err) < 0)
    return -1;
  if (cg_read (h->v2_mount, "cgroup.controllers", &avail, err) < 0)
    return -1;
  if (avail == NULL)
    return cm_err_set (err, ENOENT, "cgroup: `%s/cgroup.controllers` is "
                       "missing", h->v2_mount);
  for (size_t i = 0; i < ARRAY_SIZE (v2_ctrls); i++)
    {
      size_t cl = strlen (v2_ctrls[i]);
      if (v2_needs (r, v2_ctrls[i], cl) && !has_word (avail, v2_ctrls[i], cl))
        return cm_err_set (err, ENOENT,
                           "cgroup controller \"%s\" is not available (v2 "
                           "%s/cgroup.controllers lacks it)", v2_ctrls[i],
                           h->v2_mount);
    }
  for (size_t i = 0; i < r->unified_len; i++)
    {
      const char *k = r->unified[i].key, *dot = strchr (k, '.');
      if (dot && strncmp (k, "cgroup.", 7) != 0
          && !has_word (avail, k, (size_t) (dot - k)))
        return cm_err_set (err, ENOENT,
                           "cgroup controller \"%.*s\" is not available (v2 "
                           "%s/cgroup.controllers lacks it; needed by "
                           "linux.resources.unified[\"%s\"])",
                           (int) (dot - k), k, h->v2_mount, k);
    }
  return 0;
}

/* Enables in |dir|'s subtree every available controller not yet enabled
 * there, all in one write; when the kernel refuses the batch (a controller
 * it cannot enable here), one by one, failing only for those |r| needs. */
static int
enable_in (const char *dir, const char *avail, const struct rt_resources *r,
           struct cm_err **err)
{
  _cleanup_free_ char *cur = NULL, *batch = xstrdup ("");
  struct cm_err *e = NULL;

  if (cg_read (dir, "cgroup.subtree_control", &cur, err) < 0)
    return -1;
  for (const char *p = avail; *p;)
    {
      size_t n;
      p += strspn (p, " \t\n");
      n = strcspn (p, " \t\n");
      if (n && !(cur && has_word (cur, p, n)))
        {
          char *b = xasprintf ("%s%s+%.*s", batch, *batch ? " " : "", (int) n,
                               p);
          free (batch);
          batch = b;
        }
      p += n;
    }
  if (*batch == '\0' || cg_write (dir, "cgroup.subtree_control", batch, &e) == 0)
    return 0;
  cm_err_free (&e);
  for (char *save = NULL, *t = strtok_r (batch, " ", &save); t;
       t = strtok_r (NULL, " ", &save))
    if (cg_write (dir, "cgroup.subtree_control", t, &e) < 0)
      {
        if (v2_needs (r, t + 1, strlen (t + 1)))
          {
            *err = e;
            return cm_err_wrap (err, "cgroup controller \"%s\" cannot be "
                                "enabled", t + 1);
          }
        cm_err_free (&e);
      }
  return 0;
}

int
cg_v2_mkdirs (struct rt_cgroup *cg, const struct rt_resources *r,
              struct cm_err **err)
{
  _cleanup_free_ char *avail = NULL, *cur = xstrdup (cg->host.v2_mount);
  const char *s = cg->path + 1;
  bool enable = cg->host.layout == CG_V2;

  if (enable && cg_read (cur, "cgroup.controllers", &avail, err) < 0)
    return -1;
  while (*s)
    {
      const char *e = strchrnul (s, '/');
      char *next;
      if (avail && enable_in (cur, avail, r, err) < 0)
        return -1;
      next = xasprintf ("%s/%.*s", cur, (int) (e - s), s);
      free (cur);
      cur = next;
      if (mkdir (cur, 0755) == 0)
        cg_made (cg, cur);
      else if (errno != EEXIST)
        return cm_err_set (err, errno, "cgroup: mkdir `%s`", cur);
      s = *e ? e + 1 : e;
    }
  cg->v2_on = true;
  return 0;
}

static int
v2_memory (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  long long lim = r->memory.limit, swap = r->memory.swap;
  if (r->memory.limit_present
      && (lim < 0 ? cg_write (dir, "memory.max", "max", err)
                  : cg_writef (dir, "memory.max", err, "%lld", lim)) < 0)
    return -1;
  if (r->memory.reservation_present
      && (r->memory.reservation < 0
              ? cg_write (dir, "memory.low", "max", err)
              : cg_writef (dir, "memory.low", err, "%lld",
                           (long long) r->memory.reservation)) < 0)
    return -1;
  if (!r->memory.swap_present)
    return 0;
  /* OCI swap is memory+swap; v2 limits swap alone. */
  if (swap < 0)
    return cg_exists (dir, "memory.swap.max")
               ? cg_write (dir, "memory.swap.max", "max", err)
               : 0;
  if (!r->memory.limit_present || lim < 0)
    return cm_err_set (err, EINVAL, "linux.resources.memory.swap needs "
                       "memory.limit on cgroup v2 (swap is memory+swap)");
  if (swap < lim)
    return cm_err_set (err, EINVAL,
                       "linux.resources.memory.swap (%lld) must be >= "
                       "memory.limit (%lld): it is memory+swap", swap, lim);
  if (!cg_exists (dir, "memory.swap.max"))
    return cm_err_set (err, ENOENT, "linux.resources.memory.swap: `%s` has "
                       "no memory.swap.max (swap accounting is off)", dir);
  return cg_writef (dir, "memory.swap.max", err, "%lld", swap - lim);
}

/* cpu.max is "quota period" in one file: keep the half not being set. */
static int
v2_cpu_max (const char *dir, const struct rt_resources *r,
            struct cm_err **err)
{
  _cleanup_free_ char *cur = NULL;
  char quota[32] = "max";
  unsigned long long period = 100000;
  if (cg_read (dir, "cpu.max", &cur, err) < 0)
    return -1;
  if (cur && sscanf (cur, "%31s %llu", quota, &period) != 2)
    {
      snprintf (quota, sizeof quota, "max");
      period = 100000;
    }
  if (r->cpu.quota_present)
    {
      if (r->cpu.quota > 0)
        snprintf (quota, sizeof quota, "%lld", (long long) r->cpu.quota);
      else
        snprintf (quota, sizeof quota, "max");
    }
  if (r->cpu.period_present && r->cpu.period)
    period = r->cpu.period;
  return cg_writef (dir, "cpu.max", err, "%s %llu", quota, period);
}

static int
v2_cpu (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  if ((r->cpu.realtime_runtime_present && r->cpu.realtime_runtime)
      || (r->cpu.realtime_period_present && r->cpu.realtime_period))
    return cm_err_set (err, EOPNOTSUPP,
                       "linux.resources.cpu.realtimeRuntime/realtimePeriod: "
                       "not supported by cgroup v2");
  if (r->cpu.shares_present && r->cpu.shares
      && cg_writef (dir, "cpu.weight", err, "%llu",
                    (unsigned long long) cg_shares_to_weight (r->cpu.shares))
             < 0)
    return -1;
  if ((r->cpu.quota_present || r->cpu.period_present)
      && v2_cpu_max (dir, r, err) < 0)
    return -1;
  if (r->cpu.burst_present
      && cg_writef (dir, "cpu.max.burst", err, "%llu",
                    (unsigned long long) r->cpu.burst) < 0)
    return -1;
  if (r->cpu.idle_present
      && cg_writef (dir, "cpu.idle", err, "%lld", (long long) r->cpu.idle) < 0)
    return -1;
  if (r->cpu.cpus && cg_write (dir, "cpuset.cpus", r->cpu.cpus, err) < 0)
    return -1;
  if (r->cpu.mems && cg_write (dir, "cpuset.mems", r->cpu.mems, err) < 0)
    return -1;
  return 0;
}

static int
v2_pids_io (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  if (r->pids.limit_present
      && (r->pids.limit >= 0 ? cg_writef (dir, "pids.max", err, "%lld",
                                         (long long) r->pids.limit)
                            : cg_write (dir, "pids.max", "max", err)) < 0)
    return -1;
  /* Best effort, as runc: BFQ takes the blkio scale, io.weight its own. */
  if (r->blkio.weight_present && r->blkio.weight)
    {
      if (cg_exists (dir, "io.bfq.weight"))
        return cg_writef (dir, "io.bfq.weight", err, "%u", r->blkio.weight);
      if (cg_exists (dir, "io.weight"))
        return cg_writef (dir, "io.weight", err, "default %llu",
                          (unsigned long long) cg_blkio_to_io_weight (
                              r->blkio.weight));
    }
  return 0;
}

static int
v2_unified (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  for (size_t i = 0; i < r->unified_len; i++)
    {
      const char *k = r->unified[i].key;
      if (*k == '\0' || *k == '.' || strchr (k, '/'))
        return cm_err_set (err, EINVAL, "linux.resources.unified[\"%s\"]: "
                           "not a cgroup file name", k);
      if (cg_write (dir, k, r->unified[i].value ? r->unified[i].value : "",
                    err) < 0)
        return cm_err_wrap (err, "linux.resources.unified[\"%s\"]", k);
    }
  return 0;
}

int
cg_v2_apply (struct rt_cgroup *cg, const struct rt_resources *r,
             struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg);
  if (v2_memory (dir, r, err) < 0 || v2_cpu (dir, r, err) < 0
      || v2_pids_io (dir, r, err) < 0 || cg_v2_limits_apply (dir, r, err) < 0
      || v2_unified (dir, r, err) < 0)
    return -1;
  return 0;
}

static int
events_frozen (const char *dir, struct cm_err **err)
{
  _cleanup_free_ char *ev = NULL;
  uint64_t v = 0;
  if (cg_read (dir, "cgroup.events", &ev, err) < 0)
    return -1;
  if (ev == NULL)
    return cm_err_set (err, ENOENT, "cgroup: `%s/cgroup.events` is missing "
                       "(the v2 freezer needs Linux >= 5.2)", dir);
  return cg_keyed (ev, "frozen", &v) && v == 1 ? 1 : 0;
}

long
cg_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int
events_watch (const char *dir, struct cm_err **err)
{
  _cleanup_free_ char *ev = xasprintf ("%s/cgroup.events", dir);
  int ifd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  if (ifd < 0)
    return cm_err_set (err, errno, "cgroup: inotify_init1");
  if (inotify_add_watch (ifd, ev, IN_MODIFY) < 0)
    {
      int e = errno;
      close (ifd);
      return e == ENOENT ? -2 : cm_err_set (err, e, "cgroup: watch `%s`", ev);
    }
  return ifd;
}

/* 0: |key| reads |want|; 1: it does not; 2: no cgroup.events. */
static int
events_is (const char *dir, const char *key, uint64_t want, uint64_t *v,
           struct cm_err **err)
{
  _cleanup_free_ char *t = NULL;
  *v = 0;
  if (cg_read (dir, "cgroup.events", &t, err) < 0)
    return -1;
  if (t == NULL)
    return 2;
  cg_keyed (t, key, v);
  return *v == want ? 0 : 1;
}

/* The watch is made only when the value is not there yet, and the file is
 * read again once it is set, so no transition is missed: a watch is not
 * free (closing an inotify fd waits for an SRCU grace period, ~20 ms here),
 * and most waits (delete of an exited container, freeze of an idle one)
 * find the value on the first read. */
int
cg_v2_events_wait (const char *dir, const char *key, uint64_t want,
                   long deadline, struct cm_err **err)
{
  _cleanup_fd_ int ifd = -1;
  uint64_t v;
  int r = events_is (dir, key, want, &v, err);
  if (r != 1)
    return r < 0 ? -1 : r == 2;
  ifd = events_watch (dir, err);
  if (ifd == -2)
    return 1;
  if (ifd < 0)
    return -1;
  for (;;)
    {
      char buf[4096];
      struct pollfd pfd = { .fd = ifd, .events = POLLIN };
      long wait;
      r = events_is (dir, key, want, &v, err);
      if (r != 1)
        return r < 0 ? -1 : r == 2;
      wait = deadline - cg_now_ms ();
      r = wait > 0 ? poll (&pfd, 1, (int) wait) : 0;
      if (r < 0 && errno != EINTR)
        return cm_err_set (err, errno, "cgroup: poll `%s/cgroup.events`",
                           dir);
      if (r == 0)
        return cm_err_set (err, ETIMEDOUT, "`%s/cgroup.events` still says "
                           "%s %" PRIu64, dir, key, v);
      while (read (ifd, buf, sizeof buf) > 0)
        ;
    }
}

/* cgroup.freeze is asynchronous: "frozen 1" appears in cgroup.events once
 * every task has stopped.  30 s is a bound, not a pace: a task stuck in
 * the kernel never freezes. */
int
cg_v2_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg);
  int r;

  if (cg_write (dir, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  r = cg_v2_events_wait (dir, "frozen", frozen ? 1 : 0, cg_now_ms () + 30000,
                         err);
  if (r > 0)
    return events_frozen (dir, err);
  if (r < 0 && (*err)->errno_ == ETIMEDOUT)
    {
      cm_err_free (err);
      return cm_err_set (err, ETIMEDOUT, "cgroup: `%s` did not become %s "
                         "within 30s", dir, frozen ? "frozen" : "thawed");
    }
  return r;
}

int
cg_v2_is_frozen (struct rt_cgroup *cg, struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg);
  return events_frozen (dir, err);
}

static int
read_u64 (const char *dir, const char *file, uint64_t *out,
          struct cm_err **err)
{
  _cleanup_free_ char *t = NULL;
  if (cg_read (dir, file, &t, err) < 0)
    return -1;
  if (t)
    *out = cg_num (t);
  return 0;
}

int
cg_v2_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
             struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg), *ev = NULL, *cpu = NULL;
  uint64_t v;

  if (read_u64 (dir, "memory.current", &st->memory_usage, err) < 0
      || read_u64 (dir, "memory.max", &st->memory_limit, err) < 0
      || read_u64 (dir, "memory.peak", &st->memory_max_usage, err) < 0
      || read_u64 (dir, "memory.swap.current", &st->memory_swap_usage, err) < 0
      || read_u64 (dir, "pids.current", &st->pids_current, err) < 0
      || read_u64 (dir, "pids.max", &st->pids_limit, err) < 0)
    return -1;
  if (cg_read (dir, "memory.events", &ev, err) < 0)
    return -1;
  if (ev)
    cg_keyed (ev, "oom_kill", &st->oom_kill_count);
  if (cg_read (dir, "cpu.stat", &cpu, err) < 0)
    return -1;
  if (cpu)
    {
      if (cg_keyed (cpu, "usage_usec", &v))
        st->cpu_usage_ns = v * 1000;
      if (cg_keyed (cpu, "user_usec", &v))
        st->cpu_user_ns = v * 1000;
      if (cg_keyed (cpu, "system_usec", &v))
        st->cpu_system_ns = v * 1000;
      cg_keyed (cpu, "nr_throttled", &st->cpu_throttled_periods);
      if (cg_keyed (cpu, "throttled_usec", &v))
        st->cpu_throttled_ns = v * 1000;
    }
  return 0;
}

/* Linux >= 5.14: one write kills the whole subtree, forks included. */
int
cg_v2_kill (struct rt_cgroup *cg, struct cm_err **err)
{
  _cleanup_free_ char *dir = cg_v2_dir (cg);
  if (!cg_exists (dir, "cgroup.kill"))
    return 0;
  return cg_write (dir, "cgroup.kill", "1", err) < 0 ? -1 : 1;
}
