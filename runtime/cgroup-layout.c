/* cgroups: where they are.  Small file helpers, the host layout parsed from
 * mountinfo, the container path rules (docs/cgroups.md) and the v1 -> v2
 * value conversions.  No cgroup is created here. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"

/* ---- small file helpers ------------------------------------------------ */

int
cg_write (const char *dir, const char *file, const char *val,
          struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  _cleanup_fd_ int fd = open (p, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "cgroup: open `%s`", p);
  /* cgroupfs takes one value per write(2): never split it. */
  ssize_t r = write (fd, val, strlen (val));
  if (r < 0)
    return cm_err_set (err, errno, "cgroup: write `%s` to `%s`", val, p);
  return 0;
}

int
cg_writef (const char *dir, const char *file, struct cm_err **err,
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
    return cm_err_set (err, ENOMEM, "cgroup: format value for `%s`", file);
  r = cg_write (dir, file, s, err);
  free (s);
  return r;
}

int
cg_read (const char *dir, const char *file, char **out, struct cm_err **err)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  struct cm_err *e = NULL;
  *out = NULL;
  if (cm_read_file_at (AT_FDCWD, p, CG_FILE_MAX, out, NULL, &e) == 0)
    return 0;
  free (*out);
  *out = NULL;
  if (e->errno_ == ENOENT)
    {
      cm_err_free (&e);
      return 0;
    }
  if (err == NULL)
    {
      cm_err_free (&e);
      return -1;
    }
  *err = e;
  return cm_err_wrap (err, "cgroup");
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
      bool keep = cm_startswith (t, "name=");
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
cg_host_parse (const char *mountinfo, struct cg_host *h, struct cm_err **err)
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
    real_v1 |= !cm_startswith (h->v1[i].ctrls, ",name=");
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

const struct cg_host *
cg_host_get (struct cm_err **err)
{
  if (!host_cached)
    {
      _cleanup_free_ char *mi = NULL;
      if (cm_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &mi,
                           NULL, err) < 0)
        {
          cm_err_wrap (err, "cgroup: detect layout");
          return NULL;
        }
      if (cg_host_parse (mi, &host_cache, err) < 0)
        return NULL;
      host_cached = true;
    }
  return &host_cache;
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
  struct cm_err *e = NULL;
  const struct cg_host *h = cg_host_get (&e);
  if (h == NULL)
    {
      cm_err_free (&e);
      return "none";
    }
  return cg_layout_name (h->layout);
}

/* ---- path rules -------------------------------------------------------- */

/* Components must be non-empty and neither "." nor ".."; an absolute path
 * must name something below the root. */
int
cg_validate_path (const char *p, struct cm_err **err)
{
  const char *s = p;
  if (p == NULL || *p == '\0')
    return cm_err_set (err, EINVAL, "linux.cgroupsPath: empty path");
  if (*s == '/')
    s++;
  if (*s == '\0')
    return cm_err_set (err, EINVAL,
                       "linux.cgroupsPath `%s`: the root cgroup cannot be "
                       "a container's cgroup", p);
  for (;;)
    {
      const char *e = strchrnul (s, '/');
      size_t n = (size_t) (e - s);
      if (n == 0)
        return cm_err_set (err, EINVAL,
                           "linux.cgroupsPath `%s`: empty path component", p);
      if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return cm_err_set (err, EINVAL,
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
expand_slice (const char *slice, char **out, struct cm_err **err)
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
    return cm_err_set (err, EINVAL,
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
cg_systemd_path (const char *spec, char **out, struct cm_err **err)
{
  _cleanup_free_ char *s = xstrdup (spec), *slice_path = NULL;
  char *c1 = strchr (s, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  const char *slice, *prefix, *name;

  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':'))
    return cm_err_set (err, EINVAL,
                       "linux.cgroupsPath `%s`: expected \"slice:prefix:name\" "
                       "with --systemd-cgroup", spec);
  *c1 = *c2 = '\0';
  slice = *s ? s : "system.slice";
  prefix = c1 + 1;
  name = c2 + 1;
  if (*name == '\0' || strchr (name, '/') || strchr (prefix, '/'))
    return cm_err_set (err, EINVAL,
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
 * v2 and hybrid hosts, the name=systemd (else the first) entry on v1;
 * NULL with *err set when there is none. */
static char *
own_cgroup (enum cg_layout layout, const char *self, struct cm_err **err)
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
        return xstrdup (c2 + 1);
      if (first == NULL && layout == CG_V1 && !v2)
        first = c2 + 1;
    }
  if (first)
    return xstrdup (first);
  cm_err_set (err, ENOENT,
              "linux.cgroupsPath: the runtime's own cgroup is not in "
              "/proc/self/cgroup");
  return NULL;
}

int
cg_resolve_path (const struct rt_cgroup_opts *o, enum cg_layout layout,
                 const char *self_cgroup, char **out, struct cm_err **err)
{
  _cleanup_free_ char *own = NULL, *def = NULL;
  const char *p = o->cgroups_path;

  if ((p == NULL || *p == '\0') && (o->id == NULL || *o->id == '\0'
                                    || strchr (o->id, '/')))
    return cm_err_set (err, EINVAL,
                       "cgroup: no linux.cgroupsPath and no usable id");
  if (o->systemd)
    {
      if (p == NULL || *p == '\0')
        {
          def = xasprintf ("system.slice:sandlock-oci:%s", o->id);
          p = def;
        }
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
  own = own_cgroup (layout, self_cgroup, err);
  if (own == NULL)
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

/* Where a container's cgroup lives in each v1 hierarchy: the layout
 * below every controller file (v1, devices, limits) so none of them
 * calls back into another. */
int
cg_v1_index (const struct cg_host *h, const char *ctrl)
{
  _cleanup_free_ char *needle = xasprintf (",%s,", ctrl);
  for (size_t i = 0; i < h->v1_len; i++)
    if (strstr (h->v1[i].ctrls, needle))
      return (int) i;
  return -1;
}

char *
cg_v1_dir (const struct rt_cgroup *cg, const char *ctrl)
{
  int i = cg_v1_index (&cg->host, ctrl);
  if (i < 0 || !cg->v1_on[i])
    return NULL;
  return xasprintf ("%s%s", cg->host.v1[i].dir, cg->path);
}
