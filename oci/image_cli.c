/* Shared flags of the image commands, the TTY progress display, and the
 * bundle writer used by `bundle` and `run --image`. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "image_cli.h"
#include "spec_default.h"

enum
{
  O_CACHE = 1000, O_CREDS, O_AUTHFILE, O_CERTDIR, O_TLS, O_PLATFORM, O_OFFLINE,
  O_JOBS, O_QUIET, O_FORMAT, O_ALLOW_DEVICES, O_MAX_UNPACKED, O_TIMEOUT,
  O_STALL,
};

const struct option image_cli_options[] = {
  { "cache-dir", required_argument, 0, O_CACHE },
  { "creds", required_argument, 0, O_CREDS },
  { "authfile", required_argument, 0, O_AUTHFILE },
  { "cert-dir", required_argument, 0, O_CERTDIR },
  { "tls-verify", optional_argument, 0, O_TLS },
  { "platform", required_argument, 0, O_PLATFORM },
  { "offline", no_argument, 0, O_OFFLINE },
  { "jobs", required_argument, 0, O_JOBS },
  { "quiet", no_argument, 0, 'q' },
  { "format", required_argument, 0, O_FORMAT },
  { "allow-devices", no_argument, 0, O_ALLOW_DEVICES },
  { "max-unpacked-size", required_argument, 0, O_MAX_UNPACKED },
  { "timeout", required_argument, 0, O_TIMEOUT },
  { "stall-timeout", required_argument, 0, O_STALL },
  { 0, 0, 0, 0 },
};

int
image_cli_parse (const char *cmd, struct image_cli *c, int argc, char **argv,
                 struct cm_err **err)
{
  const struct option *opts = image_cli_merge (NULL);
  int opt;
  optind = 0;  /* 0: full reinit, so options may follow arguments */
  while ((opt = getopt_long (argc, argv, "q", opts, NULL)) != -1)
    {
      int r = image_cli_opt (c, opt, optarg, err);
      if (r < 0)
        return -1;
      if (r == 0)
        return cm_err_set (err, 0, "%s: unknown option (see `help %s`)", cmd,
                           cmd);
    }
  return optind;
}

const struct option *
image_cli_merge (const struct option *extra)
{
  static struct option all[64];
  size_t n = 0;
  for (; extra && extra->name && n < 40; extra++)
    all[n++] = *extra;
  for (const struct option *o = image_cli_options; o->name; o++)
    all[n++] = *o;
  memset (&all[n], 0, sizeof all[n]);
  return all;
}

/* "90", "90s", "500ms", "5m", "1h" (a whole number and a unit, seconds
 * by default) into milliseconds; at most 24 h. */
static int
parse_duration (const char *flag, const char *arg, uint64_t min_ms, uint64_t *out,
                struct cm_err **err)
{
  static const struct { const char *unit; uint64_t ms; } units[] = {
    { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
  };
  char *end;
  unsigned long long v;
  errno = 0;
  v = arg[0] >= '0' && arg[0] <= '9' ? strtoull (arg, &end, 10) : 0;
  if (errno == 0 && arg[0] >= '0' && arg[0] <= '9' && v <= 86400000ULL)
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp (end, units[i].unit) == 0 && v * units[i].ms <= 86400000ULL
          && (v == 0 || v * units[i].ms >= min_ms))
        {
          *out = v * units[i].ms;
          return 1;
        }
  return cm_err_set (err, 0, "%s: expected a duration such as 30s, 500ms, 5m or 0 "
                     "(at least %" PRIu64 "ms, at most 24h), got `%s`", flag, min_ms, arg);
}

int
image_cli_size (const char *flag, const char *arg, uint64_t *out, struct cm_err **err)
{
  char *end;
  unsigned long long v;
  unsigned shift = 0;
  errno = 0;
  v = arg[0] >= '0' && arg[0] <= '9' ? strtoull (arg, &end, 10) : 0;
  if (v > 0 && errno == 0 && end[0] && !end[1])
    switch (end[0] | 0x20)
      {
      case 'k': shift = 10, end++; break;
      case 'm': shift = 20, end++; break;
      case 'g': shift = 30, end++; break;
      default: break;
      }
  if (v == 0 || errno || *end || v > (UINT64_MAX >> shift))
    return cm_err_set (err, 0, "%s: expected a size in bytes, with an optional k, m or g "
                       "suffix (like 512m or 2g), got `%s`", flag, arg);
  *out = (uint64_t) v << shift;
  return 0;
}

int
image_cli_opt (struct image_cli *c, int opt, const char *arg, struct cm_err **err)
{
  switch (opt)
    {
    case O_CACHE:
      c->o.cache_dir = arg;
      return 1;
    case O_CREDS:
      c->o.creds = arg;
      return 1;
    case O_AUTHFILE:
      c->o.authfile = arg;
      return 1;
    case O_CERTDIR:
      c->o.cert_dir = arg;
      return 1;
    case O_TLS:
      if (arg == NULL || strcmp (arg, "true") == 0)
        c->o.tls_verify = 1;
      else if (strcmp (arg, "false") == 0)
        c->o.tls_verify = 0;
      else
        return cm_err_set (err, 0, "--tls-verify: expected true or false, got `%s`", arg);
      return 1;
    case O_PLATFORM:
      c->o.platform = arg;
      return 1;
    case O_OFFLINE:
      c->o.offline = true;
      return 1;
    case O_JOBS:
      {
        char *end;
        long v;
        errno = 0;
        v = strtol (arg, &end, 10);
        c->o.jobs = errno || end == arg || *end ? 0 : (int) (v < 0 || v > 16 ? 0 : v);
      }
      if (c->o.jobs < 1 || c->o.jobs > 16)
        return cm_err_set (err, 0, "--jobs: expected 1..16, got `%s`", arg);
      return 1;
    case O_TIMEOUT:
      return parse_duration ("--timeout", arg, 1, &c->o.timeout_ms, err);
    case O_STALL:
      /* curl's low-speed window is counted in whole seconds. */
      return parse_duration ("--stall-timeout", arg, 1000, &c->o.stall_timeout_ms, err);
    case 'q':
      c->quiet = true;
      return 1;
    case O_ALLOW_DEVICES:
      c->o.allow_devices = true;
      return 1;
    case O_MAX_UNPACKED:
      return image_cli_size ("--max-unpacked-size", arg, &c->o.max_unpacked, err) < 0 ? -1 : 1;
    case O_FORMAT:
      if (strcmp (arg, "json") == 0)
        c->json = true;
      else if (strcmp (arg, "text") != 0)
        return cm_err_set (err, 0, "--format: expected text or json, got `%s`", arg);
      return 1;
    default:
      return 0;
    }
}

/* ---- progress: the reference, one line per layer and a total, redrawn
 * in place; each line cut to the terminal's width (read at every redraw,
 * so a resize takes effect at the next one), since a line that wraps
 * would throw the cursor-up count off. ---- */

struct layer_line
{
  char digest[20];
  uint64_t done, total;         /* downloaded / declared bytes */
  bool finished;                /* downloaded */
  bool unpacking, unpacked;
  uint64_t entries, written;
};

struct progress
{
  char *ref;
  struct layer_line *l;
  int n, drawn;
  struct timespec start;
};

static double
elapsed (const struct timespec *t0)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) (t.tv_sec - t0->tv_sec) + (double) (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Columns of the terminal on stderr; 0 when unknown (no cut). */
static int
term_width (void)
{
  struct winsize ws;
  if (ioctl (STDERR_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
    return 0;
  return ws.ws_col;
}

/* One line, cleared first and cut to |width| - 1 columns: writing into
 * the last column leaves some terminals about to wrap. */
static void __attribute__ ((format (printf, 2, 3)))
put_line (int width, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  int n;
  va_start (ap, fmt);
  n = vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if (width > 1 && n > width - 1)
    n = width - 1;
  if ((size_t) n >= sizeof buf)
    n = (int) sizeof buf - 1;
  fprintf (stderr, "\r\033[K%.*s\n", n, buf);
}

static void
layer_state (const struct layer_line *l, char *buf, size_t len)
{
  if (l->unpacked)
    snprintf (buf, len, "done");
  else if (l->unpacking)
    snprintf (buf, len, "unpacking %" PRIu64 " entries %.1f MB", l->entries,
              l->written / 1e6);
  else if (l->finished)
    snprintf (buf, len, "downloaded");
  else
    buf[0] = '\0';
}

/* The full line when it fits; on a narrow terminal the state first, so
 * that the cut takes the sizes rather than the state. */
static void
draw_layer (const struct layer_line *l, int width)
{
  char state[96];
  const char *hex = strchr (l->digest, ':');
  int full = 19 + 1 + 8 + 3 + 8 + 3;
  hex = hex ? hex + 1 : l->digest;
  layer_state (l, state, sizeof state);
  if (state[0])
    full += 2 + (int) strlen (state);
  if (width <= 1 || full <= width - 1)
    put_line (width, "%-19s %8.1f / %8.1f MB%s%s", l->digest, l->done / 1e6,
              l->total / 1e6, state[0] ? "  " : "", state);
  else if (state[0] && !l->unpacked)
    put_line (width, "%.12s %s, %.1f/%.1f MB", hex, state, l->done / 1e6,
              l->total / 1e6);
  else
    put_line (width, "%.12s %.1f/%.1f MB%s%s", hex, l->done / 1e6,
              l->total / 1e6, state[0] ? " " : "", state);
}

static void
draw (struct progress *p)
{
  uint64_t done = 0, total = 0;
  double s = elapsed (&p->start);
  int lines = 0, width = term_width ();
  if (p->drawn)
    fprintf (stderr, "\033[%dA", p->drawn);
  put_line (width, "%s", p->ref);
  for (int i = 0; i < p->n; i++)
    {
      /* A layer that has not reported yet has no digest to show: no line
       * (lines only ever get added, so a redraw covers the last one). */
      if (p->l[i].digest[0] == '\0')
        continue;
      lines++;
      done += p->l[i].done;
      total += p->l[i].total;
      draw_layer (&p->l[i], width);
    }
  if (width > 1 && width - 1 < 20 + 8 + 3 + 8 + 3 + 14)
    put_line (width, "total %.1f/%.1f MB %.1f MB/s", done / 1e6, total / 1e6,
              s > 0 ? done / 1e6 / s : 0.0);
  else
    put_line (width, "total               %8.1f / %8.1f MB  %.1f MB/s",
              done / 1e6, total / 1e6, s > 0 ? done / 1e6 / s : 0.0);
  p->drawn = lines + 2;
}

static void
on_progress (void *data, const struct img_progress *pr)
{
  struct progress *p = data;
  struct layer_line *l;
  if (p->l == NULL)
    {
      p->n = pr->count;
      p->l = xcalloc ((size_t) pr->count, sizeof *p->l);
      p->ref = xstrdup (pr->ref ? pr->ref : "");
    }
  if (pr->index < 0 || pr->index >= p->n)
    return;
  l = &p->l[pr->index];
  snprintf (l->digest, sizeof l->digest, "%.19s", pr->digest);
  if (pr->kind == IMG_PROGRESS_UNPACK)
    {
      l->unpacking = true;
      l->entries = pr->entries;
      l->written = pr->written;
      l->unpacked = pr->unpacked;
    }
  else
    {
      l->done = pr->done;
      l->total = pr->total;
      l->finished = pr->finished;
    }
  draw (p);
}

void
image_cli_start (struct image_cli *c)
{
  if (c->quiet || !isatty (STDERR_FILENO))
    return;
  c->prog = xcalloc (1, sizeof *c->prog);
  clock_gettime (CLOCK_MONOTONIC, &c->prog->start);
  c->o.progress = on_progress;
  c->o.progress_data = c->prog;
}

void
image_cli_finish (struct image_cli *c)
{
  if (c->prog)
    {
      free (c->prog->l);
      free (c->prog->ref);
      free (c->prog);
      c->prog = NULL;
    }
}

int
image_cli_get (struct image_cli *c, const char *ref, struct img_image **out,
               struct cm_err **err)
{
  int r;
  image_cli_start (c);
  r = img_pull (&c->o, ref, out, err);
  image_cli_finish (c);
  return r;
}


/* The namespace-less mode runs as its caller: no user namespace to take
 * the image's user in, no privilege to switch to it. */
static void
nsless_user (const struct image_cli *c, struct oci_default_opts *d)
{
  d->nsless = true;
  if (d->uid != getuid () || d->gid != getgid ())
    {
      _cleanup_free_ char *w = xasprintf (
          "run --image: the image's user %u:%u cannot be taken without "
          "namespaces: the container runs as the caller (%u:%u)",
          (unsigned) d->uid, (unsigned) d->gid, (unsigned) getuid (),
          (unsigned) getgid ());
      oci_log_warning (c->g, w);
    }
  d->uid = getuid ();
  d->gid = getgid ();
  d->additional_gids_len = 0;
}

int
image_cli_bundle (struct image_cli *c, const struct img_image *im, const char *dir,
                  char *const *cmd, struct cm_err **err)
{
  struct img_config *ic = NULL;
  struct oci_default_opts d = { 0 };
  _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", dir);
  _cleanup_free_ char *json = NULL;
  _cleanup_free_ struct rt_kv *kv = NULL;
  _cleanup_fd_ int dfd = -1;
  int ret;

  if (img_config_resolve (&c->o, im, cmd, &ic, err) < 0)
    return -1;
  if (cm_mkdir_p (dir, 0755, err) < 0
      || (c->cow ? oci_cow_rootfs_mountpoint (rootfs, err)
                 : img_copy_rootfs (im, rootfs, c->o.allow_devices, err)) < 0)
    {
      img_config_free (ic);
      return -1;
    }
  kv = xcalloc (ic->annot_len + 2, sizeof *kv);
  size_t nkv = 0;
  for (size_t i = 0; i < ic->annot_len; i++)
    {
      /* The image's labels become annotations, but an image must never
       * choose its own confinement (docs/security.md "Who decides"). */
      if (cm_startswith (ic->annot_keys[i], "run.oci.sandlock."))
        continue;
      kv[nkv].key = ic->annot_keys[i];
      kv[nkv++].value = ic->annot_values[i];
    }
  if (c->cow)
    {
      kv[nkv].key = (char *) OCI_COW_ANN "rootfs_lower";
      kv[nkv++].value = im->rootfs;
    }
  d.args = ic->args;
  d.env = ic->env;
  d.cwd = ic->cwd;
  d.uid = ic->uid;
  d.gid = ic->gid;
  d.additional_gids = ic->gids;
  d.additional_gids_len = ic->gids_len;
  d.annotations = kv;
  d.annotations_len = nkv;
  /* With a cow layer the writes land in the container's own upper. */
  d.root_readonly = !c->cow;
  d.terminal = false;
  d.rootless = geteuid () != 0;
  if (c->nsless)
    nsless_user (c, &d);
  json = oci_default_config_json (&d);
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    ret = cm_err_set (err, errno, "bundle `%s`", dir);
  else
    ret = cm_atomic_write_at (dfd, "config.json", json, strlen (json), 0644, err);
  img_config_free (ic);
  return ret;
}
