/* ps [-f table|json] ID [ps options]: the processes of a container.
 *
 * json is what containerd's runc shim parses: an array of host pids.  runc
 * builds the table by running /bin/ps; sandlock-oci never runs other
 * programs, so the table is read from /proc here (UID PID PPID STAT TIME
 * CMD).  ps's own options cannot be honoured that way: only -e/-f/-ef
 * (whose output this table already matches in spirit) are accepted. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/cgroup.h"
#include "state.h"

#define PS_USAGE "usage: sandlock-oci ps [-f|--format table|json] ID [-e|-f|-ef]"

struct ps_row
{
  long uid, ppid;
  char state;
  unsigned long long ticks;     /* utime + stime */
  char *cmd;
};

/* Reads what the table shows from /proc/PID.  A process that exits
 * meanwhile gives 0: it is simply not listed. */
static int
ps_read (pid_t pid, struct ps_row *r)
{
  _cleanup_free_ char *status = NULL, *stat = NULL, *cmdline = NULL;
  char path[64];
  struct rt_err *e = NULL;
  size_t len = 0;
  const char *p;

  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  if (rt_read_file_at (AT_FDCWD, path, 1 << 16, &status, NULL, &e) < 0)
    return rt_err_free (&e), 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (rt_read_file_at (AT_FDCWD, path, 4096, &stat, NULL, &e) < 0)
    return rt_err_free (&e), 0;
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  if (rt_read_file_at (AT_FDCWD, path, 4096, &cmdline, &len, &e) < 0)
    rt_err_free (&e);
  r->uid = (p = strstr (status, "\nUid:")) ? strtol (p + 5, NULL, 10) : -1;
  r->ppid = (p = strstr (status, "\nPPid:")) ? strtol (p + 6, NULL, 10) : 0;
  /* stat: "pid (comm) S ppid ..."; comm may hold spaces and parens, so
   * fields are counted from the last ')'. */
  unsigned long long utime, stime;
  p = strrchr (stat, ')');
  if (p == NULL || sscanf (p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                           "%llu %llu", &r->state, &utime, &stime) != 3)
    return 0;
  r->ticks = utime + stime;
  if (cmdline && len > 0)
    {
      for (size_t i = 0; i + 1 < len; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      r->cmd = xstrdup (cmdline);
    }
  else
    {
      /* kernel threads and zombies: [comm], as ps shows them */
      const char *o = strchr (stat, '(');
      r->cmd = xasprintf ("[%.*s]", o ? (int) (p - o - 1) : 0, o ? o + 1 : "");
    }
  return 1;
}

static void
ps_table (const pid_t *pids, size_t n)
{
  long hz = sysconf (_SC_CLK_TCK);
  printf ("%-8s %-8s %-8s %-4s %-9s %s\n", "UID", "PID", "PPID", "STAT",
          "TIME", "CMD");
  for (size_t i = 0; i < n; i++)
    {
      struct ps_row r = { 0 };
      unsigned long long s;
      if (ps_read (pids[i], &r) <= 0)
        continue;
      s = hz > 0 ? r.ticks / (unsigned long long) hz : 0;
      printf ("%-8ld %-8d %-8ld %-4c %02llu:%02llu:%02llu %s\n", r.uid,
              (int) pids[i], r.ppid, r.state, s / 3600, s / 60 % 60, s % 60,
              r.cmd);
      free (r.cmd);
    }
}

static int
pid_cmp (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}

static int
cmd_ps (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                        { 0, 0, 0, 0 } };
  struct oci_state st = { .dirfd = -1 };
  struct rt_cgroup *cg = NULL;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  bool json = false;
  int c, ret = -1;

  while ((c = getopt_long (argc, argv, "+f:", opts, NULL)) != -1)
    {
      if (c != 'f')
        return rt_err_set (err, 0, "ps: " PS_USAGE);
      if (strcmp (optarg, "json") == 0)
        json = true;
      else if (strcmp (optarg, "table") != 0)
        return rt_err_set (err, 0, "ps: invalid format option \"%s\": "
                           "expected table or json", optarg);
    }
  if (optind >= argc)
    return rt_err_set (err, 0, "ps: " PS_USAGE);
  for (int i = optind + 1; i < argc; i++)
    if (json || !(strcmp (argv[i], "-e") == 0 || strcmp (argv[i], "-f") == 0
                  || strcmp (argv[i], "-ef") == 0))
      return rt_err_set (err, 0, "ps: ps option \"%s\" is not supported%s "
                         "(sandlock-oci reads /proc itself rather than running "
                         "ps)", argv[i], json ? " with --format json" : "");
  if (oci_state_load (g, argv[optind], &st, err) < 0)
    goto out;
  if (strcmp (st.status, "stopped") == 0 && !json)
    {
      rt_err_set (err, 0, "container \"%s\" is not running", st.id);
      goto out;
    }
  if (st.cgroup_path)
    {
      if (rt_cgroup_open (st.cgroup_path, &cg, err) < 0
          || rt_cgroup_pids (cg, &pids, &n, err) < 0)
        goto out;
    }
  else if (strcmp (st.status, "stopped") != 0)
    {
      /* No cgroup: the init is all we can vouch for. */
      pids = xmalloc (sizeof *pids);
      pids[n++] = st.pid;
    }
  qsort (pids, n, sizeof *pids, pid_cmp);
  if (json)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      printf ("]\n");
    }
  else
    ps_table (pids, n);
  ret = 0;
out:
  rt_cgroup_free (cg);
  oci_state_free (&st);
  return ret;
}
OCI_COMMAND (ps_command, "ps", "list the processes of a container",
             "usage: sandlock-oci ps [-f|--format table|json] ID [-e|-f|-ef]\n\n"
             "json: an array of host pids (what containerd's shim reads).\n"
             "table: UID PID PPID STAT TIME CMD, read from /proc.\n",
             cmd_ps)
