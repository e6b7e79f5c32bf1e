/* events [--stats] [--interval D] ID: container statistics as JSON, the
 * shape runc prints ({"type":"stats","id":ID,"data":{...}}), and
 * {"type":"oom","id":ID} when the kernel OOM-kills inside the cgroup.
 *
 * --stats prints one sample and exits.  Otherwise a sample every interval
 * until the container's init exits: a timerfd paces the samples and a pidfd
 * of the init ends the loop (poll on both, no sleep).  The state lock is
 * dropped before the loop so delete and friends are not blocked. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "runtime/runtime.h"
#include "state.h"

#define EVENTS_USAGE \
  "usage: sandlock-oci events [--stats] [--interval DURATION] ID"

/* A Go duration ("5s", "100ms", "1m30s", "1.5s"), as runc's flag takes. */
static int
parse_duration (const char *s, uint64_t *ns)
{
  static const struct
  {
    const char *unit;
    double mult;
  } units[] = { { "ns", 1 },     { "us", 1e3 },    { "\xc2\xb5s", 1e3 },
                { "ms", 1e6 },   { "s", 1e9 },     { "m", 60e9 },
                { "h", 3600e9 } };
  double total = 0;

  if (*s == '\0')
    return -1;
  while (*s)
    {
      char *end;
      size_t best = 0, blen = 0;
      if (!((*s >= '0' && *s <= '9') || *s == '.'))
        return -1;
      errno = 0;
      double v = strtod (s, &end);
      if (errno || end == s)
        return -1;
      for (size_t i = 0; i < ARRAY_SIZE (units); i++)
        {
          size_t l = strlen (units[i].unit);
          if (strncmp (end, units[i].unit, l) == 0 && l > blen)
            best = i, blen = l;
        }
      if (blen == 0)
        return -1;
      total += v * units[best].mult;
      s = end + blen;
    }
  if (total < 1 || total > 1e18)
    return -1;
  *ns = (uint64_t) total;
  return 0;
}

#define S(g, s) yajl_gen_string ((g), (const unsigned char *) (s), strlen (s))

static void
num (yajl_gen g, const char *k, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%" PRIu64, v);
  S (g, k);
  yajl_gen_number (g, buf, (size_t) n);
}

static void
mem_entry (yajl_gen g, const char *k, uint64_t limit, uint64_t usage,
           uint64_t max)
{
  S (g, k);
  yajl_gen_map_open (g);
  num (g, "limit", limit);
  num (g, "usage", usage);
  num (g, "max", max);
  num (g, "failcnt", 0);
  yajl_gen_map_close (g);
}

static void
gen_stats (yajl_gen g, const struct rt_cgroup_stats *s)
{
  S (g, "cpu");
  yajl_gen_map_open (g);
  S (g, "usage");
  yajl_gen_map_open (g);
  num (g, "total", s->cpu_usage_ns);
  num (g, "kernel", s->cpu_system_ns);
  num (g, "user", s->cpu_user_ns);
  yajl_gen_map_close (g);
  S (g, "throttling");
  yajl_gen_map_open (g);
  num (g, "throttledPeriods", s->cpu_throttled_periods);
  num (g, "throttledTime", s->cpu_throttled_ns);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);

  S (g, "memory");
  yajl_gen_map_open (g);
  mem_entry (g, "usage", s->memory_limit, s->memory_usage,
             s->memory_max_usage);
  mem_entry (g, "swap", 0, s->memory_swap_usage, 0);
  S (g, "raw");
  yajl_gen_map_open (g);
  num (g, "oom_kill", s->oom_kill_count);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);

  S (g, "pids");
  yajl_gen_map_open (g);
  num (g, "current", s->pids_current);
  /* runc reports an unlimited pids.max ("max") as 0 */
  num (g, "limit", s->pids_limit == UINT64_MAX ? 0 : s->pids_limit);
  yajl_gen_map_close (g);
}

/* One event line on stdout; |s| NULL for an oom event (no data). */
static void
print_event (const char *type, const char *id, const struct rt_cgroup_stats *s)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;

  yajl_gen_map_open (g);
  S (g, "type");
  S (g, type);
  S (g, "id");
  S (g, id);
  if (s)
    {
      S (g, "data");
      yajl_gen_map_open (g);
      gen_stats (g, s);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  fwrite (buf, 1, len, stdout);
  fputc ('\n', stdout);
  fflush (stdout);
  yajl_gen_free (g);
}

/* Prints an oom event when the cgroup's oom_kill count went up, then the
 * stats when |with_stats|. */
static int
sample (struct rt_handle *h, const char *id, uint64_t *oom, bool with_stats,
        struct cm_err **err)
{
  struct rt_cgroup_stats s;
  if (rt_handle_stats (h, &s, err) < 0)
    return -1;
  if (s.oom_kill_count > *oom)
    print_event ("oom", id, NULL);
  *oom = s.oom_kill_count;
  if (with_stats)
    print_event ("stats", id, &s);
  return 0;
}

static int
events_loop (struct rt_handle *h, const char *id, int pidfd,
             uint64_t interval_ns, struct cm_err **err)
{
  struct itimerspec its = { 0 };
  struct rt_cgroup_stats s;
  _cleanup_fd_ int tfd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC);
  uint64_t oom;

  if (tfd < 0)
    return cm_err_set (err, errno, "events: timerfd_create");
  its.it_interval.tv_sec = (time_t) (interval_ns / 1000000000u);
  its.it_interval.tv_nsec = (long) (interval_ns % 1000000000u);
  its.it_value = its.it_interval;
  if (timerfd_settime (tfd, 0, &its, NULL) < 0)
    return cm_err_set (err, errno, "events: timerfd_settime");
  /* OOM kills before we started are not news. */
  if (rt_handle_stats (h, &s, err) < 0)
    return -1;
  oom = s.oom_kill_count;
  for (;;)
    {
      struct pollfd p[2] = { { tfd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
      uint64_t ticks;
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return cm_err_set (err, errno, "events: poll");
        }
      if (p[1].revents)
        {
          /* The init is gone: report an OOM kill that ended it, if the
           * cgroup still exists (a concurrent delete may have removed it). */
          struct cm_err *e = NULL;
          sample (h, id, &oom, false, &e);
          cm_err_free (&e);
          return 0;
        }
      if (read (tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
        return cm_err_set (err, errno, "events: read timerfd");
      if (sample (h, id, &oom, true, err) < 0)
        return -1;
    }
}

static int
cmd_events (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[]
      = { { "stats", no_argument, 0, 's' },
          { "interval", required_argument, 0, 'i' },
          { 0, 0, 0, 0 } };
  struct oci_state st = { .dirfd = -1 };
  struct rt_handle *h = NULL;
  _cleanup_fd_ int pidfd = -1;
  uint64_t interval = 5000000000u, oom = 0;
  bool once = false;
  int c, ret = -1;

  while ((c = getopt_long (argc, argv, "+", opts, NULL)) != -1)
    switch (c)
      {
      case 's':
        once = true;
        break;
      case 'i':
        if (parse_duration (optarg, &interval) < 0)
          return cm_err_set (err, 0, "events: invalid value for --interval: "
                             "\"%s\" (a duration such as 5s or 100ms)",
                             optarg);
        break;
      default:
        return cm_err_set (err, 0, "events: " EVENTS_USAGE);
      }
  if (optind + 1 != argc)
    return cm_err_set (err, 0, "events: " EVENTS_USAGE);
  if (oci_state_load (g, argv[optind], &st, err) < 0)
    goto out;
  if (st.status == OCI_STOPPED)
    {
      cm_err_set (err, 0, "container \"%s\" is not running", st.id);
      goto out;
    }
  if (oci_state_handle (&st, "events", NULL, &h, err) < 0)
    goto out;
  if (once)
    {
      ret = sample (h, st.id, &oom, true, err);
      goto out;
    }
  pidfd = (int) syscall (SYS_pidfd_open, st.pid, 0);
  if (pidfd < 0 || !rt_proc_alive (st.pid, st.start_time))
    {
      cm_err_set (err, 0, "container \"%s\" is not running", st.id);
      goto out;
    }
  /* Drop the container lock: the loop may run for the container's life. */
  close (st.dirfd);
  st.dirfd = -1;
  ret = events_loop (h, st.id, pidfd, interval, err);
out:
  rt_handle_free (h);
  oci_state_free (&st);
  return ret < 0 ? -1 : 0;
}
OCI_COMMAND (events_command, "events", "container statistics and OOM events",
             EVENTS_USAGE "\n\n"
             "--stats prints one stats sample as JSON.  Otherwise a sample\n"
             "every --interval (default 5s) and an \"oom\" event whenever the\n"
             "kernel OOM-kills in the container, until the container exits.\n",
             cmd_events)
