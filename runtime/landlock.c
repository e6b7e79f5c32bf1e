/* Landlock: policy derivation (parent) and raw application (child).
 * See runtime/landlock.h and docs/security.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "landlock.h"
#include "runtime.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define ANN "run.oci.sandlock."

/* Kernel ABI structs, spelled here for the same reason as the rights. */
struct ll_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  /* ABI 4 */
  uint64_t scoped;              /* ABI 6 */
};

struct ll_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

struct ll_net_port_attr
{
  uint64_t allowed_access;
  uint64_t port;
};

static const struct
{
  const char *name;
  int abi;
} prots[RT_LL_P_N] = {
  [RT_LL_P_FS] = { "fs", 1 },
  [RT_LL_P_FS_REFER] = { "fs-refer", 2 },
  [RT_LL_P_FS_TRUNCATE] = { "fs-truncate", 3 },
  [RT_LL_P_FS_IOCTL_DEV] = { "fs-ioctl-dev", 5 },
  [RT_LL_P_NET_TCP] = { "net-tcp", 4 },
  [RT_LL_P_SCOPE_SIGNAL] = { "scope-signal", 6 },
  [RT_LL_P_SCOPE_ABSTRACT_UNIX] = { "scope-abstract-unix", 6 },
};

const char *
rt_ll_prot_name (enum rt_ll_prot p)
{
  return (unsigned) p < RT_LL_P_N ? prots[p].name : "?";
}

int
rt_ll_prot_abi (enum rt_ll_prot p)
{
  return (unsigned) p < RT_LL_P_N ? prots[p].abi : 0;
}

int
rt_ll_abi (void)
{
  return rt_kfeat (RT_KF_LANDLOCK)->landlock_abi;
}

/* ---- annotation parsing ------------------------------------------------ */

/* List separators.  ',' is the historical one, but podman splits an
 * --annotation value at commas (CSV), so ':' works too: neither can be
 * part of a protection name or a port, and engines cannot mount at a
 * path holding ':' (their -v syntax splits there). */
#define LIST_SEPARATORS ",:"

/* Splits |value| at commas or colons, trimming blanks; empty items are
 * dropped. */
static char **
split_list (const char *value, size_t *n)
{
  size_t items = 1;
  for (const char *c = value; *c; c++)
    items += strchr (LIST_SEPARATORS, *c) != NULL;
  char **v = xcalloc (items + 1, sizeof *v);
  const char *p = value;
  *n = 0;
  while (*p)
    {
      size_t span = strcspn (p, LIST_SEPARATORS);
      const char *e = p[span] ? p + span : NULL;
      size_t len = e ? (size_t) (e - p) : strlen (p);
      const char *s = p;
      while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
      while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
      if (len)
        {
          v[*n] = xmalloc (len + 1);
          memcpy (v[*n], s, len);
          v[*n][len] = '\0';
          (*n)++;
        }
      p = e ? e + 1 : p + strlen (p);
    }
  return v;
}

/* Lexically normalises an absolute container path: collapses "//" and
 * "/./", drops a trailing "/".  Refuses relative paths and "..": the rule
 * must name the place the user meant, inside the container. */
static char *
normalise_path (const char *in)
{
  if (in == NULL || in[0] != '/')
    return NULL;
  size_t n = strlen (in);
  char *out = xmalloc (n + 2);
  size_t o = 0;
  const char *p = in;
  while (*p)
    {
      while (*p == '/')
        p++;
      if (!*p)
        break;
      const char *e = strchrnul (p, '/');
      size_t len = (size_t) (e - p);
      if (len == 1 && p[0] == '.')
        {
          p = e;
          continue;
        }
      if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          free (out);
          return NULL;
        }
      out[o++] = '/';
      memcpy (out + o, p, len);
      o += len;
      p = e;
    }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

/* True when |path| is |dir| or below it. */
static bool
path_within (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return true;
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Returns the port, or -1 with *err set. */
static long
parse_port (const char *annotation, const char *s, struct cm_err **err)
{
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (s[0] < '0' || s[0] > '9' || *end || errno || v < 0 || v > 65535)
    {
      cm_err_set (err, 0, "annotation %s: \"%s\" is not a TCP port (0-65535)",
                  annotation, s);
      return -1;
    }
  return v;
}

int
rt_ll_parse_ports (const char *annotation, const char *value, uint16_t **out,
                   size_t *len, struct cm_err **err)
{
  size_t n;
  _cleanup_strv_ char **items = split_list (value, &n);
  /* +1 where a range starts, -1 after it ends: O(1) per item, so a long
   * list of wide ranges costs no more than a short one (walking every
   * port of every range took minutes on a 16 MiB annotation). */
  _cleanup_free_ int32_t *edge = xcalloc (65537, sizeof *edge);
  size_t count = 0;
  int32_t depth = 0;

  for (size_t i = 0; i < n; i++)
    {
      long lo, hi;
      char *dash = strchr (items[i] + 1, '-');
      if (dash)
        {
          *dash = '\0';
          if ((lo = parse_port (annotation, items[i], err)) < 0
              || (hi = parse_port (annotation, dash + 1, err)) < 0)
            return -1;
          if (lo > hi)
            return cm_err_set (err, 0, "annotation %s: range %ld-%ld is "
                               "backwards", annotation, lo, hi);
        }
      else
        {
          if ((lo = parse_port (annotation, items[i], err)) < 0)
            return -1;
          hi = lo;
        }
      edge[lo]++;
      edge[hi + 1]--;
    }
  for (long p = 0; p < 65536; p++)
    count += (depth += edge[p]) > 0;
  uint16_t *ports = xcalloc (count ? count : 1, sizeof *ports);
  size_t k = 0;
  depth = 0;
  for (long p = 0; p < 65536; p++)
    if ((depth += edge[p]) > 0)
      ports[k++] = (uint16_t) p;
  *out = ports;
  *len = count;
  return 0;
}

static int
find_prot (const char *name)
{
  for (int p = 0; p < RT_LL_P_N; p++)
    if (strcmp (prots[p].name, name) == 0)
      return p;
  return -1;
}

/* Process-wide defaults for degrade [0] and disable [1]: the runtime's
 * config file (rank 1) and its global flags (rank 2).  An annotation
 * (rank 3) names the container's own choice and wins. */
static struct
{
  char *value, *origin;
  int rank;
} defaults[2];

static const char *const mode_keys[2] = { ANN "degrade", ANN "disable" };

/* The protection |item| names under key |k| (0 degrade, 1 disable):
 * its index, RT_LL_P_N for "seccomp" (disable only), or -1 with *err set
 * naming |origin|. */
static int
mode_item (const char *origin, int k, const char *item, struct cm_err **err)
{
  if (k == 1 && strcmp (item, "seccomp") == 0)
    return RT_LL_P_N;
  int p = find_prot (item);
  if (p < 0)
    return cm_err_set (err, 0, "%s: unknown protection \"%s\" (known: fs, "
                       "fs-refer, fs-truncate, fs-ioctl-dev, net-tcp, "
                       "scope-signal, scope-abstract-unix%s)", origin, item,
                       k == 1 ? ", seccomp" : "");
  /* Without REFER handled, Landlock still refuses every cross-directory
   * rename and link: "disabling" would tighten. */
  if (k == 1 && p == RT_LL_P_FS_REFER)
    return cm_err_set (err, 0, "%s: fs-refer cannot be disabled (an "
                       "unhandled REFER right makes Landlock deny every "
                       "cross-directory rename and link); use degrade "
                       "for fs-refer", origin);
  return p;
}

int
rt_ll_set_default (bool disable, const char *value, const char *origin,
                   int rank, struct cm_err **err)
{
  int k = disable ? 1 : 0;
  if (value == NULL)
    {
      free (defaults[k].value);
      free (defaults[k].origin);
      memset (&defaults[k], 0, sizeof defaults[k]);
      return 0;
    }
  size_t n;
  _cleanup_strv_ char **items = split_list (value, &n);
  for (size_t i = 0; i < n; i++)
    if (mode_item (origin, k, items[i], err) < 0)
      return -1;
  if (rank < defaults[k].rank)
    return 0;
  free (defaults[k].value);
  free (defaults[k].origin);
  defaults[k].value = xstrdup (value);
  defaults[k].origin = xstrdup (origin);
  defaults[k].rank = rank;
  return 0;
}

/* Set by the runtime's config file: annotations may only narrow. */
static char *lock_origin;

void
rt_ll_lock_annotations (const char *origin)
{
  free (lock_origin);
  lock_origin = origin ? xstrdup (origin) : NULL;
}

/* With the lock, an annotation that widens what the container may do is
 * an error (an image's annotations reach config.json through some
 * engines, e.g. podman before 4.6). */
static int
check_lock (const struct rt_config *c, struct cm_err **err)
{
  static const char *const widening[]
      = { ANN "disable", ANN "degrade", ANN "fs_writable" };
  for (size_t i = 0; lock_origin && i < ARRAY_SIZE (widening); i++)
    if (rt_config_annotation (c, widening[i]))
      return cm_err_set (err, EPERM, "annotation %s: refused, %s only lets "
                         "annotations narrow confinement", widening[i],
                         lock_origin);
  return 0;
}

/* The list in force for key |k|: the annotation, else the default. */
static const char *
mode_list (const struct rt_config *c, int k, const char **origin, int *rank,
           char **buf)
{
  const char *v = rt_config_annotation (c, mode_keys[k]);
  if (v)
    {
      *origin = *buf = xasprintf ("annotation %s", mode_keys[k]);
      *rank = 3;
      return v;
    }
  *origin = defaults[k].origin;
  *rank = defaults[k].rank;
  return defaults[k].value;
}

/* run.oci.sandlock.degrade / disable, over the runtime's defaults. */
static int
parse_modes (const struct rt_config *c, struct rt_ll_policy *pol,
             struct cm_err **err)
{
  int set_by[RT_LL_P_N] = { 0 };
  for (int k = 0; k < 2; k++)
    {
      _cleanup_free_ char *buf = NULL;
      const char *origin;
      int rank;
      const char *v = mode_list (c, k, &origin, &rank, &buf);
      if (v == NULL)
        continue;
      size_t n;
      _cleanup_strv_ char **items = split_list (v, &n);
      for (size_t i = 0; i < n; i++)
        {
          int p = mode_item (origin, k, items[i], err);
          if (p < 0)
            return -1;
          if (p == RT_LL_P_N)
            {
              pol->seccomp_default_disabled = true;
              continue;
            }
          if (pol->mode[p] != RT_LL_STRICT && set_by[p] == rank)
            return cm_err_set (err, 0, "%s: \"%s\" is named in both "
                               "degrade and disable", origin, items[i]);
          if (pol->mode[p] != RT_LL_STRICT && set_by[p] > rank)
            continue;           /* a higher layer decided */
          pol->mode[p] = k == 0 ? RT_LL_DEGRADE : RT_LL_DISABLE;
          set_by[p] = rank;
        }
    }
  return 0;
}

/* ---- rules ------------------------------------------------------------- */

/* While the policy is built, rules are found by path through an
 * open-addressing hash index (rule number + 1, 0 = empty): a linear search
 * per rule made a 40k-path fs_readable quadratic (seconds).  Removal only
 * frees the path (the slot stays, keeping the index valid); compact_rules()
 * closes the gaps once at the end. */
static size_t
path_hash (const char *s)
{
  uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return (size_t) h;
}

static size_t *
index_slot (const struct rt_ll_policy *p, const char *path)
{
  size_t mask = p->index_cap - 1;
  for (size_t i = path_hash (path) & mask;; i = (i + 1) & mask)
    {
      const char *q = p->index[i] ? p->rules[p->index[i] - 1].path : NULL;
      if (p->index[i] == 0 || (q && strcmp (q, path) == 0))
        return &p->index[i];
    }
}

static void
index_grow (struct rt_ll_policy *p)
{
  size_t old_cap = p->index_cap;
  _cleanup_free_ size_t *old = p->index;
  p->index_cap = old_cap ? old_cap * 2 : 64;
  p->index = xcalloc (p->index_cap, sizeof *p->index);
  for (size_t i = 0; i < old_cap; i++)
    if (old[i])
      *index_slot (p, p->rules[old[i] - 1].path) = old[i];
}

static struct rt_ll_rule *
rule_at (const struct rt_ll_policy *p, const char *path)
{
  if (p->index_cap)
    {
      size_t k = *index_slot (p, path);
      return k ? &p->rules[k - 1] : NULL;
    }
  for (size_t i = 0; i < p->rules_len; i++)
    if (p->rules[i].path && strcmp (p->rules[i].path, path) == 0)
      return &p->rules[i];
  return NULL;
}

const struct rt_ll_rule *
rt_ll_policy_find (const struct rt_ll_policy *p, const char *path)
{
  return rule_at (p, path);
}

/* Adds a rule; an existing rule for the same path is replaced (a later
 * mount hides an earlier one; an annotation overrides what the mounts
 * say) or, with |merge|, widened.  Only while the index exists. */
static struct rt_ll_rule *
rule_put (struct rt_ll_policy *p, char *path, uint64_t access,
          enum rt_ll_origin origin, bool merge)
{
  if (2 * (p->rules_len + 1) > p->index_cap)
    index_grow (p);
  size_t *slot = index_slot (p, path);
  if (*slot)
    {
      struct rt_ll_rule *r = &p->rules[*slot - 1];
      free (path);
      r->access = merge ? r->access | access : access;
      r->origin = origin;
      return r;
    }
  /* Capacity doubles at each power of two (realloc per rule is quadratic
   * wherever realloc copies). */
  if ((p->rules_len & (p->rules_len - 1)) == 0)
    p->rules = xrealloc (p->rules, (p->rules_len ? 2 * p->rules_len : 1)
                                       * sizeof *p->rules);
  p->rules[p->rules_len++]
      = (struct rt_ll_rule) { .path = path, .access = access,
                              .origin = origin };
  *slot = p->rules_len;
  return &p->rules[p->rules_len - 1];
}

/* Marks rule |i| removed; compact_rules() drops it. */
static void
rule_remove (struct rt_ll_policy *p, size_t i)
{
  free (p->rules[i].path);
  p->rules[i].path = NULL;
}

/* Drops removed rules (keeping the order) and the index. */
static void
compact_rules (struct rt_ll_policy *p)
{
  size_t o = 0;
  for (size_t i = 0; i < p->rules_len; i++)
    if (p->rules[i].path)
      p->rules[o++] = p->rules[i];
  p->rules_len = o;
  free (p->index);
  p->index = NULL;
  p->index_cap = 0;
}

/* The last "ro"/"rw" option decides, as for mount(8). */
static bool
mount_is_ro (const struct rt_mount *m)
{
  bool ro = false;
  for (size_t i = 0; i < m->options_len; i++)
    {
      if (strcmp (m->options[i], "ro") == 0)
        ro = true;
      else if (strcmp (m->options[i], "rw") == 0)
        ro = false;
    }
  return ro;
}

/* The standard nodes and what each must be for its rule to apply (the
 * container, or the image when /dev is not a tmpfs, decides what is at
 * these paths).  /dev/console is the pty, any char device. */
static const struct
{
  const char *path;
  uint32_t type;
  unsigned maj, min;
} node_kinds[] = {
  { "/dev/null", S_IFCHR, 1, 3 },    { "/dev/zero", S_IFCHR, 1, 5 },
  { "/dev/full", S_IFCHR, 1, 7 },    { "/dev/random", S_IFCHR, 1, 8 },
  { "/dev/urandom", S_IFCHR, 1, 9 }, { "/dev/tty", S_IFCHR, 5, 0 },
  { "/dev/console", S_IFCHR, 0, 0 }, { "/dev/ptmx", S_IFCHR, 5, 2 },
  { "/dev/pts", S_IFDIR, 0, 0 },
};
static const char *const tty_nodes[]
    = { "/dev/tty", "/dev/console", "/dev/ptmx", "/dev/pts" };
static const char *const std_nodes[] = { "/dev/null", "/dev/zero",
                                         "/dev/full", "/dev/random",
                                         "/dev/urandom" };

static void
want_std_node (struct rt_ll_rule *r)
{
  for (size_t i = 0; i < ARRAY_SIZE (node_kinds); i++)
    if (strcmp (r->path, node_kinds[i].path) == 0)
      {
        r->want_type = node_kinds[i].type;
        r->want_rdev = node_kinds[i].maj
                           ? makedev (node_kinds[i].maj, node_kinds[i].min)
                           : 0;
      }
}

/* linux.devices[]: the node the runtime made from the config. */
static void
want_config_node (struct rt_ll_rule *r, const struct rt_device *d)
{
  char t = d->type ? d->type[0] : 'c';
  r->want_type = t == 'b' ? S_IFBLK : t == 'p' ? S_IFIFO : S_IFCHR;
  r->want_rdev = t == 'p' || d->major < 0 || d->minor < 0
                     ? 0
                     : makedev ((unsigned) d->major, (unsigned) d->minor);
}

static bool
is_std_node (const char *path)
{
  for (size_t i = 0; i < ARRAY_SIZE (tty_nodes); i++)
    if (strcmp (path, tty_nodes[i]) == 0 || path_within (path, "/dev/pts"))
      return true;
  for (size_t i = 0; i < ARRAY_SIZE (std_nodes); i++)
    if (strcmp (path, std_nodes[i]) == 0)
      return true;
  return false;
}

/* MAKE_CHAR / MAKE_BLOCK for the device types a linux.resources.devices
 * allow rule grants "m" on.  Landlock cannot tell majors apart, the device
 * cgroup does; this only keeps mknod closed when no rule opens it (defence
 * in depth: mknod of a host disk is the classic escape). */
static uint64_t
mknod_rights (const struct rt_resources *r)
{
  uint64_t m = 0;
  for (size_t i = 0; r && i < r->devices_len; i++)
    {
      const struct rt_device_rule *d = &r->devices[i];
      const char *t = d->type ? d->type : "a";
      if (!d->allow || (d->access && !strchr (d->access, 'm')))
        continue;
      if (strcmp (t, "a") == 0 || strcmp (t, "c") == 0)
        m |= RT_LL_FS_MAKE_CHAR;
      if (strcmp (t, "a") == 0 || strcmp (t, "b") == 0)
        m |= RT_LL_FS_MAKE_BLOCK;
    }
  return m;
}

static int
derive_config_rules (const struct rt_config *c, struct rt_ll_policy *p,
                     struct cm_err **err)
{
  uint64_t wr = RT_LL_FS_WRITE | mknod_rights (c->resources);
  rule_put (p, xstrdup ("/"), c->root_readonly ? RT_LL_FS_READ : wr,
            RT_LL_O_ROOT, false);
  for (size_t i = 0; i < c->mounts_len; i++)
    {
      const struct rt_mount *m = &c->mounts[i];
      char *d = m->destination && m->destination[0] != '/'
                    ? xasprintf ("/%s", m->destination)
                    : xstrdup (m->destination ? m->destination : "");
      char *n = normalise_path (d);
      free (d);
      if (n == NULL)
        return cm_err_set (err, 0, "mounts[%zu].destination: \"%s\" must be "
                           "a path inside the container without \"..\"", i,
                           m->destination ? m->destination : "");
      struct rt_ll_rule *r
          = rule_put (p, n, mount_is_ro (m) ? RT_LL_FS_READ : wr,
                      RT_LL_O_MOUNT, false);
      uint64_t dev = is_std_node (r->path) ? 0 : rt_ll_bound_device (c, i);
      if (dev)
        {
          /* A bound device the config allows is as useless without its
           * ioctls as a linux.devices[] one; the rule holds only while
           * that very node is there. */
          r->access |= RT_LL_FS_IOCTL_DEV;
          r->origin = RT_LL_O_DEVICE;
          r->want_type = S_IFCHR;
          r->want_rdev = dev;
        }
    }
  for (size_t i = 0; i < ARRAY_SIZE (std_nodes); i++)
    want_std_node (rule_put (p, xstrdup (std_nodes[i]), RT_LL_FS_DEVICE,
                             RT_LL_O_DEVICE, true));
  for (size_t i = 0; i < ARRAY_SIZE (tty_nodes); i++)
    want_std_node (rule_put (p, xstrdup (tty_nodes[i]), RT_LL_FS_TTY,
                             RT_LL_O_DEVICE, true));
  for (size_t i = 0; i < c->devices_len; i++)
    {
      char *n = normalise_path (c->devices[i].path);
      if (n == NULL)
        return cm_err_set (err, 0, "linux.devices[%zu].path: \"%s\" must be "
                           "an absolute path without \"..\"", i,
                           c->devices[i].path ? c->devices[i].path : "");
      /* A device the user asked for by name is useless without its
       * ioctls (tun, kvm, fuse); the standard nodes get none. */
      uint64_t a = RT_LL_FS_DEVICE
                   | (is_std_node (n) ? 0 : RT_LL_FS_IOCTL_DEV);
      if (path_within (n, "/dev/pts") || strcmp (n, "/dev/tty") == 0
          || strcmp (n, "/dev/console") == 0 || strcmp (n, "/dev/ptmx") == 0)
        a = RT_LL_FS_TTY;
      want_config_node (rule_put (p, n, a, RT_LL_O_DEVICE, true),
                        &c->devices[i]);
    }
  return 0;
}

/* Parses a path-list annotation into normalised paths. */
static int
annotation_paths (const struct rt_config *c, const char *key, char ***out,
                  size_t *n, struct cm_err **err)
{
  const char *v = rt_config_annotation (c, key);
  *out = NULL;
  *n = 0;
  if (v == NULL)
    return 0;
  size_t m;
  _cleanup_strv_ char **items = split_list (v, &m);
  char **paths = xcalloc (m + 1, sizeof *paths);
  for (size_t i = 0; i < m; i++)
    {
      paths[i] = normalise_path (items[i]);
      if (paths[i] == NULL)
        {
          cm_strv_free (paths);
          return cm_err_set (err, 0, "annotation %s: \"%s\" is not an "
                             "absolute path inside the container (no "
                             "\"..\" allowed)", key, items[i]);
        }
    }
  *out = paths;
  *n = m;
  return 0;
}

static int
derive_annotation_rules (const struct rt_config *c, struct rt_ll_policy *p,
                         struct cm_err **err)
{
  _cleanup_strv_ char **rd = NULL, **wr = NULL, **dn = NULL;
  size_t nrd, nwr, ndn;
  if (annotation_paths (c, ANN "fs_readable", &rd, &nrd, err) < 0
      || annotation_paths (c, ANN "fs_writable", &wr, &nwr, err) < 0
      || annotation_paths (c, ANN "fs_denied", &dn, &ndn, err) < 0)
    return -1;
  for (size_t i = 0; i < nrd; i++)
    rule_put (p, xstrdup (rd[i]), RT_LL_FS_READ, RT_LL_O_ANNOTATION,
              false);
  for (size_t i = 0; i < nwr; i++)
    rule_put (p, xstrdup (wr[i]),
              RT_LL_FS_WRITE | mknod_rights (c->resources),
              RT_LL_O_ANNOTATION, false);
  /* Denied wins.  Landlock only adds rights, so: drop every grant at or
   * below a denied path, then mask (mount over) a denied path that a
   * remaining grant still covers. */
  for (size_t d = 0; d < ndn; d++)
    {
      if (strcmp (dn[d], "/") == 0)
        return cm_err_set (err, 0, "annotation %sfs_denied: \"/\" would deny "
                           "the container its own root", ANN);
      for (size_t i = 0; i < p->rules_len; i++)
        if (p->rules[i].path && path_within (p->rules[i].path, dn[d]))
          rule_remove (p, i);
      bool covered = p->handled_fs == 0;
      for (size_t i = 0; i < p->rules_len && !covered; i++)
        covered = p->rules[i].path && path_within (dn[d], p->rules[i].path);
      if (covered)
        {
          p->masks = xrealloc (p->masks, (p->masks_len + 2) * sizeof *p->masks);
          p->masks[p->masks_len++] = xstrdup (dn[d]);
          p->masks[p->masks_len] = NULL;
        }
    }
  return 0;
}

/* ---- protections ------------------------------------------------------- */

static int
resolve (struct rt_ll_policy *p, enum rt_ll_prot k, bool requested,
         struct cm_err **err)
{
  if (!requested)
    p->state[k] = RT_LL_NOT_REQUESTED;
  else if (p->mode[k] == RT_LL_DISABLE)
    p->state[k] = RT_LL_DISABLED;
  else if (p->abi >= prots[k].abi)
    p->state[k] = RT_LL_ACTIVE;
  else if (p->mode[k] == RT_LL_DEGRADE)
    p->state[k] = RT_LL_DEGRADED;
  else if (p->abi == 0)
    return cm_err_set (err, 0, "Landlock protection \"%s\" is on but this "
                       "kernel has no Landlock: set annotation "
                       "%sdegrade=%s to run without it", prots[k].name, ANN,
                       prots[k].name);
  else
    return cm_err_set (err, 0, "Landlock protection \"%s\" needs Landlock "
                       "ABI %d but this kernel has ABI %d: set annotation "
                       "%sdegrade=%s to run without it", prots[k].name,
                       prots[k].abi, p->abi, ANN, prots[k].name);
  return 0;
}

/* Every fs right ABI |abi| knows (the Landlock sample's fall-through). */
static uint64_t
abi_fs_rights (int abi)
{
  uint64_t m = 0;
  switch (abi < 0 ? 0 : abi > 5 ? 5 : abi)
    {
    case 5:
      m |= RT_LL_FS_IOCTL_DEV;
      /* fall through */
    case 4:  /* ABI 4 added network rights only */
    case 3:
      m |= RT_LL_FS_TRUNCATE;
      /* fall through */
    case 2:
      m |= RT_LL_FS_REFER;
      /* fall through */
    case 1:
      m |= RT_LL_FS_V1;
      /* fall through */
    default:
      break;
    }
  return m;
}

static int
resolve_all (const struct rt_config *c, struct rt_ll_policy *p,
             struct cm_err **err)
{
  bool want_bind = rt_config_annotation (c, ANN "net_allow_bind") != NULL;
  bool want_conn = rt_config_annotation (c, ANN "net_allow_connect") != NULL;

  if (resolve (p, RT_LL_P_FS, true, err) < 0)
    return -1;
  bool fs = p->state[RT_LL_P_FS] == RT_LL_ACTIVE;
  /* With the fs protection off, its refinements have nothing to refine. */
  for (int k = RT_LL_P_FS_REFER; k <= RT_LL_P_FS_IOCTL_DEV; k++)
    if (!fs)
      p->state[k] = p->state[RT_LL_P_FS] == RT_LL_DISABLED ? RT_LL_DISABLED
                                                           : RT_LL_DEGRADED;
    else if (resolve (p, k, true, err) < 0)
      return -1;
  if (resolve (p, RT_LL_P_NET_TCP, want_bind || want_conn, err) < 0
      || resolve (p, RT_LL_P_SCOPE_SIGNAL, true, err) < 0
      || resolve (p, RT_LL_P_SCOPE_ABSTRACT_UNIX, true, err) < 0)
    return -1;

  if (fs)
    {
      p->handled_fs = RT_LL_FS_V1;
      if (p->state[RT_LL_P_FS_REFER] == RT_LL_ACTIVE)
        p->handled_fs |= RT_LL_FS_REFER;
      if (p->state[RT_LL_P_FS_TRUNCATE] == RT_LL_ACTIVE)
        p->handled_fs |= RT_LL_FS_TRUNCATE;
      if (p->state[RT_LL_P_FS_IOCTL_DEV] == RT_LL_ACTIVE)
        p->handled_fs |= RT_LL_FS_IOCTL_DEV;
    }
  p->handled_fs &= abi_fs_rights (p->abi);
  if (p->state[RT_LL_P_NET_TCP] == RT_LL_ACTIVE)
    p->handled_net = (want_bind ? RT_LL_NET_BIND_TCP : 0)
                     | (want_conn ? RT_LL_NET_CONNECT_TCP : 0);
  if (p->state[RT_LL_P_SCOPE_SIGNAL] == RT_LL_ACTIVE)
    p->scoped |= RT_LL_SCOPE_SIGNAL;
  if (p->state[RT_LL_P_SCOPE_ABSTRACT_UNIX] == RT_LL_ACTIVE)
    p->scoped |= RT_LL_SCOPE_ABSTRACT_UNIX;
  return 0;
}

int
rt_ll_policy_build (const struct rt_config *c, int abi,
                    struct rt_ll_policy *out, struct cm_err **err)
{
  struct rt_ll_policy p = { .abi = abi };
  const char *v;

  if (check_lock (c, err) < 0 || parse_modes (c, &p, err) < 0
      || resolve_all (c, &p, err) < 0
      || rt_ll_scope_by_namespace (c, &p, err) < 0)
    goto fail;
  if ((v = rt_config_annotation (c, ANN "net_allow_bind"))
      && rt_ll_parse_ports (ANN "net_allow_bind", v, &p.bind_ports,
                            &p.bind_ports_len, err) < 0)
    goto fail;
  if ((v = rt_config_annotation (c, ANN "net_allow_connect"))
      && rt_ll_parse_ports (ANN "net_allow_connect", v, &p.connect_ports,
                            &p.connect_ports_len, err) < 0)
    goto fail;
  if (derive_config_rules (c, &p, err) < 0
      || derive_annotation_rules (c, &p, err) < 0)
    goto fail;
  /* Masks are mounts: without a mount namespace they would land on the
   * host. */
  if (p.masks_len)
    {
      bool mntns = false;
      for (size_t i = 0; i < c->namespaces_len; i++)
        mntns = mntns || (c->namespaces[i].type
                          && strcmp (c->namespaces[i].type, "mount") == 0);
      if (!mntns)
        {
          cm_err_set (err, 0, "annotation %sfs_denied: masking \"%s\" needs "
                      "a mount namespace (linux.namespaces has none)", ANN,
                      p.masks[0]);
          goto fail;
        }
    }
  /* The kernel refuses a rule with a right the ruleset does not handle. */
  for (size_t i = 0; i < p.rules_len; i++)
    if (p.rules[i].path && (p.rules[i].access &= p.handled_fs) == 0)
      rule_remove (&p, i);
  compact_rules (&p);
  *out = p;
  return 0;

fail:
  rt_ll_policy_clear (&p);
  return -1;
}

void
rt_ll_policy_clear (struct rt_ll_policy *p)
{
  for (size_t i = 0; i < p->rules_len; i++)
    free (p->rules[i].path);
  free (p->rules);
  free (p->index);
  free (p->pins);
  if (p->pin_record && p->pin_fd >= 0)
    close (p->pin_fd);
  free (p->bind_ports);
  free (p->connect_ports);
  cm_strv_free (p->masks);
  memset (p, 0, sizeof *p);
}

/* ---- child side: raw syscalls only ------------------------------------ */

/* Hides a denied path that a granted tree still covers: an empty read-only
 * mode-000 tmpfs over a directory, /dev/null (read-only) over anything
 * else.  No MS_NODEV on the latter: /dev/null itself is a device. */
static int
mask_path (const char *path, struct cm_err **err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0
                           : cm_err_set (err, errno, "fs_denied: stat `%s`",
                                         path);
  if (S_ISDIR (st.st_mode))
    {
      if (mount ("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV
                 | MS_NOEXEC, "mode=000,size=4k,nr_inodes=1") < 0)
        return cm_err_set (err, errno, "fs_denied: mask `%s`", path);
      return 0;
    }
  if (mount ("/dev/null", path, NULL, MS_BIND, NULL) < 0
      || mount (NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
                | MS_NOEXEC, NULL) < 0)
    return cm_err_set (err, errno, "fs_denied: mask `%s` with /dev/null",
                       path);
  return 0;
}

/* Device and fs_readable/fs_writable rules name a path, and a symlink the
 * container or its image put there must not move the grant elsewhere
 * (/dev/full -> / would make the whole tree writable).  Root and mount
 * rules follow symlinks inside the container's root, as the mount did. */
static uint64_t
rule_resolve (const struct rt_ll_rule *r)
{
  return r->origin == RT_LL_O_DEVICE || r->origin == RT_LL_O_ANNOTATION
             ? RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
             : RESOLVE_NO_MAGICLINKS;
}

static bool
node_as_expected (const struct rt_ll_rule *r, const struct stat *st)
{
  if (r->origin != RT_LL_O_DEVICE || r->want_type == 0)
    return true;
  if ((st->st_mode & S_IFMT) != r->want_type)
    return false;
  return r->want_rdev == 0 || r->want_type == S_IFDIR
         || r->want_type == S_IFIFO || st->st_rdev == r->want_rdev;
}

/* Opens rule |i|'s path for landlock_add_rule.  Returns the fd, -1 to skip
 * the rule (it grants nothing), or -2 with *err set. */
static int
open_rule (const struct rt_ll_policy *p, size_t i, struct stat *st,
           struct cm_err **err)
{
  const struct rt_ll_rule *r = &p->rules[i];
  _cleanup_fd_ int fd = cm_openat2 (AT_FDCWD, r->path, O_PATH, rule_resolve (r));
  if (fd < 0)
    {
      /* At exec the container decides what is there: anything odd only
       * omits the rule. */
      if (p->pin_check || errno == ENOENT || errno == ENOTDIR
          || (errno == ELOOP && r->origin == RT_LL_O_DEVICE))
        return -1;
      if (errno == ELOOP)
        cm_err_set (err, 0, "annotation %sfs_%s: \"%s\" goes through a "
                    "symlink in the container: name the path it leads to",
                    ANN, r->access & RT_LL_FS_WRITE_FILE ? "writable"
                    : "readable", r->path);
      else
        cm_err_set (err, errno, "landlock: open rule path `%s`", r->path);
      return -2;
    }
  if (fstat (fd, st) < 0)
    {
      cm_err_set (err, errno, "landlock: stat `%s`", r->path);
      return -2;
    }
  if (!node_as_expected (r, st))
    return -1;
  if (p->pin_check)
    {
      const struct rt_ll_pin *pin = rt_ll_pins_find (p, i);
      if (pin == NULL || pin->dev != (uint64_t) st->st_dev
          || pin->ino != (uint64_t) st->st_ino
          || pin->type != (st->st_mode & S_IFMT))
        return -1;
    }
  return cm_steal_fd (&fd);
}

static int
add_path_rules (const struct rt_ll_policy *p, int rfd, struct cm_err **err)
{
  _cleanup_free_ struct rt_ll_pin *pins
      = p->pin_record ? xcalloc (p->rules_len + 1, sizeof *pins) : NULL;
  size_t npins = 0;
  for (size_t i = 0; i < p->rules_len; i++)
    {
      const struct rt_ll_rule *r = &p->rules[i];
      struct stat st;
      int fd = open_rule (p, i, &st, err);
      if (fd == -2)
        return -1;
      if (fd < 0)
        continue;
      struct ll_path_beneath_attr pb = { .allowed_access = r->access,
                                         .parent_fd = fd };
      if (!S_ISDIR (st.st_mode))
        pb.allowed_access &= RT_LL_FS_FILE;
      long rc = pb.allowed_access == 0
                    ? 0
                    : syscall (__NR_landlock_add_rule, rfd,
                               LL_RULE_PATH_BENEATH, &pb, 0);
      int e = errno;
      close (fd);
      if (rc < 0)
        return cm_err_set (err, e, "landlock: add rule for `%s`", r->path);
      if (pins && pb.allowed_access)
        pins[npins++] = (struct rt_ll_pin) {
          .index = i, .access = r->access, .dev = (uint64_t) st.st_dev,
          .ino = (uint64_t) st.st_ino, .type = st.st_mode & S_IFMT };
    }
  return pins ? rt_ll_pins_write (p, pins, npins, err) : 0;
}

static int
add_port_rules (int rfd, const uint16_t *ports, size_t n, uint64_t access,
                struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    {
      struct ll_net_port_attr np = { .allowed_access = access,
                                     .port = ports[i] };
      if (syscall (__NR_landlock_add_rule, rfd, LL_RULE_NET_PORT, &np, 0) < 0)
        return cm_err_set (err, errno, "landlock: add TCP port rule %u",
                           ports[i]);
    }
  return 0;
}

int
rt_ll_child_apply (const struct rt_ll_policy *p, struct cm_err **err)
{
  for (size_t i = 0; i < p->masks_len; i++)
    if (mask_path (p->masks[i], err) < 0)
      return -1;
  if (p->handled_fs == 0 && p->handled_net == 0 && p->scoped == 0)
    return 0;

  struct ll_ruleset_attr attr = { .handled_access_fs = p->handled_fs,
                                  .handled_access_net = p->handled_net,
                                  .scoped = p->scoped };
  /* Older kernels reject a struct larger than they know (E2BIG) unless the
   * tail is zero; size it to what the policy uses. */
  size_t size = p->scoped ? 24 : p->handled_net ? 16 : 8;
  int rfd = (int) syscall (__NR_landlock_create_ruleset, &attr, size, 0);
  if (rfd < 0)
    return cm_err_set (err, errno, "landlock: create ruleset");
  int rc = add_path_rules (p, rfd, err);
  if (rc == 0 && (p->handled_net & RT_LL_NET_BIND_TCP))
    rc = add_port_rules (rfd, p->bind_ports, p->bind_ports_len,
                         RT_LL_NET_BIND_TCP, err);
  if (rc == 0 && (p->handled_net & RT_LL_NET_CONNECT_TCP))
    rc = add_port_rules (rfd, p->connect_ports, p->connect_ports_len,
                         RT_LL_NET_CONNECT_TCP, err);
  if (rc == 0 && syscall (__NR_landlock_restrict_self, rfd, 0) < 0)
    rc = cm_err_set (err, errno, "landlock: restrict self (needs "
                     "CAP_SYS_ADMIN or no_new_privs)");
  close (rfd);
  return rc;
}

/* ---- check --------------------------------------------------------------- */

char *
rt_ll_describe_host (void)
{
  int abi = rt_ll_abi ();
  char *out = abi ? xasprintf ("landlock: ABI %d\n", abi)
                  : xstrdup ("landlock: unavailable\n");
  for (int k = 0; k < RT_LL_P_N; k++)
    {
      char *line;
      if (abi >= prots[k].abi)
        line = xasprintf ("%slandlock.%s: available (ABI %d)%s\n", out,
                          prots[k].name, prots[k].abi,
                          k == RT_LL_P_FS ? "; forbids mount inside the "
                          "container: containers that mount need "
                          ANN "disable=fs" : "");
      else
        line = xasprintf ("%slandlock.%s: unavailable (needs ABI %d; strict "
                          "by default, %sdegrade=%s runs without it)\n", out,
                          prots[k].name, prots[k].abi, ANN, prots[k].name);
      free (out);
      out = line;
    }
  return out;
}
