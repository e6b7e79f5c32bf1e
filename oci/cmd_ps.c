/* ps [-f table|json] ID [ps options]: the processes of a container.
 *
 * json is what containerd's runc shim parses: an array of host pids.  runc
 * builds the table by running ps(1) with the options after the id and
 * keeping the lines of the container's pids; sandlock-oci never runs other
 * programs, so it reads /proc itself and implements the ps options people
 * pass to `runc ps`, with procps' field names, headers and formats:
 *
 *   -e -A -f (and a x as BSD letters): every process of the container
 *     is always listed, so selection options are accepted and change
 *     nothing; -f is the default table (UID PID PPID STAT TIME CMD).
 *   -o LIST, -oLIST, o LIST, --format LIST, --format=LIST: the columns
 *     (repeatable; "pid=HEADER" renames a column, "pid=" hides its header,
 *     and the header line is left out when every header is empty).
 *   u (BSD, as in `aux`): USER PID %CPU %MEM VSZ RSS TTY STAT START TIME
 *     COMMAND.
 *   --no-headers, --no-heading, h: no header line.  w, -w: accepted (no
 *     column is ever cut).
 *
 * Anything else is refused by name rather than ignored. */
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "state.h"

#define PS_USAGE                                                            \
  "usage: sandlock-oci ps [-f|--format table|json] ID [-e|-f|-ef|aux|\n"    \
  "         -o LIST|--format LIST|--no-headers]"

/* What one process shows, read from /proc/PID/{stat,status,cmdline}. */
struct ps_proc
{
  pid_t pid;
  long ppid, pgid, sid, tpgid, nice, nlwp;
  long uid, ruid, gid, rgid;
  unsigned tty_nr;
  char state;
  bool locked;                  /* VmLck > 0 */
  unsigned long long ticks;     /* utime + stime */
  unsigned long long start;     /* starttime, ticks after boot */
  unsigned long long vsz, rss;  /* KiB */
  char comm[64];
  char *args;                   /* cmdline, or [comm] when empty */
};

/* Machine facts the derived fields need, read once. */
struct ps_env
{
  long hz;
  double uptime;                /* seconds since boot */
  time_t boot;                  /* wall clock of boot */
  unsigned long long mem_kib;   /* MemTotal */
};

struct ps_field
{
  const char *name;
  const char *header;
  bool right;                   /* numbers align right */
  void (*fmt) (const struct ps_proc *p, const struct ps_env *e, char *buf,
               size_t n);
};

struct ps_col
{
  const struct ps_field *f;
  char *header;
  size_t width;                 /* NAME:WIDTH, a minimum (nothing is cut) */
};

static long
status_long (const char *status, const char *key, int idx)
{
  const char *p = strstr (status, key);
  char *end;
  long v = -1;
  if (p == NULL)
    return -1;
  p += strlen (key);
  for (int i = 0; i <= idx; i++, p = end)
    {
      v = strtol (p, &end, 10);
      if (end == p)
        return -1;
    }
  return v;
}

/* A process that exits meanwhile gives 0: it is simply not listed. */
static int
ps_read (pid_t pid, long page_kib, struct ps_proc *r)
{
  _cleanup_free_ char *status = NULL, *stat = NULL, *cmdline = NULL;
  char path[64];
  struct cm_err *e = NULL;
  size_t len = 0;
  const char *open_paren, *close_paren;
  long rss_pages = 0;
  unsigned long long vsize = 0;

  memset (r, 0, sizeof *r);
  r->pid = pid;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (cm_read_file_at (AT_FDCWD, path, 4096, &stat, NULL, &e) < 0)
    return cm_err_free (&e), 0;
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  if (cm_read_file_at (AT_FDCWD, path, 1 << 16, &status, NULL, &e) < 0)
    return cm_err_free (&e), 0;
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  if (cm_read_file_at (AT_FDCWD, path, 1 << 16, &cmdline, &len, &e) < 0)
    cm_err_free (&e);
  /* "pid (comm) S ppid ...": comm may hold spaces and parens, so fields
   * are counted from the last ')'. */
  open_paren = strchr (stat, '(');
  close_paren = strrchr (stat, ')');
  if (open_paren == NULL || close_paren == NULL || close_paren < open_paren)
    return 0;
  snprintf (r->comm, sizeof r->comm, "%.*s",
            (int) (close_paren - open_paren - 1), open_paren + 1);
  {
    unsigned long long ut, st;
    long prio;
    if (sscanf (close_paren + 2,
                "%c %ld %ld %ld %u %ld %*u %*u %*u %*u %*u %llu %llu %*d %*d "
                "%ld %ld %ld %*d %llu %llu %ld",
                &r->state, &r->ppid, &r->pgid, &r->sid, &r->tty_nr, &r->tpgid,
                &ut, &st, &prio, &r->nice, &r->nlwp, &r->start, &vsize,
                &rss_pages)
        != 14)
      return 0;
    r->ticks = ut + st;
  }
  /* status' VmRSS sums what stat's rss may lag behind on (per-thread
   * counters): procps reads status too. */
  r->vsz = vsize / 1024;
  r->rss = rss_pages > 0 ? (unsigned long long) rss_pages * page_kib : 0;
  if (status_long (status, "\nVmRSS:", 0) >= 0)
    r->rss = (unsigned long long) status_long (status, "\nVmRSS:", 0);
  r->ruid = status_long (status, "\nUid:", 0);
  r->uid = status_long (status, "\nUid:", 1);
  r->rgid = status_long (status, "\nGid:", 0);
  r->gid = status_long (status, "\nGid:", 1);
  r->locked = status_long (status, "\nVmLck:", 0) > 0;
  if (cmdline && len > 0)
    {
      while (len > 0 && cmdline[len - 1] == '\0')
        len--;
      for (size_t i = 0; i < len; i++)
        if (cmdline[i] == '\0' || cmdline[i] == '\n')
          cmdline[i] = ' ';
      cmdline[len] = '\0';
      r->args = cm_steal_ptr (&cmdline);
    }
  else
    r->args = xasprintf ("[%s]", r->comm);  /* kernel threads, zombies */
  return 1;
}

static void
ps_env_read (struct ps_env *e)
{
  _cleanup_free_ char *up = NULL, *mem = NULL;
  struct cm_err *err = NULL;
  const char *p;

  e->hz = sysconf (_SC_CLK_TCK);
  if (e->hz <= 0)
    e->hz = 100;
  if (cm_read_file_at (AT_FDCWD, "/proc/uptime", 256, &up, NULL, &err) == 0)
    e->uptime = strtod (up, NULL);
  else
    cm_err_free (&err);
  e->boot = time (NULL) - (time_t) e->uptime;
  if (cm_read_file_at (AT_FDCWD, "/proc/meminfo", 1 << 16, &mem, NULL, &err)
      == 0)
    {
      if ((p = strstr (mem, "MemTotal:")) != NULL)
        e->mem_kib = strtoull (p + 9, NULL, 10);
    }
  else
    cm_err_free (&err);
}

/* ---------------------------------------------------------------- fields */

#define NUM_FMT(fn, expr)                                                   \
  static void fn (const struct ps_proc *p, const struct ps_env *e,          \
                  char *buf, size_t n)                                      \
  {                                                                         \
    (void) e;                                                               \
    snprintf (buf, n, "%lld", (long long) (expr));                          \
  }

NUM_FMT (f_pid, p->pid)
NUM_FMT (f_ppid, p->ppid)
NUM_FMT (f_pgid, p->pgid)
NUM_FMT (f_sid, p->sid)
NUM_FMT (f_tpgid, p->tpgid)
NUM_FMT (f_uid, p->uid)
NUM_FMT (f_ruid, p->ruid)
NUM_FMT (f_gid, p->gid)
NUM_FMT (f_rgid, p->rgid)
NUM_FMT (f_nice, p->nice)
NUM_FMT (f_nlwp, p->nlwp)
NUM_FMT (f_vsz, p->vsz)
NUM_FMT (f_rss, p->rss)

/* Names as the host's ps shows them (it runs on the host too): the
 * number when the host has no such user or group, as procps does. */
static void
f_user (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  struct passwd *pw = p->uid >= 0 ? getpwuid ((uid_t) p->uid) : NULL;
  (void) e;
  if (pw)
    snprintf (buf, n, "%s", pw->pw_name);
  else
    snprintf (buf, n, "%ld", p->uid);
}

static void
f_ruser (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  struct ps_proc q = *p;
  q.uid = p->ruid;
  f_user (&q, e, buf, n);
}

static void
f_group (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  struct group *gr = p->gid >= 0 ? getgrgid ((gid_t) p->gid) : NULL;
  (void) e;
  if (gr)
    snprintf (buf, n, "%s", gr->gr_name);
  else
    snprintf (buf, n, "%ld", p->gid);
}

static void
f_comm (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  (void) e;
  snprintf (buf, n, "%s", p->comm);
}

static void
f_state (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  (void) e;
  snprintf (buf, n, "%c", p->state);
}

/* procps' STAT: state, then < N (nice), L (locked pages), s (session
 * leader), l (threads), + (foreground process group of its tty). */
static void
f_stat (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  (void) e;
  snprintf (buf, n, "%c%s%s%s%s%s", p->state,
            p->nice < 0 ? "<" : p->nice > 0 ? "N" : "", p->locked ? "L" : "",
            p->sid == p->pid ? "s" : "", p->nlwp > 1 ? "l" : "",
            p->tpgid != -1 && p->tpgid == p->pgid ? "+" : "");
}

/* [DD-]HH:MM:SS of CPU time. */
static void
f_time (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  unsigned long long s = p->ticks / (unsigned long long) e->hz;
  if (s >= 86400)
    snprintf (buf, n, "%llu-%02llu:%02llu:%02llu", s / 86400, s / 3600 % 24,
              s / 60 % 60, s % 60);
  else
    snprintf (buf, n, "%02llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
}

static double
elapsed (const struct ps_proc *p, const struct ps_env *e)
{
  double t = e->uptime - (double) p->start / (double) e->hz;
  return t > 0 ? t : 0;
}

/* [[DD-]HH:]MM:SS since the process started. */
static void
f_etime (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  unsigned long long s = (unsigned long long) elapsed (p, e);
  if (s >= 86400)
    snprintf (buf, n, "%llu-%02llu:%02llu:%02llu", s / 86400, s / 3600 % 24,
              s / 60 % 60, s % 60);
  else if (s >= 3600)
    snprintf (buf, n, "%02llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf (buf, n, "%02llu:%02llu", s / 60, s % 60);
}

NUM_FMT (f_etimes, elapsed (p, e))

/* BSD TIME (ps u): minutes:seconds of CPU time. */
static void
f_bsdtime (const struct ps_proc *p, const struct ps_env *e, char *buf,
           size_t n)
{
  unsigned long long s = p->ticks / (unsigned long long) e->hz;
  snprintf (buf, n, "%llu:%02llu", s / 60, s % 60);
}

/* CPU time over lifetime, as procps computes %CPU (and C, its integer). */
static double
pcpu (const struct ps_proc *p, const struct ps_env *e)
{
  double t = elapsed (p, e);
  return t > 0 ? (double) p->ticks / (double) e->hz * 100.0 / t : 0;
}

static void
f_pcpu (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  snprintf (buf, n, "%.1f", pcpu (p, e));
}

NUM_FMT (f_c, pcpu (p, e))

static void
f_pmem (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  snprintf (buf, n, "%.1f",
            e->mem_kib ? (double) p->rss * 100.0 / (double) e->mem_kib : 0.0);
}

/* The controlling terminal as procps names the common ones; "?" for none
 * and for devices it would look up in /dev. */
static void
f_tty (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  unsigned maj = major (p->tty_nr), min = minor (p->tty_nr);
  (void) e;
  if (p->tty_nr == 0)
    snprintf (buf, n, "?");
  else if (maj >= 136 && maj <= 143)
    snprintf (buf, n, "pts/%u", (maj - 136) * 256 + min);
  else if (maj == 4 && min < 64)
    snprintf (buf, n, "tty%u", min);
  else if (maj == 4)
    snprintf (buf, n, "ttyS%u", min - 64);
  else
    snprintf (buf, n, "?");
}

static time_t
started (const struct ps_proc *p, const struct ps_env *e)
{
  return e->boot + (time_t) (p->start / (unsigned long long) e->hz);
}

/* STIME (ps -f): HH:MM today, else MonDD (procps' format). */
static void
f_stime (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  time_t t = started (p, e), now = time (NULL);
  struct tm tm, tn;
  localtime_r (&t, &tm);
  localtime_r (&now, &tn);
  strftime (buf, n, tm.tm_yday == tn.tm_yday && tm.tm_year == tn.tm_year
                        ? "%H:%M" : "%b%d", &tm);
}

/* BSD START (ps u): HH:MM within a day, else "Mon DD". */
static void
f_bsdstart (const struct ps_proc *p, const struct ps_env *e, char *buf,
            size_t n)
{
  time_t t = started (p, e);
  struct tm tm;
  localtime_r (&t, &tm);
  strftime (buf, n, time (NULL) - t < 86400 ? "%H:%M" : "%b %d", &tm);
}

/* STARTED (-o start): HH:MM:SS within a day, else "Mon DD". */
static void
f_start (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  time_t t = started (p, e);
  struct tm tm;
  localtime_r (&t, &tm);
  strftime (buf, n, time (NULL) - t < 86400 ? "%H:%M:%S" : "%b %d", &tm);
}

/* A full timestamp, as ps' lstart. */
static void
f_lstart (const struct ps_proc *p, const struct ps_env *e, char *buf,
          size_t n)
{
  time_t t = started (p, e);
  struct tm tm;
  localtime_r (&t, &tm);
  strftime (buf, n, "%a %b %e %H:%M:%S %Y", &tm);
}

/* args is not formatted into a buffer (it may be long): see cell(). */
static void
f_args (const struct ps_proc *p, const struct ps_env *e, char *buf, size_t n)
{
  (void) p;
  (void) e;
  (void) buf;
  (void) n;
}

/* procps' names (and its aliases) with its headers. */
static const struct ps_field fields[] = {
  { "pid", "PID", true, f_pid },       { "tgid", "TGID", true, f_pid },
  { "ppid", "PPID", true, f_ppid },    { "pgid", "PGID", true, f_pgid },
  { "pgrp", "PGRP", true, f_pgid },    { "sid", "SID", true, f_sid },
  { "sess", "SESS", true, f_sid },     { "session", "SESS", true, f_sid },
  { "tpgid", "TPGID", true, f_tpgid }, { "uid", "UID", true, f_uid },
  { "euid", "EUID", true, f_uid },     { "ruid", "RUID", true, f_ruid },
  { "gid", "GID", true, f_gid },       { "egid", "EGID", true, f_gid },
  { "rgid", "RGID", true, f_rgid },    { "user", "USER", false, f_user },
  { "euser", "EUSER", false, f_user }, { "uname", "USER", false, f_user },
  { "ruser", "RUSER", false, f_ruser },
  { "group", "GROUP", false, f_group },
  { "egroup", "EGROUP", false, f_group },
  { "comm", "COMMAND", false, f_comm },
  { "ucomm", "COMMAND", false, f_comm },
  { "ucmd", "CMD", false, f_comm },    { "fname", "COMMAND", false, f_comm },
  { "args", "COMMAND", false, f_args },
  { "command", "COMMAND", false, f_args },
  { "cmd", "CMD", false, f_args },     { "stat", "STAT", false, f_stat },
  { "s", "S", false, f_state },        { "state", "S", false, f_state },
  { "time", "TIME", true, f_time },    { "cputime", "TIME", true, f_time },
  { "etime", "ELAPSED", true, f_etime },
  { "etimes", "ELAPSED", true, f_etimes },
  { "ni", "NI", true, f_nice },        { "nice", "NI", true, f_nice },
  { "nlwp", "NLWP", true, f_nlwp },    { "thcount", "THCNT", true, f_nlwp },
  { "vsz", "VSZ", true, f_vsz },       { "vsize", "VSZ", true, f_vsz },
  { "rss", "RSS", true, f_rss },       { "rssize", "RSS", true, f_rss },
  { "rsz", "RSZ", true, f_rss },       { "pcpu", "%CPU", true, f_pcpu },
  { "%cpu", "%CPU", true, f_pcpu },    { "c", "C", true, f_c },
  { "pmem", "%MEM", true, f_pmem },    { "%mem", "%MEM", true, f_pmem },
  { "tty", "TT", false, f_tty },       { "tt", "TT", false, f_tty },
  { "tname", "TTY", false, f_tty },    { "stime", "STIME", false, f_stime },
  { "start_time", "START", false, f_stime },
  { "start", "STARTED", false, f_start },
  { "bsdstart", "START", false, f_bsdstart },
  { "bsdtime", "TIME", true, f_bsdtime },
  { "lstart", "STARTED", false, f_lstart },
};

static const struct ps_field *
field_find (const char *name, size_t len)
{
  for (size_t i = 0; i < ARRAY_SIZE (fields); i++)
    if (strlen (fields[i].name) == len
        && strncasecmp (fields[i].name, name, len) == 0)
      return &fields[i];
  return NULL;
}

struct ps_fmt
{
  struct ps_col *cols;
  size_t len;
  bool no_headers;
};

static void
fmt_add (struct ps_fmt *f, const struct ps_field *field, const char *header,
         size_t width)
{
  f->cols = xrealloc (f->cols, (f->len + 1) * sizeof *f->cols);
  f->cols[f->len].f = field;
  f->cols[f->len].width = width;
  f->cols[f->len++].header = xstrdup (header ? header : field->header);
}

/* One -o argument: ITEM[,ITEM...], each NAME[:WIDTH][=HEADER] (as
 * procps-ng 4 reads them: a header ends at the next comma). */
static int
fmt_parse_list (struct ps_fmt *f, const char *list, struct cm_err **err)
{
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  if (*list == '\0')
    return cm_err_set (err, 0, "ps: -o: empty list of fields");
  for (char *item = strtok_r (copy, ",", &save); item;
       item = strtok_r (NULL, ",", &save))
    {
      char *header = strchr (item, '='), *width, *end;
      const struct ps_field *field;
      long w = 0;
      if (header)
        *header++ = '\0';
      if ((width = strchr (item, ':')) != NULL)
        {
          *width++ = '\0';
          w = strtol (width, &end, 10);
          if (end == width || *end || w < 1 || w > 4096)
            return cm_err_set (err, 0, "ps: -o: width \"%s\" of \"%s\": "
                               "expected 1..4096", width, item);
        }
      field = field_find (item, strlen (item));
      if (field == NULL)
        return cm_err_set (err, 0, "ps: -o: unknown field \"%s\" (known: "
                           "pid ppid pgid sid uid user gid group comm args "
                           "cmd stat s time bsdtime etime etimes ni nlwp vsz "
                           "rss pcpu pmem c tty stime start bsdstart lstart, "
                           "and procps aliases)", item);
      fmt_add (f, field, header, (size_t) w);
    }
  return 0;
}

static void
fmt_names (struct ps_fmt *f, const char *names)
{
  struct cm_err *e = NULL;
  if (fmt_parse_list (f, names, &e) < 0)
    cm_err_free (&e);           /* our own lists: cannot fail */
}

/* BSD-style letters without a dash ("aux"): a and x select (always all
 * here), u the user format, w wide (never cut), h no header. */
static bool
fmt_bsd (struct ps_fmt *f, const char *arg)
{
  if (arg[0] == '\0' || arg[strspn (arg, "auxwh")] != '\0')
    return false;
  if (strchr (arg, 'h'))
    f->no_headers = true;
  if (strchr (arg, 'u'))
    fmt_names (f, "user,pid,pcpu,pmem,vsz,rss,tname,stat,bsdstart,bsdtime,"
               "args");
  return true;
}

static int
fmt_unsupported (const char *arg, struct cm_err **err)
{
  return cm_err_set (err, 0, "ps: ps option \"%s\" is not supported "
                     "(supported: -e -A -f -w, -o/--format LIST, "
                     "--no-headers, BSD a u x w h; sandlock-oci reads /proc "
                     "itself rather than running ps)", arg);
}

/* The ps options after the id, argv[0..argc). */
static int
fmt_parse (struct ps_fmt *f, int argc, char **argv, struct cm_err **err)
{
  for (int i = 0; i < argc; i++)
    {
      const char *a = argv[i];
      const char *list = NULL;
      if (strcmp (a, "-o") == 0 || strcmp (a, "o") == 0
          || strcmp (a, "--format") == 0)
        {
          if (i + 1 >= argc)
            return cm_err_set (err, 0, "ps: %s needs a list of fields", a);
          list = argv[++i];
        }
      else if (cm_startswith (a, "--format="))
        list = a + 9;
      else if (cm_startswith (a, "-o"))
        list = a + 2;
      if (list)
        {
          if (fmt_parse_list (f, list, err) < 0)
            return -1;
          continue;
        }
      if (strcmp (a, "--no-headers") == 0 || strcmp (a, "--no-heading") == 0)
        f->no_headers = true;
      else if (a[0] == '-' && a[1] != '-' && a[1] != '\0'
               && a[strspn (a + 1, "eAfw") + 1] == '\0')
        continue;               /* -e -A -f -ef -w: the default */
      else if (!fmt_bsd (f, a))
        return fmt_unsupported (a, err);
    }
  if (f->len == 0)
    {
      /* runc's default is `ps -ef`'s table; ours has the same columns
       * but STAT for C, STIME and TTY. */
      fmt_names (f, "uid,pid,ppid,stat,time,cmd");
    }
  return 0;
}

static void
fmt_free (struct ps_fmt *f)
{
  for (size_t i = 0; i < f->len; i++)
    free (f->cols[i].header);
  free (f->cols);
}

/* ---------------------------------------------------------------- table */

static char *
cell (const struct ps_col *c, const struct ps_proc *p, const struct ps_env *e)
{
  char buf[256];
  if (c->f->fmt == f_args)
    return xstrdup (p->args);
  buf[0] = '\0';
  c->f->fmt (p, e, buf, sizeof buf);
  return xstrdup (buf);
}

static void
ps_table (const struct ps_fmt *f, const pid_t *pids, size_t n)
{
  struct ps_env env = { 0 };
  long page_kib = sysconf (_SC_PAGESIZE) / 1024;
  char **cells = xcalloc ((n + 1) * f->len + 1, sizeof *cells);
  size_t *width = xcalloc (f->len + 1, sizeof *width);
  size_t rows = 0;
  bool header = !f->no_headers;

  ps_env_read (&env);
  if (header)
    {
      /* procps leaves the header line out when every header is empty. */
      header = false;
      for (size_t j = 0; j < f->len; j++)
        header |= f->cols[j].header[0] != '\0';
    }
  if (header)
    for (size_t j = 0; j < f->len; j++)
      cells[rows * f->len + j] = xstrdup (f->cols[j].header);
  rows += header;
  for (size_t i = 0; i < n; i++)
    {
      struct ps_proc p;
      if (ps_read (pids[i], page_kib > 0 ? page_kib : 4, &p) <= 0)
        continue;
      for (size_t j = 0; j < f->len; j++)
        cells[rows * f->len + j] = cell (&f->cols[j], &p, &env);
      free (p.args);
      rows++;
    }
  for (size_t j = 0; j < f->len; j++)
    width[j] = f->cols[j].width;
  for (size_t r = 0; r < rows; r++)
    for (size_t j = 0; j < f->len; j++)
      if (strlen (cells[r * f->len + j]) > width[j])
        width[j] = strlen (cells[r * f->len + j]);
  for (size_t r = 0; r < rows; r++)
    {
      for (size_t j = 0; j < f->len; j++)
        {
          const char *s = cells[r * f->len + j];
          bool last = j + 1 == f->len;
          if (f->cols[j].f->right)
            printf ("%*s", (int) width[j], s);
          else
            printf ("%-*s", last ? 0 : (int) width[j], s);
          fputs (last ? "\n" : " ", stdout);
          free (cells[r * f->len + j]);
        }
    }
  free (cells);
  free (width);
}

static int
pid_cmp (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}

static int
cmd_ps (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                        { 0, 0, 0, 0 } };
  struct oci_state st = { .dirfd = -1 };
  struct rt_handle *h = NULL;
  struct ps_fmt fmt = { 0 };
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  bool json = false;
  int c, ret = -1;

  while ((c = getopt_long (argc, argv, "+f:", opts, NULL)) != -1)
    {
      if (c != 'f')
        return cm_err_set (err, 0, "ps: " PS_USAGE);
      if (strcmp (optarg, "json") == 0)
        json = true;
      else if (strcmp (optarg, "table") != 0)
        return cm_err_set (err, 0, "ps: invalid format option \"%s\": "
                           "expected table or json", optarg);
    }
  if (optind >= argc)
    return cm_err_set (err, 0, "ps: " PS_USAGE);
  if (json && optind + 1 < argc)
    return cm_err_set (err, 0, "ps: ps option \"%s\" is not supported with "
                       "--format json", argv[optind + 1]);
  if (!json && fmt_parse (&fmt, argc - optind - 1, argv + optind + 1, err) < 0)
    goto out;
  if (oci_state_load (g, argv[optind], &st, err) < 0)
    goto out;
  if (st.status == OCI_STOPPED && !json)
    {
      cm_err_set (err, 0, "container \"%s\" is not running", st.id);
      goto out;
    }
  if (oci_state_handle (&st, NULL, NULL, &h, err) < 0
      || rt_handle_pids (h, &pids, &n, err) < 0)
    goto out;
  if (n > 1)                    /* pids is NULL when there are none */
    qsort (pids, n, sizeof *pids, pid_cmp);
  if (json)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      printf ("]\n");
    }
  else
    ps_table (&fmt, pids, n);
  ret = 0;
out:
  fmt_free (&fmt);
  rt_handle_free (h);
  oci_state_free (&st);
  return ret;
}
OCI_COMMAND (ps_command, "ps", "list the processes of a container",
             "usage: sandlock-oci ps [-f|--format table|json] ID [PS OPTIONS]\n\n"
             "json: an array of host pids (what containerd's shim reads).\n"
             "table: read from /proc (no ps(1) is run), by default\n"
             "UID PID PPID STAT TIME CMD.  PS OPTIONS, as procps ps takes them:\n"
             "  -o LIST, --format LIST   columns, e.g. pid,ppid,user,comm,args\n"
             "                           (NAME=HEADER renames; fields: pid ppid\n"
             "                           pgid sid tpgid uid ruid user ruser gid\n"
             "                           group comm args cmd stat s time etime\n"
             "                           bsdtime etimes ni nlwp vsz rss pcpu pmem\n"
             "                           c tty stime start bsdstart lstart;\n"
             "                           procps aliases)\n"
             "  aux, u                   the BSD user format\n"
             "  --no-headers, h          no header line\n"
             "  -e -A -f -w, a x w       accepted: every process is listed\n",
             cmd_ps)
