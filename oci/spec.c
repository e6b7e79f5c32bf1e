/* config.json / process.json → struct rt_config / struct rt_process.
 *
 * Structure: one function per JSON object; each reads its fields with the
 * typed getters below (opt_str, opt_u32, opt_strv, opt_objv, ...), which look
 * the key up, check the type and range, and name the JSON path in any error.
 * A getter returns 1 when the field was set, 0 when absent (or JSON null, which
 * the runtime-spec treats as absent), -1 on error.  Arrays are stored into the
 * owning struct before their elements are parsed, so rt_config_free() can free
 * whatever a failed parse left behind.
 *
 * Integers are parsed from yajl's raw text rather than its long long: values
 * above INT64_MAX (RLIM_INFINITY, seccomp masks) are legal uint64s, and a
 * float such as 1.0 where an integer is required must be an error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "spec.h"
#include "../common/json_read.h"
#include "../common/util.h"

/* yajl_tree_free() recurses once per nesting level; bound the depth before
 * parsing so a 16 MiB "[[[[..." cannot overflow the stack. */

struct pctx
{
  struct cm_err **err;
  const char *root_name;        /* names the document itself in errors */
  char path[1024];
  size_t len;
};

static int __attribute__ ((format (printf, 2, 3)))
fail (struct pctx *c, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  return cm_err_set (c->err, 0, "%s: %s", c->len ? c->path : c->root_name,
                     msg ? msg : "out of memory");
}
/* The analyzer does not follow a variadic call: the macro puts fail's -1
 * at the call site, as common/err.h does for cm_err_set, so a `return fail
 * (...)` is a failure to it and not a path on to the success branch. */
#define fail(...) ({ fail (__VA_ARGS__); -1; })

/* Path building: push returns the old length for pop.  Over-long paths are
 * truncated (snprintf) rather than failing: they only decorate messages. */
static size_t
push_fmt (struct pctx *c, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static size_t
push_fmt (struct pctx *c, const char *fmt, ...)
{
  size_t old = c->len;
  va_list ap;
  int n;

  if (c->len >= sizeof c->path - 1)
    return old;
  va_start (ap, fmt);
  n = vsnprintf (c->path + c->len, sizeof c->path - c->len, fmt, ap);
  va_end (ap);
  if (n > 0)
    c->len += (size_t) n;
  if (c->len >= sizeof c->path)
    c->len = sizeof c->path - 1;
  return old;
}

static size_t
push_key (struct pctx *c, const char *key)
{
  return push_fmt (c, c->len ? ".%s" : "%s", key);
}

static size_t
push_index (struct pctx *c, size_t i)
{
  return push_fmt (c, "[%zu]", i);
}

/* Map keys are user data (annotations, sysctl): quote them so a dotted key
 * does not read as a path. */
static size_t
push_mapkey (struct pctx *c, const char *key)
{
  return push_fmt (c, "[\"%.200s\"]", key);
}

static void
pop (struct pctx *c, size_t old)
{
  c->len = old;
  c->path[old] = '\0';
}

/* The value for |key| in |obj|, or NULL when absent or null.  yajl keeps
 * duplicate keys; the last one wins, as in Go's encoding/json (runc). */
static yajl_val
field (yajl_val obj, const char *key)
{
  return cm_json_get (obj, key);
}

/* ---- scalars -------------------------------------------------------- */

static int
str_value (struct pctx *c, yajl_val v, char **out)
{
  if (v->type != yajl_t_string)
    return fail (c, "expected string");
  free (*out);
  *out = xstrdup (v->u.string);
  return 1;
}

/* Parses an integer in [min, max] from yajl's raw number text.  The result
 * is returned as two's-complement bits for the caller's type. */
static int
int_value (struct pctx *c, yajl_val v, int64_t min, uint64_t max,
           uint64_t *out)
{
  const char *r, *p;
  bool neg;
  uint64_t mag;
  char *end;

  if (v->type != yajl_t_number || v->u.number.r == NULL)
    return fail (c, "expected integer");
  r = v->u.number.r;
  if (strpbrk (r, ".eE") != NULL)
    return fail (c, "expected integer, got %.40s", r);
  neg = r[0] == '-';
  p = neg ? r + 1 : r;
  errno = 0;
  mag = strtoull (p, &end, 10);
  if (errno != 0 || *end != '\0' || end == p)
    goto range;
  if (neg && mag != 0)
    {
      /* -mag must be >= min, i.e. mag <= -min. */
      if (min >= 0 || mag > (uint64_t) (-(min + 1)) + 1)
        goto range;
      *out = (uint64_t) 0 - mag;
      return 1;
    }
  if (mag > max || (min > 0 && mag < (uint64_t) min))
    goto range;
  *out = mag;
  return 1;

range:
  return fail (c, "out of range (%" PRId64 "..%" PRIu64 "): %.40s", min, max,
               r);
}

static int
bool_value (struct pctx *c, yajl_val v, bool *out)
{
  if (v->type != yajl_t_true && v->type != yajl_t_false)
    return fail (c, "expected boolean");
  *out = v->type == yajl_t_true;
  return 1;
}

/* Looks |key| up and runs |fn| on it with the path extended. */
#define WITH_KEY(c, obj, key, expr)                                     \
  ({                                                                    \
    yajl_val v_ = field ((obj), (key));                                 \
    int r_ = 0;                                                         \
    if (v_ != NULL)                                                     \
      {                                                                 \
        size_t old_ = push_key ((c), (key));                            \
        yajl_val v = v_;                                                \
        r_ = (expr);                                                    \
        if (r_ >= 0)                                                    \
          pop ((c), old_);                                              \
      }                                                                 \
    r_;                                                                 \
  })

static int
required (struct pctx *c, const char *key)
{
  size_t old = push_key (c, key);
  (void) old;
  return fail (c, "required");
}

static int
opt_str (struct pctx *c, yajl_val o, const char *key, char **out)
{
  return WITH_KEY (c, o, key, str_value (c, v, out));
}

static int
req_str (struct pctx *c, yajl_val o, const char *key, char **out)
{
  int r = opt_str (c, o, key, out);
  return r == 0 ? required (c, key) : r;
}

static int
opt_bool (struct pctx *c, yajl_val o, const char *key, bool *out)
{
  return WITH_KEY (c, o, key, bool_value (c, v, out));
}

static int
opt_int (struct pctx *c, yajl_val o, const char *key, int64_t min,
         uint64_t max, uint64_t *out)
{
  return WITH_KEY (c, o, key, int_value (c, v, min, max, out));
}

/* Typed wrappers: each checks the range of its C type (or a narrower one
 * the runtime-spec gives) and stores only on success. */
#define DEF_INT_GETTER(name, type, cast)                                \
  static int name (struct pctx *c, yajl_val o, const char *key,         \
                   int64_t min, uint64_t max, type *out)                \
  {                                                                     \
    uint64_t bits = 0;                                                  \
    int r = opt_int (c, o, key, min, max, &bits);                       \
    if (r > 0)                                                          \
      *out = (type) (cast) bits;                                        \
    return r;                                                           \
  }
DEF_INT_GETTER (opt_u16r, uint16_t, uint64_t)
DEF_INT_GETTER (opt_u32r, uint32_t, uint64_t)
DEF_INT_GETTER (opt_u64r, uint64_t, uint64_t)
DEF_INT_GETTER (opt_i32r, int32_t, int64_t)
DEF_INT_GETTER (opt_i64r, int64_t, int64_t)

static int
opt_u32 (struct pctx *c, yajl_val o, const char *key, uint32_t *out)
{
  return opt_u32r (c, o, key, 0, UINT32_MAX, out);
}

static int
req_u32 (struct pctx *c, yajl_val o, const char *key, uint32_t *out)
{
  int r = opt_u32 (c, o, key, out);
  return r == 0 ? required (c, key) : r;
}

static int
opt_u64 (struct pctx *c, yajl_val o, const char *key, uint64_t *out)
{
  return opt_u64r (c, o, key, 0, UINT64_MAX, out);
}

static int
req_u64 (struct pctx *c, yajl_val o, const char *key, uint64_t *out)
{
  int r = opt_u64 (c, o, key, out);
  return r == 0 ? required (c, key) : r;
}

static int
opt_i32 (struct pctx *c, yajl_val o, const char *key, int32_t *out)
{
  return opt_i32r (c, o, key, INT32_MIN, INT32_MAX, out);
}

static int
opt_i64 (struct pctx *c, yajl_val o, const char *key, int64_t *out)
{
  return opt_i64r (c, o, key, INT64_MIN, INT64_MAX, out);
}

/* Memory limits: int64 where -1 means unlimited and other negatives have no
 * meaning to the kernel. */
static int
opt_memlimit (struct pctx *c, yajl_val o, const char *key, int64_t *out)
{
  return opt_i64r (c, o, key, -1, INT64_MAX, out);
}

/* ---- arrays and maps ------------------------------------------------ */

static int
strv_value (struct pctx *c, yajl_val v, char ***out, size_t *len)
{
  size_t n;

  if (v->type != yajl_t_array)
    return fail (c, "expected array of strings");
  n = v->u.array.len;
  for (size_t i = 0; i < *len; i++)
    free ((*out)[i]);
  free (*out);
  *out = xcalloc (n ? n : 1, sizeof **out);
  *len = 0;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = v->u.array.values[i];
      if (e->type != yajl_t_string)
        {
          push_index (c, i);
          return fail (c, "expected string");
        }
      (*out)[i] = xstrdup (e->u.string);
      *len = i + 1;
    }
  return 1;
}

static int
opt_strv (struct pctx *c, yajl_val o, const char *key, char ***out,
          size_t *len)
{
  return WITH_KEY (c, o, key, strv_value (c, v, out, len));
}

static int
req_strv (struct pctx *c, yajl_val o, const char *key, char ***out,
          size_t *len)
{
  int r = opt_strv (c, o, key, out, len);
  return r == 0 ? required (c, key) : r;
}

static int
kv_value (struct pctx *c, yajl_val v, struct rt_kv **out, size_t *len)
{
  size_t n;

  if (v->type != yajl_t_object)
    return fail (c, "expected object of strings");
  n = v->u.object.len;
  *out = xcalloc (n ? n : 1, sizeof **out);
  *len = 0;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = v->u.object.values[i];
      if (e->type != yajl_t_string)
        {
          push_mapkey (c, v->u.object.keys[i]);
          return fail (c, "expected string");
        }
      (*out)[i].key = xstrdup (v->u.object.keys[i]);
      (*out)[i].value = xstrdup (e->u.string);
      *len = i + 1;
    }
  return 1;
}

static int
opt_kv (struct pctx *c, yajl_val o, const char *key, struct rt_kv **out,
        size_t *len)
{
  return WITH_KEY (c, o, key, kv_value (c, v, out, len));
}

typedef int (*elem_fn) (struct pctx *c, yajl_val obj, void *dst);

/* An array of objects, each parsed by |fn| into a zeroed element of size
 * |sz|.  *out and *len are set before the elements are parsed so a failure
 * leaves a freeable array (its unparsed tail is zeroed). */
static int
objv_value (struct pctx *c, yajl_val v, size_t sz, elem_fn fn, void **out,
            size_t *len)
{
  size_t n;

  if (v->type != yajl_t_array)
    return fail (c, "expected array of objects");
  n = v->u.array.len;
  *out = xcalloc (n ? n : 1, sz);
  *len = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = v->u.array.values[i];
      size_t old = push_index (c, i);
      if (e->type != yajl_t_object)
        return fail (c, "expected object");
      if (fn (c, e, (char *) *out + i * sz) < 0)
        return -1;
      pop (c, old);
    }
  return 1;
}

#define opt_objv(c, o, key, fn, arr, len)                               \
  WITH_KEY (c, o, key,                                                  \
            objv_value (c, v, sizeof **(arr), (fn),           \
                        (void **) (arr), (len)))

/* A nested object parsed by |fn|. */
static int
obj_value (struct pctx *c, yajl_val v, elem_fn fn, void *dst)
{
  if (v->type != yajl_t_object)
    return fail (c, "expected object");
  return fn (c, v, dst) < 0 ? -1 : 1;
}

#define opt_obj(c, o, key, fn, dst)                                     \
  WITH_KEY (c, o, key, obj_value (c, v, (fn), (dst)))

/* Sets a presence bit from a getter's result; bails out on error. */
#define TRY(expr)                                                       \
  do {                                                                  \
    if ((expr) < 0)                                                     \
      return -1;                                                        \
  } while (0)
#define TRY_BIT(bit, expr)                                              \
  do {                                                                  \
    int r_ = (expr);                                                    \
    if (r_ < 0)                                                         \
      return -1;                                                        \
    if (r_ > 0)                                                         \
      (bit) = 1;                                                        \
  } while (0)

/* ---- process -------------------------------------------------------- */

static int
gids_value (struct pctx *c, yajl_val v, struct rt_user *u)
{
  if (v->type != yajl_t_array)
    return fail (c, "expected array of integers");
  u->additional_gids = xcalloc (v->u.array.len + 1, sizeof (uint32_t));
  u->additional_gids_len = v->u.array.len;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      uint64_t g = 0;
      size_t old = push_index (c, i);
      if (int_value (c, v->u.array.values[i], 0, UINT32_MAX, &g) < 0)
        return -1;
      u->additional_gids[i] = (uint32_t) g;
      pop (c, old);
    }
  return 1;
}

static int
parse_user (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_user *u = dst;
  TRY (req_u32 (c, o, "uid", &u->uid));
  TRY (req_u32 (c, o, "gid", &u->gid));
  TRY_BIT (u->umask_present, opt_u32r (c, o, "umask", 0, 0777, &u->umask));
  TRY (WITH_KEY (c, o, "additionalGids", gids_value (c, v, u)));
  TRY (opt_str (c, o, "username", &u->username));
  return 0;
}

static int
parse_caps (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_capabilities *k = dst;
  TRY (opt_strv (c, o, "bounding", &k->bounding, &k->bounding_len));
  TRY (opt_strv (c, o, "effective", &k->effective, &k->effective_len));
  TRY (opt_strv (c, o, "permitted", &k->permitted, &k->permitted_len));
  TRY (opt_strv (c, o, "inheritable", &k->inheritable, &k->inheritable_len));
  TRY (opt_strv (c, o, "ambient", &k->ambient, &k->ambient_len));
  return 0;
}

static int
parse_rlimit (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_rlimit *r = dst;
  TRY (req_str (c, o, "type", &r->type));
  TRY (req_u64 (c, o, "soft", &r->soft));
  TRY (req_u64 (c, o, "hard", &r->hard));
  return 0;
}

static int
parse_scheduler (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_scheduler *s = dst;
  TRY (req_str (c, o, "policy", &s->policy));
  TRY_BIT (s->nice_present, opt_i32r (c, o, "nice", -20, 19, &s->nice));
  TRY_BIT (s->priority_present, opt_i32 (c, o, "priority", &s->priority));
  TRY (opt_strv (c, o, "flags", &s->flags, &s->flags_len));
  TRY_BIT (s->runtime_present, opt_u64 (c, o, "runtime", &s->runtime));
  TRY_BIT (s->deadline_present, opt_u64 (c, o, "deadline", &s->deadline));
  TRY_BIT (s->period_present, opt_u64 (c, o, "period", &s->period));
  return 0;
}

static int
parse_io_priority (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_io_priority *p = dst;
  TRY (req_str (c, o, "class", &p->class_));
  /* ioprio levels are 0..7; the spec types the field int32. */
  int r = opt_i32r (c, o, "priority", 0, 7, &p->priority);
  if (r < 0)
    return -1;
  if (r == 0)
    return required (c, "priority");
  return 0;
}

static int
parse_console_size (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_process *p = dst;
  TRY (req_u32 (c, o, "height", &p->console_height));
  TRY (req_u32 (c, o, "width", &p->console_width));
  p->console_size_present = 1;
  return 0;
}

static int
parse_process (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_process *p = dst;
  TRY (opt_bool (c, o, "terminal", &p->terminal));
  TRY (opt_obj (c, o, "consoleSize", parse_console_size, p));
  TRY (opt_obj (c, o, "user", parse_user, &p->user));
  TRY (req_strv (c, o, "args", &p->args, &p->args_len));
  TRY (opt_strv (c, o, "env", &p->env, &p->env_len));
  TRY (req_str (c, o, "cwd", &p->cwd));
  if (field (o, "capabilities") != NULL && p->capabilities == NULL)
    p->capabilities = xcalloc (1, sizeof *p->capabilities);
  TRY (opt_obj (c, o, "capabilities", parse_caps, p->capabilities));
  TRY (opt_objv (c, o, "rlimits", parse_rlimit, &p->rlimits,
                 &p->rlimits_len));
  TRY (opt_bool (c, o, "noNewPrivileges", &p->no_new_privileges));
  TRY_BIT (p->oom_score_adj_present,
           opt_i32r (c, o, "oomScoreAdj", -1000, 1000, &p->oom_score_adj));
  if (field (o, "scheduler") != NULL && p->scheduler == NULL)
    p->scheduler = xcalloc (1, sizeof *p->scheduler);
  TRY (opt_obj (c, o, "scheduler", parse_scheduler, p->scheduler));
  if (field (o, "ioPriority") != NULL && p->io_priority == NULL)
    p->io_priority = xcalloc (1, sizeof *p->io_priority);
  TRY (opt_obj (c, o, "ioPriority", parse_io_priority, p->io_priority));
  TRY (opt_str (c, o, "apparmorProfile", &p->apparmor_profile));
  TRY (opt_str (c, o, "selinuxLabel", &p->selinux_label));
  return 0;
}

/* ---- root, mounts, hooks -------------------------------------------- */

static int
parse_root (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  TRY (req_str (c, o, "path", &cfg->root_path));
  TRY (opt_bool (c, o, "readonly", &cfg->root_readonly));
  return 0;
}

static int
parse_idmap (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_idmap *m = dst;
  TRY (req_u32 (c, o, "containerID", &m->container_id));
  TRY (req_u32 (c, o, "hostID", &m->host_id));
  TRY (req_u32 (c, o, "size", &m->size));
  return 0;
}

static int
parse_mount (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_mount *m = dst;
  TRY (req_str (c, o, "destination", &m->destination));
  TRY (opt_str (c, o, "type", &m->type));
  TRY (opt_str (c, o, "source", &m->source));
  TRY (opt_strv (c, o, "options", &m->options, &m->options_len));
  TRY (opt_objv (c, o, "uidMappings", parse_idmap, &m->uid_mappings,
                 &m->uid_mappings_len));
  TRY (opt_objv (c, o, "gidMappings", parse_idmap, &m->gid_mappings,
                 &m->gid_mappings_len));
  return 0;
}

static int
parse_hook (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_hook *h = dst;
  TRY (req_str (c, o, "path", &h->path));
  TRY (opt_strv (c, o, "args", &h->args, &h->args_len));
  TRY (opt_strv (c, o, "env", &h->env, &h->env_len));
  /* runtime-spec: "timeout ... MUST be greater than zero". */
  TRY_BIT (h->timeout_present,
           opt_i32r (c, o, "timeout", 1, INT32_MAX, &h->timeout));
  return 0;
}

static const char *const hook_keys[RT_HOOK_KINDS] = {
  [RT_HOOK_PRESTART] = "prestart",
  [RT_HOOK_CREATE_RUNTIME] = "createRuntime",
  [RT_HOOK_CREATE_CONTAINER] = "createContainer",
  [RT_HOOK_START_CONTAINER] = "startContainer",
  [RT_HOOK_POSTSTART] = "poststart",
  [RT_HOOK_POSTSTOP] = "poststop",
};

static int
parse_hooks (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  for (int k = 0; k < RT_HOOK_KINDS; k++)
    TRY (opt_objv (c, o, hook_keys[k], parse_hook, &cfg->hooks[k].hooks,
                   &cfg->hooks[k].len));
  return 0;
}

/* ---- linux ---------------------------------------------------------- */

static int
parse_namespace (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_namespace *ns = dst;
  TRY (req_str (c, o, "type", &ns->type));
  TRY (opt_str (c, o, "path", &ns->path));
  return 0;
}

static int
parse_device (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_device *d = dst;
  TRY (req_str (c, o, "path", &d->path));
  TRY (req_str (c, o, "type", &d->type));
  TRY (opt_i64 (c, o, "major", &d->major));
  TRY (opt_i64 (c, o, "minor", &d->minor));
  /* podman writes the whole st_mode (S_IFCHR | 0666 = 8630), as Go's
   * os.FileMode conversion gives it; only the permission bits are used. */
  TRY_BIT (d->file_mode_present,
           opt_u32r (c, o, "fileMode", 0, 0177777, &d->file_mode));
  TRY_BIT (d->uid_present, opt_u32 (c, o, "uid", &d->uid));
  TRY_BIT (d->gid_present, opt_u32 (c, o, "gid", &d->gid));
  return 0;
}

static int
parse_device_rule (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_device_rule *d = dst;
  bool allow = false;
  int r = opt_bool (c, o, "allow", &allow);
  if (r < 0)
    return -1;
  if (r == 0)
    return required (c, "allow");
  d->allow = allow;
  TRY (opt_str (c, o, "type", &d->type));
  d->major = d->minor = -1;
  TRY (opt_i64r (c, o, "major", -1, INT64_MAX, &d->major));
  TRY (opt_i64r (c, o, "minor", -1, INT64_MAX, &d->minor));
  TRY (opt_str (c, o, "access", &d->access));
  return 0;
}

static int
parse_memory (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY_BIT (r->memory.limit_present,
           opt_memlimit (c, o, "limit", &r->memory.limit));
  TRY_BIT (r->memory.reservation_present,
           opt_memlimit (c, o, "reservation", &r->memory.reservation));
  TRY_BIT (r->memory.swap_present,
           opt_memlimit (c, o, "swap", &r->memory.swap));
  TRY (opt_memlimit (c, o, "kernel", &r->memory.kernel));
  TRY (opt_memlimit (c, o, "kernelTCP", &r->memory.kernel_tcp));
  TRY_BIT (r->memory.swappiness_present,
           opt_u64 (c, o, "swappiness", &r->memory.swappiness));
  TRY_BIT (r->memory.disable_oom_killer_present,
           opt_bool (c, o, "disableOOMKiller", &r->memory.disable_oom_killer));
  TRY (opt_bool (c, o, "useHierarchy", &r->memory.use_hierarchy));
  TRY (opt_bool (c, o, "checkBeforeUpdate", &r->memory.check_before_update));
  r->memory_present = 1;
  return 0;
}

static int
parse_cpu (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY_BIT (r->cpu.shares_present, opt_u64 (c, o, "shares", &r->cpu.shares));
  TRY_BIT (r->cpu.quota_present, opt_i64 (c, o, "quota", &r->cpu.quota));
  TRY_BIT (r->cpu.period_present, opt_u64 (c, o, "period", &r->cpu.period));
  TRY_BIT (r->cpu.realtime_runtime_present,
           opt_i64 (c, o, "realtimeRuntime", &r->cpu.realtime_runtime));
  TRY_BIT (r->cpu.realtime_period_present,
           opt_u64 (c, o, "realtimePeriod", &r->cpu.realtime_period));
  TRY_BIT (r->cpu.burst_present, opt_u64 (c, o, "burst", &r->cpu.burst));
  TRY_BIT (r->cpu.idle_present, opt_i64 (c, o, "idle", &r->cpu.idle));
  TRY (opt_str (c, o, "cpus", &r->cpu.cpus));
  TRY (opt_str (c, o, "mems", &r->cpu.mems));
  r->cpu_present = 1;
  return 0;
}

static int
parse_pids (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY_BIT (r->pids.limit_present, opt_i64 (c, o, "limit", &r->pids.limit));
  r->pids_present = 1;
  return 0;
}

/* A device number: required, and as Linux's dev_t has them (32 bits). */
static int
req_devnum (struct pctx *c, yajl_val o, const char *key, int64_t *out)
{
  int r = opt_i64r (c, o, key, 0, UINT32_MAX, out);
  return r == 0 ? required (c, key) : r;
}

static int
parse_blkio_weight_dev (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_blkio_device *d = dst;
  TRY (req_devnum (c, o, "major", &d->major));
  TRY (req_devnum (c, o, "minor", &d->minor));
  TRY_BIT (d->weight_present,
           opt_u16r (c, o, "weight", 0, UINT16_MAX, &d->weight));
  TRY_BIT (d->leaf_weight_present,
           opt_u16r (c, o, "leafWeight", 0, UINT16_MAX, &d->leaf_weight));
  return 0;
}

static int
parse_blkio_rate_dev (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_blkio_device *d = dst;
  TRY (req_devnum (c, o, "major", &d->major));
  TRY (req_devnum (c, o, "minor", &d->minor));
  TRY (req_u64 (c, o, "rate", &d->rate));
  return 0;
}

static const char *const throttle_keys[RT_THROTTLE_KINDS] = {
  [RT_THROTTLE_READ_BPS] = "throttleReadBpsDevice",
  [RT_THROTTLE_WRITE_BPS] = "throttleWriteBpsDevice",
  [RT_THROTTLE_READ_IOPS] = "throttleReadIOPSDevice",
  [RT_THROTTLE_WRITE_IOPS] = "throttleWriteIOPSDevice",
};

static int
parse_blkio (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY_BIT (r->blkio.weight_present,
           opt_u16r (c, o, "weight", 0, UINT16_MAX, &r->blkio.weight));
  TRY_BIT (r->blkio.leaf_weight_present,
           opt_u16r (c, o, "leafWeight", 0, UINT16_MAX,
                     &r->blkio.leaf_weight));
  TRY (opt_objv (c, o, "weightDevice", parse_blkio_weight_dev,
                 &r->blkio.weight_device, &r->blkio.weight_device_len));
  for (int k = 0; k < RT_THROTTLE_KINDS; k++)
    TRY (opt_objv (c, o, throttle_keys[k], parse_blkio_rate_dev,
                   &r->blkio.throttle[k], &r->blkio.throttle_len[k]));
  return 0;
}

static int
parse_hugepage_limit (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_hugepage_limit *h = dst;
  TRY (req_str (c, o, "pageSize", &h->page_size));
  TRY (req_u64 (c, o, "limit", &h->limit));
  return 0;
}

static int
parse_net_priority (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_net_priority *p = dst;
  TRY (req_str (c, o, "name", &p->name));
  TRY (req_u32 (c, o, "priority", &p->priority));
  return 0;
}

static int
parse_network (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY_BIT (r->network.class_id_present,
           opt_u32 (c, o, "classID", &r->network.class_id));
  TRY (opt_objv (c, o, "priorities", parse_net_priority,
                 &r->network.priorities, &r->network.priorities_len));
  return 0;
}

static int
parse_rdma_limit (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_rdma_limit *l = dst;
  TRY_BIT (l->hca_handles_present,
           opt_u32 (c, o, "hcaHandles", &l->hca_handles));
  TRY_BIT (l->hca_objects_present,
           opt_u32 (c, o, "hcaObjects", &l->hca_objects));
  return 0;
}

/* linux.resources.rdma: a map from device name to its limits. */
static int
rdma_value (struct pctx *c, yajl_val v, struct rt_resources *r)
{
  size_t n;
  if (v->type != yajl_t_object)
    return fail (c, "expected object");
  n = v->u.object.len;
  r->rdma = xcalloc (n ? n : 1, sizeof *r->rdma);
  for (size_t i = 0; i < n; i++)
    {
      size_t old = push_mapkey (c, v->u.object.keys[i]);
      r->rdma[i].device = xstrdup (v->u.object.keys[i]);
      r->rdma_len = i + 1;
      if (obj_value (c, v->u.object.values[i], parse_rdma_limit, &r->rdma[i])
          < 0)
        return -1;
      pop (c, old);
    }
  return 1;
}

static int
parse_resources (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_resources *r = dst;
  TRY (opt_objv (c, o, "devices", parse_device_rule, &r->devices,
                 &r->devices_len));
  TRY (opt_obj (c, o, "memory", parse_memory, r));
  TRY (opt_obj (c, o, "cpu", parse_cpu, r));
  TRY (opt_obj (c, o, "pids", parse_pids, r));
  TRY (opt_obj (c, o, "blockIO", parse_blkio, r));
  TRY (opt_objv (c, o, "hugepageLimits", parse_hugepage_limit, &r->hugepages,
                 &r->hugepages_len));
  TRY (opt_obj (c, o, "network", parse_network, r));
  TRY (WITH_KEY (c, o, "rdma", rdma_value (c, v, r)));
  TRY (opt_kv (c, o, "unified", &r->unified, &r->unified_len));
  return 0;
}

static int
parse_seccomp_arg (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_seccomp_arg *a = dst;
  int r = opt_u32r (c, o, "index", 0, 5, &a->index);
  if (r < 0)
    return -1;
  if (r == 0)
    return required (c, "index");
  TRY (req_u64 (c, o, "value", &a->value));
  TRY (opt_u64 (c, o, "valueTwo", &a->value_two));
  TRY (req_str (c, o, "op", &a->op));
  return 0;
}

static int
parse_syscall (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_seccomp_syscall *s = dst;
  TRY (req_strv (c, o, "names", &s->names, &s->names_len));
  TRY (req_str (c, o, "action", &s->action));
  TRY_BIT (s->errno_ret_present, opt_u32 (c, o, "errnoRet", &s->errno_ret));
  TRY (opt_objv (c, o, "args", parse_seccomp_arg, &s->args, &s->args_len));
  return 0;
}

static int
parse_seccomp (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_seccomp *s = dst;
  TRY (req_str (c, o, "defaultAction", &s->default_action));
  TRY_BIT (s->default_errno_ret_present,
           opt_u32 (c, o, "defaultErrnoRet", &s->default_errno_ret));
  TRY (opt_strv (c, o, "architectures", &s->architectures,
                 &s->architectures_len));
  TRY (opt_strv (c, o, "flags", &s->flags, &s->flags_len));
  TRY (opt_str (c, o, "listenerPath", &s->listener_path));
  TRY (opt_str (c, o, "listenerMetadata", &s->listener_metadata));
  TRY (opt_objv (c, o, "syscalls", parse_syscall, &s->syscalls,
                 &s->syscalls_len));
  return 0;
}

struct time_offset
{
  int64_t *secs;
  uint32_t *nanosecs;
};

static int
parse_time_offset (struct pctx *c, yajl_val o, void *dst)
{
  struct time_offset *t = dst;
  TRY (opt_i64 (c, o, "secs", t->secs));
  /* Nanoseconds of a timespec: below one second. */
  TRY (opt_u32r (c, o, "nanosecs", 0, 999999999, t->nanosecs));
  return 0;
}

static int
parse_time_offsets (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  static const char *const keys[2] = { "monotonic", "boottime" };
  for (unsigned i = 0; i < 2; i++)
    {
      struct time_offset t = { &cfg->time_offsets[i].offset_secs,
                               &cfg->time_offsets[i].offset_nanosecs };
      int r = opt_obj (c, o, keys[i], parse_time_offset, &t);
      if (r < 0)
        return -1;
      if (r > 0)
        cfg->time_offsets_present |= 1u << i;
    }
  return 0;
}

static int
parse_personality (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  TRY (req_str (c, o, "domain", &cfg->personality_domain));
  TRY (opt_strv (c, o, "flags", &cfg->personality_flags,
                 &cfg->personality_flags_len));
  return 0;
}

/* linux.intelRdt is refused (features reports it disabled), as runc
 * refuses it on a host without resctrl: a container must not run without
 * the cache/bandwidth/monitoring limits it asked for (1.3 added schemata
 * and enableMonitoring).  closID names a resctrl directory in runc and
 * crun: a value that is a path is named as such first. */
static int
parse_intel_rdt (struct pctx *c, yajl_val o, void *dst)
{
  _cleanup_free_ char *clos = NULL;
  int r = opt_str (c, o, "closID", &clos);
  if (r < 0)
    return r;
  if (r > 0
      && (strcmp (clos, ".") == 0 || strcmp (clos, "..") == 0
          || strchr (clos, '/') != NULL))
    {
      push_key (c, "closID");
      return fail (c, "invalid \"%.64s\": a name, not a path", clos);
    }
  return fail (c, "not supported by sandlock-oci (no Intel RDT / resctrl)");
}

/* Fields runtime-spec 1.3 added that sandlock-oci does not implement:
 * refused by path rather than ignored, so a config that needs them fails
 * instead of running without them. */
static int
refuse_unimplemented (struct pctx *c, yajl_val o)
{
  static const char *const keys[] = { "netDevices", "memoryPolicy" };
  for (size_t i = 0; i < ARRAY_SIZE (keys); i++)
    if (field (o, keys[i]) != NULL)
      {
        push_key (c, keys[i]);
        return fail (c, "not supported by sandlock-oci");
      }
  return 0;
}

static int
parse_linux (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  TRY (opt_objv (c, o, "namespaces", parse_namespace, &cfg->namespaces,
                 &cfg->namespaces_len));
  TRY (opt_objv (c, o, "uidMappings", parse_idmap, &cfg->uid_mappings,
                 &cfg->uid_mappings_len));
  TRY (opt_objv (c, o, "gidMappings", parse_idmap, &cfg->gid_mappings,
                 &cfg->gid_mappings_len));
  TRY (opt_objv (c, o, "devices", parse_device, &cfg->devices,
                 &cfg->devices_len));
  TRY (opt_kv (c, o, "sysctl", &cfg->sysctl, &cfg->sysctl_len));
  TRY (opt_strv (c, o, "maskedPaths", &cfg->masked_paths,
                 &cfg->masked_paths_len));
  TRY (opt_strv (c, o, "readonlyPaths", &cfg->readonly_paths,
                 &cfg->readonly_paths_len));
  TRY (opt_str (c, o, "rootfsPropagation", &cfg->rootfs_propagation));
  TRY (opt_str (c, o, "cgroupsPath", &cfg->cgroups_path));
  if (field (o, "resources") != NULL && cfg->resources == NULL)
    cfg->resources = xcalloc (1, sizeof *cfg->resources);
  TRY (opt_obj (c, o, "resources", parse_resources, cfg->resources));
  if (field (o, "seccomp") != NULL && cfg->seccomp == NULL)
    cfg->seccomp = xcalloc (1, sizeof *cfg->seccomp);
  TRY (opt_obj (c, o, "seccomp", parse_seccomp, cfg->seccomp));
  TRY (opt_str (c, o, "mountLabel", &cfg->mount_label));
  TRY (opt_obj (c, o, "timeOffsets", parse_time_offsets, cfg));
  TRY (opt_obj (c, o, "personality", parse_personality, cfg));
  TRY (opt_obj (c, o, "intelRdt", parse_intel_rdt, NULL));
  TRY (refuse_unimplemented (c, o));
  return 0;
}

/* ---- top level ------------------------------------------------------ */

/* The newest runtime-spec minor version whose fields this parser knows. */
#define SPEC_KNOWN_MINOR 3

/* "MAJOR.MINOR.PATCH" with an optional pre-release or build suffix
 * ("1.0.2-dev" from podman and containerd): the minor of a 1.x version,
 * or -1 for anything else (2.x, "1.2", "v1.0.0").  A 1.x newer than the
 * parser knows is accepted with a warning (semver: additive), as runc
 * does; 2.x is refused. */
static long
version_minor (const char *v)
{
  char *end;
  long minor;
  if (!cm_startswith (v, "1.") || v[2] < '0' || v[2] > '9')
    return -1;
  minor = strtol (v + 2, &end, 10);
  if (*end != '.' || end[1] < '0' || end[1] > '9' || minor > 9999)
    return -1;
  end++;
  while (*end >= '0' && *end <= '9')
    end++;
  return *end == '\0' || *end == '-' || *end == '+' ? minor : -1;
}

bool
oci_spec_version_newer (const char *v)
{
  return version_minor (v) > SPEC_KNOWN_MINOR;
}

bool
oci_spec_version_at_least (const char *v, long minor)
{
  return version_minor (v) >= minor;
}

static int
parse_config (struct pctx *c, yajl_val o, void *dst)
{
  struct rt_config *cfg = dst;
  TRY (req_str (c, o, "ociVersion", &cfg->oci_version));
  if (version_minor (cfg->oci_version) < 0)
    {
      push_key (c, "ociVersion");
      return fail (c, "unsupported version \"%.64s\" (supported: 1.x.y; "
                   "known up to 1.3)", cfg->oci_version);
    }
  TRY (opt_obj (c, o, "root", parse_root, cfg));
  if (field (o, "process") != NULL && cfg->process == NULL)
    cfg->process = xcalloc (1, sizeof *cfg->process);
  TRY (opt_obj (c, o, "process", parse_process, cfg->process));
  TRY (opt_str (c, o, "hostname", &cfg->hostname));
  TRY (opt_str (c, o, "domainname", &cfg->domainname));
  TRY (opt_objv (c, o, "mounts", parse_mount, &cfg->mounts,
                 &cfg->mounts_len));
  TRY (opt_obj (c, o, "hooks", parse_hooks, cfg));
  TRY (opt_kv (c, o, "annotations", &cfg->annotations,
               &cfg->annotations_len));
  TRY (opt_obj (c, o, "linux", parse_linux, cfg));
  /* pids.limit 0: "no tasks" since runtime-spec 1.3 (runc 1.4), but
   * "unlimited" for the engines that wrote older configs (cri-o's
   * default); the runtime sees -1 for unlimited. */
  if (version_minor (cfg->oci_version) < 3 && cfg->resources
      && cfg->resources->pids.limit_present && cfg->resources->pids.limit == 0)
    cfg->resources->pids.limit = -1;
  return 0;
}


static void
yajl_freep (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
}

/* Parses |buf| into a yajl tree whose root is an object, or returns NULL
 * with *err set.  |name| names the document in messages ("config.json:
 * invalid JSON: ..."). */
static yajl_val
parse_tree (const char *buf, size_t len, const char *name, struct cm_err **err)
{
  return cm_json_parse (buf, len, OCI_SPEC_MAX_BYTES, name, err);
}

/* |name| names the document; with |wrap|, path errors are prefixed with it
 * too (a file path given to oci_spec_load). */
static int
spec_parse_named (const char *buf, size_t len, const char *name, bool wrap,
                  struct rt_config **out, struct cm_err **err)
{
  _cleanup_ (yajl_freep) yajl_val tree = NULL;
  struct rt_config *cfg;
  struct pctx c = { .err = err, .root_name = name };

  tree = parse_tree (buf, len, name, err);
  if (tree == NULL)
    return -1;
  cfg = xcalloc (1, sizeof *cfg);
  if (parse_config (&c, tree, cfg) < 0)
    {
      rt_config_free (cfg);
      return wrap ? cm_err_wrap (err, "%s", name) : -1;
    }
  *out = cfg;
  return 0;
}

int
oci_spec_parse (const char *buf, size_t len, struct rt_config **out,
                struct cm_err **err)
{
  return spec_parse_named (buf, len, "config.json", false, out, err);
}

int
oci_spec_load (const char *path, struct rt_config **out, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;

  if (cm_read_file_at (AT_FDCWD, path, OCI_SPEC_MAX_BYTES, &buf, &len, err)
      < 0)
    return -1;
  return spec_parse_named (buf, len, path, true, out, err);
}

int
oci_process_parse (const char *buf, size_t len, struct rt_process **out,
                   struct cm_err **err)
{
  _cleanup_ (yajl_freep) yajl_val tree = NULL;
  struct rt_process *p;
  /* Paths start at "process" so messages read as in config.json. */
  struct pctx c = { .err = err, .root_name = "process" };

  tree = parse_tree (buf, len, "process.json", err);
  if (tree == NULL)
    return -1;
  push_key (&c, "process");
  p = xcalloc (1, sizeof *p);
  if (parse_process (&c, tree, p) < 0)
    {
      rt_process_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

/* update -r: a runtime-spec LinuxResources object on its own.  Paths start
 * at "resources" so messages read as "resources.memory.limit: ...". */
int
oci_resources_parse (const char *buf, size_t len, struct rt_resources **out,
                     struct cm_err **err)
{
  _cleanup_ (yajl_freep) yajl_val tree = NULL;
  struct rt_resources *r;
  struct pctx c = { .err = err, .root_name = "resources" };

  tree = parse_tree (buf, len, "resources", err);
  if (tree == NULL)
    return -1;
  push_key (&c, "resources");
  r = xcalloc (1, sizeof *r);
  if (parse_resources (&c, tree, r) < 0)
    {
      rt_resources_free (r);
      return -1;
    }
  /* `update` has no ociVersion: 0 keeps its old meaning, unlimited. */
  if (r->pids.limit_present && r->pids.limit == 0)
    r->pids.limit = -1;
  *out = r;
  return 0;
}

int
oci_json_prescan (const char *buf, size_t len, const char *name,
                  struct cm_err **err)
{
  return cm_json_prescan (buf, len, name, err);
}
