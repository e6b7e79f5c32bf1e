/* cgroups: layout detection, path rules and the lifecycle (create, open,
 * kill, pids, freeze, stats, destroy).  The per-version file writing lives in
 * cgroup-v1.c and cgroup-v2.c; docs/cgroups.md has the mapping tables. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"

#define CG_FILE_MAX (1 << 20)

/* ---- small file helpers ------------------------------------------------ */

int
cg_write (const char *dir, const char *file, const char *val,
          struct rt_err **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  _cleanup_fd_ int fd = open (p, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return rt_err_set (err, errno, "cgroup: open `%s`", p);
  /* cgroupfs takes one value per write(2): never split it. */
  ssize_t r = write (fd, val, strlen (val));
  if (r < 0)
    return rt_err_set (err, errno, "cgroup: write `%s` to `%s`", val, p);
  return 0;
}

int
cg_writef (const char *dir, const char *file, struct rt_err **err,
           const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  int r;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    s = NULL;
  va_end (ap);
  if (s == NULL)
    return rt_err_set (err, ENOMEM, "cgroup: format value for `%s`", file);
  r = cg_write (dir, file, s, err);
  free (s);
  return r;
}

int
cg_read (const char *dir, const char *file, char **out, struct rt_err **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  struct rt_err *e = NULL;
  if (rt_read_file_at (AT_FDCWD, p, CG_FILE_MAX, out, NULL, &e) == 0)
    return 0;
  if (e->errno_ == ENOENT)
    {
      rt_err_free (&e);
      return -ENOENT;
    }
  if (err == NULL)
    {
      rt_err_free (&e);
      return -1;
    }
  *err = e;
  return rt_err_wrap (err, "cgroup");
}

bool
cg_exists (const char *dir, const char *file)
{
  _cleanup_free_ char *p = file ? xasprintf ("%s/%s", dir, file)
                                : xstrdup (dir);
  return access (p, F_OK) == 0;
}

bool
cg_keyed (const char *text, const char *key, uint64_t *out)
{
  size_t kl = strlen (key);
  for (const char *l = text; l && *l; l = strchr (l, '\n'), l = l ? l + 1 : l)
    if (strncmp (l, key, kl) == 0 && l[kl] == ' ')
      {
        *out = cg_num (l + kl + 1);
        return true;
      }
  return false;
}

uint64_t
cg_num (const char *text)
{
  while (*text == ' ')
    text++;
  if (strncmp (text, "max", 3) == 0)
    return UINT64_MAX;
  return strtoull (text, NULL, 10);
}

void
cg_made (struct rt_cgroup *cg, const char *dir)
{
  cg->made = xrealloc (cg->made, (cg->made_len + 1) * sizeof *cg->made);
  cg->made[cg->made_len++] = xstrdup (dir);
}

/* ---- layout ------------------------------------------------------------ */

static const char *const v1_known[] = {
  "cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls",
  "net_prio", "blkio", "perf_event", "hugetlb", "pids", "rdma", "misc",
  "debug",
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape (const char *s)
{
  char *r = xstrdup (s), *w = r;
  for (const char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3])
        {
          *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3)
                         | (p[3] - '0'));
          p += 3;
        }
      else
        *w++ = *p;
    }
  *w = '\0';
  return r;
}

/* ",cpu,cpuacct," from "rw,cpu,cpuacct,nsdelegate"; NULL when none. */
static char *
v1_ctrls (const char *superopts)
{
  _cleanup_free_ char *o = xstrdup (superopts);
  char *save = NULL, *res = xstrdup (",");
  bool any = false;
  for (char *t = strtok_r (o, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      bool keep = rt_startswith (t, "name=");
      for (size_t i = 0; !keep && i < ARRAY_SIZE (v1_known); i++)
        keep = strcmp (t, v1_known[i]) == 0;
      if (!keep)
        continue;
      char *n = xasprintf ("%s%s,", res, t);
      free (res);
      res = n;
      any = true;
    }
  if (!any)
    {
      free (res);
      return NULL;
    }
  return res;
}

static void
host_add_v1 (struct cg_host *h, const char *mnt, const char *superopts)
{
  char *ctrls = v1_ctrls (superopts);
  if (ctrls == NULL)
    return;
  for (size_t i = 0; i < h->v1_len; i++)
    if (strcmp (h->v1[i].ctrls, ctrls) == 0)
      {
        free (ctrls);           /* the same hierarchy mounted twice */
        return;
      }
  h->v1 = xrealloc (h->v1, (h->v1_len + 1) * sizeof *h->v1);
  h->v1[h->v1_len].dir = unescape (mnt);
  h->v1[h->v1_len].ctrls = ctrls;
  h->v1_len++;
}

int
cg_host_parse (const char *mountinfo, struct cg_host *h, struct rt_err **err)
{
  _cleanup_free_ char *text = xstrdup (mountinfo);
  char *save = NULL;
  bool real_v1 = false;

  memset (h, 0, sizeof *h);
  for (char *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      char mnt[4096], fstype[64], superopts[1024];
      const char *dash = strstr (l, " - ");
      if (dash == NULL
          || sscanf (l, "%*s %*s %*s %*s %4095s", mnt) != 1
          || sscanf (dash + 3, "%63s %*s %1023s", fstype, superopts) != 2)
        continue;
      if (strcmp (fstype, "cgroup2") == 0 && h->v2_mount == NULL)
        h->v2_mount = unescape (mnt);
      else if (strcmp (fstype, "cgroup") == 0)
        host_add_v1 (h, mnt, superopts);
    }
  for (size_t i = 0; i < h->v1_len; i++)
    real_v1 |= !rt_startswith (h->v1[i].ctrls, ",name=");
  if (real_v1)
    h->layout = h->v2_mount ? CG_HYBRID : CG_V1;
  else if (h->v2_mount)
    {
      h->layout = CG_V2;
      /* A named-only v1 tree on a v2 host tracks nothing we need. */
      for (size_t i = 0; i < h->v1_len; i++)
        {
          free (h->v1[i].dir);
          free (h->v1[i].ctrls);
        }
      free (h->v1);
      h->v1 = NULL;
      h->v1_len = 0;
    }
  else
    h->layout = CG_NONE;
  return 0;
}

void
cg_host_copy (struct cg_host *dst, const struct cg_host *src)
{
  dst->layout = src->layout;
  dst->v2_mount = xstrdup (src->v2_mount);
  dst->v1_len = src->v1_len;
  dst->v1 = xcalloc (src->v1_len, sizeof *dst->v1);
  for (size_t i = 0; i < src->v1_len; i++)
    {
      dst->v1[i].dir = xstrdup (src->v1[i].dir);
      dst->v1[i].ctrls = xstrdup (src->v1[i].ctrls);
    }
}

void
cg_host_clear (struct cg_host *h)
{
  for (size_t i = 0; i < h->v1_len; i++)
    {
      free (h->v1[i].dir);
      free (h->v1[i].ctrls);
    }
  free (h->v1);
  free (h->v2_mount);
  memset (h, 0, sizeof *h);
}

static struct cg_host host_cache;
static bool host_cached;

int
cg_host_get (const struct cg_host **h, struct rt_err **err)
{
  if (!host_cached)
    {
      _cleanup_free_ char *mi = NULL;
      if (rt_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &mi,
                           NULL, err) < 0)
        return rt_err_wrap (err, "cgroup: detect layout");
      if (cg_host_parse (mi, &host_cache, err) < 0)
        return -1;
      host_cached = true;
    }
  *h = &host_cache;
  return 0;
}

const char *
cg_layout_name (enum cg_layout l)
{
  switch (l)
    {
    case CG_V1:
      return "v1";
    case CG_V2:
      return "v2";
    case CG_HYBRID:
      return "hybrid";
    case CG_NONE:
    default:
      return "none";
    }
}

const char *
rt_cgroup_layout (void)
{
  const struct cg_host *h;
  struct rt_err *e = NULL;
  if (cg_host_get (&h, &e) < 0)
    {
      rt_err_free (&e);
      return "none";
    }
  return cg_layout_name (h->layout);
}

/* ---- path rules -------------------------------------------------------- */

/* Components must be non-empty and neither "." nor ".."; an absolute path
 * must name something below the root. */
int
cg_validate_path (const char *p, struct rt_err **err)
{
  const char *s = p;
  if (p == NULL || *p == '\0')
    return rt_err_set (err, EINVAL, "linux.cgroupsPath: empty path");
  if (*s == '/')
    s++;
  if (*s == '\0')
    return rt_err_set (err, EINVAL,
                       "linux.cgroupsPath `%s`: the root cgroup cannot be "
                       "a container's cgroup", p);
  for (;;)
    {
      const char *e = strchrnul (s, '/');
      size_t n = (size_t) (e - s);
      if (n == 0)
        return rt_err_set (err, EINVAL,
                           "linux.cgroupsPath `%s`: empty path component", p);
      if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return rt_err_set (err, EINVAL,
                           "linux.cgroupsPath `%s`: `.` and `..` are not "
                           "allowed", p);
      if (*e == '\0')
        return 0;
      s = e + 1;
    }
}

/* systemd unit name rules for a slice: "a-b.slice", never "a--b", "-a",
 * "a-" (systemd's slice_name_is_valid); "-.slice" is the root slice. */
static int
expand_slice (const char *slice, char **out, struct rt_err **err)
{
  size_t n = strlen (slice);
  char *res;
  if (strcmp (slice, "-.slice") == 0)
    {
      *out = xstrdup ("");
      return 0;
    }
  if (n <= 6 || strcmp (slice + n - 6, ".slice") != 0
      || strchr (slice, '/') || slice[0] == '-' || slice[n - 7] == '-'
      || strstr (slice, "--"))
    return rt_err_set (err, EINVAL,
                       "linux.cgroupsPath: invalid systemd slice `%s`", slice);
  res = xstrdup ("");
  for (size_t i = 0; i <= n - 6; i++)
    if (i == n - 6 || slice[i] == '-')
      {
        char *r = xasprintf ("%s/%.*s.slice", res, (int) i, slice);
        free (res);
        res = r;
      }
  *out = res;
  return 0;
}

int
cg_systemd_path (const char *spec, char **out, struct rt_err **err)
{
  _cleanup_free_ char *s = xstrdup (spec), *slice_path = NULL;
  char *c1 = strchr (s, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  const char *slice, *prefix, *name;

  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':'))
    return rt_err_set (err, EINVAL,
                       "linux.cgroupsPath `%s`: expected \"slice:prefix:name\" "
                       "with --systemd-cgroup", spec);
  *c1 = *c2 = '\0';
  slice = *s ? s : "system.slice";
  prefix = c1 + 1;
  name = c2 + 1;
  if (*name == '\0' || strchr (name, '/') || strchr (prefix, '/'))
    return rt_err_set (err, EINVAL,
                       "linux.cgroupsPath `%s`: invalid systemd unit name",
                       spec);
  if (expand_slice (slice, &slice_path, err) < 0)
    return -1;
  if (strlen (name) > 6 && strcmp (name + strlen (name) - 6, ".slice") == 0)
    *out = xasprintf ("%s/%s", slice_path, name);
  else if (*prefix)
    *out = xasprintf ("%s/%s-%s.scope", slice_path, prefix, name);
  else
    *out = xasprintf ("%s/%s.scope", slice_path, name);
  return cg_validate_path (*out, err) < 0 ? -1 : 0;
}

/* The runtime's own cgroup, from /proc/self/cgroup: the v2 ("0::") entry on
 * v2 and hybrid hosts, the name=systemd (else the first) entry on v1. */
static int
own_cgroup (enum cg_layout layout, const char *self, char **out,
            struct rt_err **err)
{
  _cleanup_free_ char *t = xstrdup (self);
  char *save = NULL, *first = NULL;
  for (char *l = strtok_r (t, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (l, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c2 = '\0';
      bool v2 = strcmp (l, "0:") == 0;
      bool sysd = strcmp (c1 + 1, "name=systemd") == 0;
      if ((layout != CG_V1 && v2) || (layout == CG_V1 && sysd))
        {
          *out = xstrdup (c2 + 1);
          return 0;
        }
      if (first == NULL && layout == CG_V1 && !v2)
        first = c2 + 1;
    }
  if (first)
    {
      *out = xstrdup (first);
      return 0;
    }
  return rt_err_set (err, ENOENT,
                     "linux.cgroupsPath: the runtime's own cgroup is not in "
                     "/proc/self/cgroup");
}

int
cg_resolve_path (const struct rt_cgroup_opts *o, enum cg_layout layout,
                 const char *self_cgroup, char **out, struct rt_err **err)
{
  _cleanup_free_ char *own = NULL, *def = NULL;
  const char *p = o->cgroups_path;

  if ((p == NULL || *p == '\0') && (o->id == NULL || *o->id == '\0'
                                    || strchr (o->id, '/')))
    return rt_err_set (err, EINVAL,
                       "cgroup: no linux.cgroupsPath and no usable id");
  if (o->systemd)
    {
      if (p == NULL || *p == '\0')
        p = def = xasprintf ("system.slice:sandlock-oci:%s", o->id);
      return cg_systemd_path (p, out, err);
    }
  if (p == NULL || *p == '\0')
    {
      *out = xasprintf ("/sandlock-oci/%s", o->id);
      return cg_validate_path (*out, err) < 0 ? -1 : 0;
    }
  if (cg_validate_path (p, err) < 0)
    return -1;
  if (*p == '/')
    {
      *out = xstrdup (p);
      return 0;
    }
  if (own_cgroup (layout, self_cgroup, &own, err) < 0)
    return -1;
  *out = xasprintf ("%s/%s", strcmp (own, "/") == 0 ? "" : own, p);
  return cg_validate_path (*out, err) < 0 ? -1 : 0;
}

/* runc/crun: maps shares [2, 262144] onto weight [1, 10000] linearly. */
uint64_t
cg_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

/* runc: blkio weight [10, 1000] onto io.weight [1, 10000]. */
uint64_t
cg_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

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
  struct rt_err *e = NULL;
  if (pid > 0)
    {
      for (size_t i = 0; i < cg->host.v1_len; i++)
        if (cg->v1_on[i])
          cg_writef (cg->host.v1[i].dir, "cgroup.procs", &e, "%d", (int) pid);
      rt_err_free (&e);
      if (cg->v2_on)
        cg_writef (cg->host.v2_mount, "cgroup.procs", &e, "%d", (int) pid);
      rt_err_free (&e);
    }
  for (size_t i = cg->made_len; i-- > 0;)
    rmdir (cg->made[i]);
}

static int
move_pid (struct rt_cgroup *cg, pid_t pid, struct rt_err **err)
{
  for (size_t i = 0; i < cg->host.v1_len; i++)
    if (cg->v1_on[i])
      {
        _cleanup_free_ char *d = xasprintf ("%s%s", cg->host.v1[i].dir,
                                            cg->path);
        if (cg_writef (d, "cgroup.procs", err, "%d", (int) pid) < 0)
          return -1;
      }
  if (cg->v2_on)
    {
      _cleanup_free_ char *d = cg_v2_dir (cg);
      if (cg_writef (d, "cgroup.procs", err, "%d", (int) pid) < 0)
        return -1;
    }
  return 0;
}

static int
check_resources (const struct cg_host *h, const struct rt_resources *r,
                 struct rt_err **err)
{
  if (h->layout == CG_NONE)
    return rt_err_set (err, ENOENT,
                       "cgroup: no cgroup hierarchy is mounted "
                       "(/proc/self/mountinfo has no cgroup or cgroup2)");
  if (r && r->unified_len && h->layout != CG_V2)
    return rt_err_set (err, EOPNOTSUPP,
                       "linux.resources.unified: needs a cgroup v2 host "
                       "(this host is %s)", cg_layout_name (h->layout));
  if (h->layout == CG_V2)
    return cg_v2_check (h, r, err);
  return cg_v1_check (h, r, err);
}

int
cg_create_on (const struct cg_host *h, const char *path,
              const struct rt_resources *r, pid_t pid,
              struct rt_cgroup **out, struct rt_err **err)
{
  struct rt_cgroup *cg;
  int ret;

  if (cg_validate_path (path, err) < 0 || check_resources (h, r, err) < 0)
    return -1;
  if (*path != '/')
    return rt_err_set (err, EINVAL, "cgroup: path `%s` is not absolute",
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
    ret = move_pid (cg, pid, err);
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

int
rt_cgroup_create (const struct rt_cgroup_opts *o, pid_t pid,
                  struct rt_cgroup **out, struct rt_err **err)
{
  const struct cg_host *h;
  _cleanup_free_ char *self = NULL, *path = NULL;

  if (cg_host_get (&h, err) < 0)
    return -1;
  if (o->cgroups_path && *o->cgroups_path && *o->cgroups_path != '/'
      && !o->systemd
      && rt_read_file_at (AT_FDCWD, "/proc/self/cgroup", CG_FILE_MAX, &self,
                          NULL, err) < 0)
    return -1;
  if (cg_resolve_path (o, h->layout, self ? self : "", &path, err) < 0)
    return -1;
  return cg_create_on (h, path, o->resources, pid, out, err);
}

int
cg_open_on (const struct cg_host *h, const char *path,
            struct rt_cgroup **out, struct rt_err **err)
{
  struct rt_cgroup *cg;
  bool any = false;

  if (cg_validate_path (path, err) < 0)
    return -1;
  if (*path != '/')
    return rt_err_set (err, EINVAL, "cgroup: path `%s` is not absolute",
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
      return rt_err_set (err, ENOENT, "cgroup `%s` exists in no hierarchy",
                         path);
    }
  *out = cg;
  return 0;
}

int
rt_cgroup_open (const char *path, struct rt_cgroup **out, struct rt_err **err)
{
  const struct cg_host *h;
  if (cg_host_get (&h, err) < 0)
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
              struct rt_err **err)
{
  _cleanup_free_ char *procs = NULL;
  DIR *d;
  struct dirent *de;
  int r = cg_read (dir, "cgroup.procs", &procs, err);

  if (r == -ENOENT)
    return 0;                   /* removed meanwhile */
  if (r < 0)
    return -1;
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
                struct rt_err **err)
{
  _cleanup_free_ char *dir = procs_dir (cg);
  struct pidv v = { NULL, 0 };
  if (dir == NULL)
    return rt_err_set (err, ENOENT, "cgroup `%s`: no hierarchy to list pids",
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
kill_loop (struct rt_cgroup *cg, int sig, struct rt_err **err)
{
  struct pidv done = { NULL, 0 };
  int ret = 0;
  for (int round = 0;; round++)
    {
      pid_t *pids = NULL;
      size_t n = 0, fresh = 0;
      if (round > 10000)
        {
          ret = rt_err_set (err, EAGAIN,
                            "cgroup `%s`: processes keep appearing while "
                            "signalling", cg->path);
          break;
        }
      if (rt_cgroup_pids (cg, &pids, &n, err) < 0)
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
                ret = rt_err_set (err, errno, "cgroup: kill %d",
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
use_v1_freezer (const struct rt_cgroup *cg)
{
  int i = cg_v1_index (&cg->host, "freezer");
  return i >= 0 && cg->v1_on[i];
}

int
rt_cgroup_kill (struct rt_cgroup *cg, int sig, struct rt_err **err)
{
  int r;
  bool froze = false;
  struct rt_err *e = NULL;

  if (sig == SIGKILL && cg->v2_on)
    {
      r = cg_v2_kill (cg, err);
      if (r != 0)
        return r < 0 ? -1 : 0;
    }
  /* Without cgroup.kill, a frozen cgroup cannot fork between our reading
   * cgroup.procs and the signal landing; SIGKILL is delivered on thaw. */
  if (sig == SIGKILL && use_v1_freezer (cg))
    {
      froze = cg_v1_freeze (cg, true, &e) == 0;
      rt_err_free (&e);
    }
  r = kill_loop (cg, sig, err);
  if (froze && cg_v1_freeze (cg, false, &e) < 0 && r == 0)
    {
      *err = rt_steal_ptr (&e);
      return -1;
    }
  rt_err_free (&e);
  return r;
}

int
rt_cgroup_freeze (struct rt_cgroup *cg, bool frozen, struct rt_err **err)
{
  if (use_v1_freezer (cg))
    return cg_v1_freeze (cg, frozen, err);
  if (cg->v2_on)
    return cg_v2_freeze (cg, frozen, err);
  return rt_err_set (err, ENOENT,
                     "cgroup `%s`: no freezer (no v1 freezer hierarchy and "
                     "no cgroup v2)", cg->path);
}

int
rt_cgroup_is_frozen (struct rt_cgroup *cg, struct rt_err **err)
{
  if (use_v1_freezer (cg))
    return cg_v1_is_frozen (cg, err);
  if (cg->v2_on)
    return cg_v2_is_frozen (cg, err);
  return rt_err_set (err, ENOENT,
                     "cgroup `%s`: no freezer (no v1 freezer hierarchy and "
                     "no cgroup v2)", cg->path);
}

int
rt_cgroup_update (struct rt_cgroup *cg, const struct rt_resources *r,
                  struct rt_err **err)
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
                 struct rt_err **err)
{
  memset (st, 0, sizeof *st);
  if (cg->host.layout == CG_V2)
    return cg_v2_stats (cg, st, err);
  return cg_v1_stats (cg, st, err);
}

/* rmdir leaf first; a cgroup directory holds only kernel files, which
 * rmdir(2) takes with it, so only sub-directories need walking. */
static int
rmdir_tree (const char *dir, int depth, struct rt_err **err)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    return errno == ENOENT ? 0
                           : rt_err_set (err, errno, "cgroup: open `%s`", dir);
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
        return rt_err_set (err, EBUSY,
                           "cgroup: cannot remove `%s`: processes remain in "
                           "it", dir);
      return rt_err_set (err, errno, "cgroup: rmdir `%s`", dir);
    }
  return 0;
}

int
rt_cgroup_destroy (struct rt_cgroup *cg, struct rt_err **err)
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
