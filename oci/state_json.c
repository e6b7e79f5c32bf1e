/* state.json: the runtime-spec state plus what `delete` needs (start_time,
 * cgroup_path, systemd), generated and parsed here so that the parser can
 * be fuzzed on its own (tests/fuzz/fuzz_state.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/util.h"
#include "spec.h"
#include "state.h"

static const char *const status_names[] = {
  [OCI_STATUS_NONE] = "",
  [OCI_CREATING] = "creating",
  [OCI_CREATED] = "created",
  [OCI_RUNNING] = "running",
  [OCI_PAUSED] = "paused",
  [OCI_STOPPED] = "stopped",
  [OCI_STATUS_UNKNOWN] = "unknown",
};

const char *
oci_status_name (enum oci_status s)
{
  return (size_t) s < ARRAY_SIZE (status_names) ? status_names[s] : "";
}

enum oci_status
oci_status_from_name (const char *s)
{
  for (size_t i = 1; s && i < ARRAY_SIZE (status_names); i++)
    if (strcmp (s, status_names[i]) == 0)
      return (enum oci_status) i;
  return OCI_STATUS_NONE;
}

static void
yajl_freep (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
}

static int
get_str (const struct oci_state *st, yajl_val root, const char *key,
         char **out, struct cm_err **err)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_any);
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_STRING (v))
    return cm_err_set (err, 0, "state.json of `%s`: %s: expected string",
                       st->id, key);
  free (*out);
  *out = xstrdup (YAJL_GET_STRING (v));
  return 0;
}

/* A status that is not one of ours is refused like a field of the wrong
 * type: the file is not ours, and reconciliation would guess. */
static int
get_status (struct oci_state *st, yajl_val root, struct cm_err **err)
{
  _cleanup_free_ char *s = NULL;
  if (get_str (st, root, "status", &s, err) < 0)
    return -1;
  st->status = oci_status_from_name (s);
  if (s && (st->status == OCI_STATUS_NONE || st->status == OCI_STATUS_UNKNOWN))
    {
      st->status = OCI_STATUS_NONE;
      return cm_err_set (err, 0, "state.json of `%s`: status: unknown "
                         "\"%.32s\"", st->id, s);
    }
  return 0;
}

static int
get_int (const struct oci_state *st, yajl_val root, const char *key,
         long long max, long long *out, struct cm_err **err)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_any);
  *out = 0;
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < 0
      || YAJL_GET_INTEGER (v) > max)
    return cm_err_set (err, 0, "state.json of `%s`: %s: expected an integer "
                       "in 0..%lld", st->id, key, max);
  *out = YAJL_GET_INTEGER (v);
  return 0;
}

static int
get_annotations (struct oci_state *st, yajl_val root, struct cm_err **err)
{
  const char *path[] = { "annotations", NULL };
  yajl_val ann = yajl_tree_get (root, path, yajl_t_any);
  size_t n;
  if (ann == NULL || YAJL_IS_NULL (ann))
    return 0;
  if (!YAJL_IS_OBJECT (ann))
    return cm_err_set (err, 0, "state.json of `%s`: annotations: expected "
                       "object", st->id);
  n = YAJL_GET_OBJECT (ann)->len;
  st->annotations = xcalloc (n ? n : 1, sizeof *st->annotations);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val v = YAJL_GET_OBJECT (ann)->values[i];
      const char *k = YAJL_GET_OBJECT (ann)->keys[i];
      if (!YAJL_IS_STRING (v))
        return cm_err_set (err, 0, "state.json of `%s`: annotations.%s: "
                           "expected string", st->id, k);
      st->annotations[st->annotations_len].key = xstrdup (k);
      st->annotations[st->annotations_len++].value
          = xstrdup (YAJL_GET_STRING (v));
    }
  return 0;
}

static int
parse_fields (struct oci_state *st, yajl_val root, struct cm_err **err)
{
  const char *spath[] = { "systemd", NULL };
  long long pid, start_time, spid, sstart;
  if (get_str (st, root, "ociVersion", &st->oci_version, err) < 0
      || get_status (st, root, err) < 0
      || get_int (st, root, "pid", INT_MAX, &pid, err) < 0
      || get_int (st, root, "start_time", LLONG_MAX, &start_time, err) < 0
      || get_int (st, root, "supervisor_pid", INT_MAX, &spid, err) < 0
      || get_int (st, root, "supervisor_start_time", LLONG_MAX, &sstart,
                  err) < 0
      || get_str (st, root, "bundle", &st->bundle, err) < 0
      || get_str (st, root, "rootfs", &st->rootfs, err) < 0
      || get_str (st, root, "created", &st->created, err) < 0
      || get_str (st, root, "owner", &st->owner, err) < 0
      || get_str (st, root, "cgroup_path", &st->cgroup_path, err) < 0
      || get_str (st, root, "stdio", &st->stdio, err) < 0
      || get_annotations (st, root, err) < 0)
    return -1;
  st->pid = (pid_t) pid;
  st->start_time = (uint64_t) start_time;
  st->supervisor_pid = (pid_t) spid;
  st->supervisor_start_time = (uint64_t) sstart;
  st->systemd_cgroup = YAJL_IS_TRUE (yajl_tree_get (root, spath,
                                                    yajl_t_true));
  return 0;
}

int
oci_state_parse (struct oci_state *st, const char *buf, size_t len,
                 struct cm_err **err)
{
  _cleanup_ (yajl_freep) yajl_val root = NULL;
  _cleanup_free_ char *copy = NULL;
  char ebuf[256] = "";

  if (len > OCI_STATE_MAX_BYTES)
    return cm_err_set (err, 0, "state.json of `%s` is too large (%zu bytes, "
                       "limit %u)", st->id, len, OCI_STATE_MAX_BYTES);
  /* Bounded nesting (yajl_tree_free recurses) and no "\u0000". */
  if (oci_json_prescan (buf, len, "state.json", err) < 0)
    return cm_err_wrap (err, "container `%s`", st->id);
  copy = xmalloc (len + 1);
  memcpy (copy, buf, len);
  copy[len] = '\0';
  root = yajl_tree_parse (copy, ebuf, sizeof ebuf);
  if (root == NULL || !YAJL_IS_OBJECT (root))
    return cm_err_set (err, 0, "state.json of `%s` is corrupt", st->id);
  if (parse_fields (st, root, err) < 0)
    return -1;
  if (st->status == OCI_STATUS_NONE || st->bundle == NULL)
    return cm_err_set (err, 0, "state.json of `%s` is incomplete", st->id);
  return 0;
}

#define S(g, s) yajl_gen_string ((g), (const unsigned char *) (s), strlen (s))

static void
kv (yajl_gen g, const char *k, const char *v)
{
  S (g, k);
  S (g, v ? v : "");
}

char *
oci_state_gen (const struct oci_state *st, bool pretty, bool internal)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;
  char *out;

  yajl_gen_config (g, yajl_gen_beautify, pretty ? 1 : 0);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open (g);
  kv (g, "ociVersion", st->oci_version ? st->oci_version : "1.2.0");
  kv (g, "id", st->id);
  kv (g, "status", oci_status_name (st->status));
  S (g, "pid");
  yajl_gen_integer (g, st->status == OCI_STOPPED && !internal
                           ? 0 : st->pid);
  kv (g, "bundle", st->bundle);
  kv (g, "rootfs", st->rootfs);
  kv (g, "created", st->created);
  kv (g, "owner", st->owner);
  if (st->annotations_len)
    {
      S (g, "annotations");
      yajl_gen_map_open (g);
      for (size_t i = 0; i < st->annotations_len; i++)
        kv (g, st->annotations[i].key, st->annotations[i].value);
      yajl_gen_map_close (g);
    }
  if (internal)
    {
      S (g, "start_time");
      yajl_gen_integer (g, (long long) st->start_time);
      if (st->cgroup_path)
        kv (g, "cgroup_path", st->cgroup_path);
      if (st->stdio)
        kv (g, "stdio", st->stdio);
      S (g, "systemd");
      yajl_gen_bool (g, st->systemd_cgroup);
      if (st->supervisor_pid > 0)
        {
          S (g, "supervisor_pid");
          yajl_gen_integer (g, st->supervisor_pid);
          S (g, "supervisor_start_time");
          yajl_gen_integer (g, (long long) st->supervisor_start_time);
        }
    }
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  out = xmalloc (len + 1);
  memcpy (out, buf, len);
  out[len] = '\0';
  yajl_gen_free (g);
  return out;
}
