/* update [flags] ID, or update -r FILE|- ID: change a running container's
 * cgroup limits.  Flags and semantics follow runc: memory values take k, m,
 * g, t, p suffixes (powers of 1024, optional "i" and "b", fractions allowed:
 * "1.5g") or -1 for unlimited; with -r the file (a runtime-spec
 * LinuxResources object, "-" = stdin) is used and every other flag is
 * ignored.  Nothing is persisted: state and stats re-read the cgroup. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "spec.h"
#include "state.h"

enum
{
  OPT_MEMORY = 256,
  OPT_MEMORY_RESERVATION,
  OPT_MEMORY_SWAP,
  OPT_KERNEL_MEMORY,
  OPT_KERNEL_MEMORY_TCP,
  OPT_PIDS_LIMIT,
  OPT_CPU_QUOTA,
  OPT_CPU_PERIOD,
  OPT_CPU_SHARES,
  OPT_CPU_RT_PERIOD,
  OPT_CPU_RT_RUNTIME,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_BLKIO_WEIGHT,
  OPT_L3_CACHE,
  OPT_MEM_BW,
};

static const struct option update_opts[] = {
  { "resources", required_argument, 0, 'r' },
  { "memory", required_argument, 0, OPT_MEMORY },
  { "memory-reservation", required_argument, 0, OPT_MEMORY_RESERVATION },
  { "memory-swap", required_argument, 0, OPT_MEMORY_SWAP },
  { "kernel-memory", required_argument, 0, OPT_KERNEL_MEMORY },
  { "kernel-memory-tcp", required_argument, 0, OPT_KERNEL_MEMORY_TCP },
  { "pids-limit", required_argument, 0, OPT_PIDS_LIMIT },
  { "cpu-quota", required_argument, 0, OPT_CPU_QUOTA },
  { "cpu-period", required_argument, 0, OPT_CPU_PERIOD },
  { "cpu-share", required_argument, 0, OPT_CPU_SHARES },   /* runc's name */
  { "cpu-shares", required_argument, 0, OPT_CPU_SHARES },
  { "cpu-rt-period", required_argument, 0, OPT_CPU_RT_PERIOD },
  { "cpu-rt-runtime", required_argument, 0, OPT_CPU_RT_RUNTIME },
  { "cpuset-cpus", required_argument, 0, OPT_CPUSET_CPUS },
  { "cpuset-mems", required_argument, 0, OPT_CPUSET_MEMS },
  { "blkio-weight", required_argument, 0, OPT_BLKIO_WEIGHT },
  { "l3-cache-schema", required_argument, 0, OPT_L3_CACHE },
  { "mem-bw-schema", required_argument, 0, OPT_MEM_BW },
  { 0, 0, 0, 0 },
};

#define UPDATE_USAGE                                                         \
  "usage: sandlock-oci update [--memory N] [--memory-reservation N]\n"      \
  "         [--memory-swap N] [--pids-limit N] [--cpu-quota N]\n"           \
  "         [--cpu-period N] [--cpu-share(s) N] [--cpu-rt-period N]\n"      \
  "         [--cpu-rt-runtime N] [--cpuset-cpus S] [--cpuset-mems S]\n"     \
  "         [--blkio-weight N] ID\n"                                         \
  "       sandlock-oci update -r|--resources FILE|- ID\n"

/* docker/go-units RAMInBytes, which runc uses: "<number>[ ][kmgtp][i][b]",
 * case-insensitive, binary multiples; "-1" means unlimited. */
static int
parse_mem (const char *s, int64_t *out)
{
  static const char units[] = "kmgtp";
  double mult = 1, v;
  const char *p = s, *u;
  char *end;

  if (strcmp (s, "-1") == 0)
    return *out = -1, 0;
  if (!isdigit ((unsigned char) *p))
    return -1;
  while (isdigit ((unsigned char) *p) || *p == '.')
    p++;
  errno = 0;
  v = strtod (s, &end);
  if (errno || end != p)
    return -1;
  if (*p == ' ')
    p++;
  if (*p && (u = strchr (units, tolower ((unsigned char) *p))) != NULL)
    {
      for (const char *k = units; k <= u; k++)
        mult *= 1024;
      p++;
    }
  if (*p == 'i' || *p == 'I')
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p || v * mult >= 9.2e18)
    return -1;
  *out = (int64_t) (v * mult);
  return 0;
}

static int
parse_i64 (const char *s, int64_t *out)
{
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (errno || end == s || *end)
    return -1;
  return *out = v, 0;
}

static int
parse_u64 (const char *s, uint64_t *out)
{
  char *end;
  if (!isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || *end)
    return -1;
  return *out = v, 0;
}

/* One flag into |r|; -1 when the value does not parse. */
static int
apply_flag (int opt, const char *v, struct rt_resources *r)
{
  int64_t i = 0;
  uint64_t u = 0;
  switch (opt)
    {
    case OPT_MEMORY:
      r->memory.limit_present = 1;
      return parse_mem (v, &r->memory.limit);
    case OPT_MEMORY_RESERVATION:
      r->memory.reservation_present = 1;
      return parse_mem (v, &r->memory.reservation);
    case OPT_MEMORY_SWAP:
      r->memory.swap_present = 1;
      return parse_mem (v, &r->memory.swap);
    case OPT_KERNEL_MEMORY:
    case OPT_KERNEL_MEMORY_TCP:
      /* Deprecated and ignored by the kernel (and by runc since 1.1);
       * still validated so a typo is not silently accepted. */
      return parse_mem (v, &i);
    case OPT_PIDS_LIMIT:
      r->pids.limit_present = 1;
      return parse_i64 (v, &r->pids.limit);
    case OPT_CPU_QUOTA:
      r->cpu.quota_present = 1;
      return parse_i64 (v, &r->cpu.quota);
    case OPT_CPU_PERIOD:
      r->cpu.period_present = 1;
      return parse_u64 (v, &r->cpu.period);
    case OPT_CPU_SHARES:
      r->cpu.shares_present = 1;
      return parse_u64 (v, &r->cpu.shares);
    case OPT_CPU_RT_PERIOD:
      r->cpu.realtime_period_present = 1;
      return parse_u64 (v, &r->cpu.realtime_period);
    case OPT_CPU_RT_RUNTIME:
      r->cpu.realtime_runtime_present = 1;
      return parse_i64 (v, &r->cpu.realtime_runtime);
    case OPT_CPUSET_CPUS:
      free (r->cpu.cpus);
      r->cpu.cpus = xstrdup (v);
      return 0;
    case OPT_CPUSET_MEMS:
      free (r->cpu.mems);
      r->cpu.mems = xstrdup (v);
      return 0;
    case OPT_BLKIO_WEIGHT:
      if (parse_u64 (v, &u) < 0 || u > UINT16_MAX)
        return -1;
      r->blkio.weight = (uint16_t) u;
      r->blkio.weight_present = 1;
      return 0;
    default:
      return -1;
    }
}

/* -r FILE or -r - (stdin). */
static int
read_resources (const char *path, struct rt_resources **out,
                struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  bool in = strcmp (path, "-") == 0;

  if (cm_read_file_at (AT_FDCWD, in ? "/dev/stdin" : path, OCI_SPEC_MAX_BYTES,
                       &buf, &len, err) < 0)
    return cm_err_wrap (err, "update: --resources");
  if (oci_resources_parse (buf, len, out, err) < 0)
    return cm_err_wrap (err, "update: --resources %s", in ? "(stdin)" : path);
  return 0;
}

static int
cmd_update (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct rt_resources *r = xcalloc (1, sizeof *r), *file = NULL;
  struct oci_state st = { .dirfd = -1 };
  struct rt_handle *h = NULL;
  const char *rfile = NULL;
  int c, idx = 0, ret = -1;

  while ((c = getopt_long (argc, argv, "+r:", update_opts, &idx)) != -1)
    {
      if (c == 'r')
        rfile = optarg;
      else if (c == OPT_L3_CACHE || c == OPT_MEM_BW)
        {
          cm_err_set (err, EOPNOTSUPP, "update: --%s: Intel RDT is not "
                      "supported by sandlock-oci", update_opts[idx].name);
          goto out;
        }
      else if (c == '?' || c == ':')
        {
          cm_err_set (err, 0, "update: %s", UPDATE_USAGE);
          goto out;
        }
      else if (apply_flag (c, optarg, r) < 0)
        {
          cm_err_set (err, 0, "update: invalid value for --%s: \"%s\"",
                      update_opts[idx].name, optarg);
          goto out;
        }
    }
  if (optind + 1 != argc)
    {
      cm_err_set (err, 0, "update: %s", UPDATE_USAGE);
      goto out;
    }
  if (rfile && read_resources (rfile, &file, err) < 0)
    goto out;
  if (oci_state_load (g, argv[optind], &st, err) < 0)
    goto out;
  if (st.status == OCI_STOPPED)
    {
      cm_err_set (err, 0, "container \"%s\" is not running", st.id);
      goto out;
    }
  if (oci_state_handle (&st, "update", NULL, &h, err) < 0
      || rt_handle_update (h, file ? file : r, err) < 0)
    goto out;
  ret = 0;
out:
  rt_handle_free (h);
  oci_state_free (&st);
  rt_resources_free (file);
  rt_resources_free (r);
  return ret;
}
OCI_COMMAND (update_command, "update", "update a container's resource limits",
             UPDATE_USAGE "\n"
             "Memory values take k, m, g, t, p suffixes (x1024) or -1 for\n"
             "unlimited.  --memory-swap is memory+swap.  With -r the file (a\n"
             "runtime-spec linux.resources object; - reads stdin) is applied\n"
             "and every other flag is ignored, as in runc.\n",
             cmd_update)
