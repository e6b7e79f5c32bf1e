/* libFuzzer entry for the run.oci.sandlock.* annotations (runtime/
 * landlock.c) and for what else a config annotation reaches.  `make
 * fuzzers` builds it, `make fuzz` runs it (docs/architecture.md, Tests).
 * The first input byte picks the target (mod 3; '0'..'2' in the seeds):
 *
 *   0  rt_ll_parse_ports on the rest ("80,443,8000-8010").
 *   1  rt_ll_policy_build on a config made from the rest: lines of
 *      "<k><value>", where byte k picks the annotation (degrade, disable,
 *      fs_readable, fs_writable, fs_denied, net_allow_bind,
 *      net_allow_connect), a mounts[].destination (rw, ro), a
 *      linux.devices[].path, or a namespace type (k mod 11: 'B'..'L' in
 *      the seeds); the second input byte gives the Landlock ABI
 *      (0..7) and root.readonly.
 *   2  cm_json_write_str, which copies annotations into the seccomp listener's
 *      state message: valid UTF-8 (all the config parser lets through) must
 *      come back from a JSON parser unchanged.
 *
 * Invariants: a failure sets exactly one error, success none; a port list
 * is strictly ascending; every rule path is absolute and normalised (no
 * "//", "/./", "..", trailing "/"), unique, with rights the ruleset
 * handles; "/" is never masked; everything is freed (LSan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "common/util.h"
#include "runtime/config.h"
#include "runtime/landlock.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check (int r, struct cm_err **e)
{
  if ((r < 0) != (*e != NULL) || (*e && (*e)->msg == NULL))
    abort ();
  cm_err_free (e);
}

static void
check_ports (const uint16_t *p, size_t n)
{
  for (size_t i = 1; i < n; i++)
    if (p[i - 1] >= p[i])
      abort ();
}

static void
fuzz_ports (const char *s)
{
  struct cm_err *e = NULL;
  uint16_t *ports = NULL;
  size_t n = 0;
  int r = rt_ll_parse_ports ("fuzz", s, &ports, &n, &e);
  check (r, &e);
  if (r == 0)
    check_ports (ports, n);
  free (ports);
}

static bool
normalised (const char *p)
{
  size_t n = strlen (p);
  if (p[0] != '/' || strstr (p, "//") || strstr (p, "/./")
      || strstr (p, "/../") || (n > 1 && p[n - 1] == '/'))
    return false;
  return !(n >= 2 && strcmp (p + n - 2, "/.") == 0)
         && !(n >= 3 && strcmp (p + n - 3, "/..") == 0);
}

static void
check_policy (const struct rt_ll_policy *p)
{
  for (size_t i = 0; i < p->rules_len; i++)
    {
      const struct rt_ll_rule *r = &p->rules[i];
      if (!normalised (r->path) || r->access == 0
          || (r->access & ~p->handled_fs) != 0)
        abort ();
      for (size_t j = 0; j < i; j++)
        if (strcmp (p->rules[j].path, r->path) == 0)
          abort ();
    }
  for (size_t i = 0; i < p->masks_len; i++)
    if (!normalised (p->masks[i]) || strcmp (p->masks[i], "/") == 0)
      abort ();
  check_ports (p->bind_ports, p->bind_ports_len);
  check_ports (p->connect_ports, p->connect_ports_len);
}

static const char *const keys[] = {
  "run.oci.sandlock.degrade",        "run.oci.sandlock.disable",
  "run.oci.sandlock.fs_readable",    "run.oci.sandlock.fs_writable",
  "run.oci.sandlock.fs_denied",      "run.oci.sandlock.net_allow_bind",
  "run.oci.sandlock.net_allow_connect",
};

/* One "<k><value>" line into |c|. */
static void
add_line (struct rt_config *c, unsigned k, char *v)
{
  k %= ARRAY_SIZE (keys) + 4;
  if (k < ARRAY_SIZE (keys))
    {
      c->annotations = xrealloc (c->annotations, (c->annotations_len + 1)
                                                     * sizeof *c->annotations);
      c->annotations[c->annotations_len++]
          = (struct rt_kv) { xstrdup (keys[k]), xstrdup (v) };
    }
  else if (k == ARRAY_SIZE (keys) || k == ARRAY_SIZE (keys) + 1)
    {
      c->mounts = xrealloc (c->mounts, (c->mounts_len + 1) * sizeof *c->mounts);
      c->mounts[c->mounts_len] = (struct rt_mount) { .destination = xstrdup (v) };
      if (k == ARRAY_SIZE (keys) + 1)
        {
          c->mounts[c->mounts_len].options = xcalloc (2, sizeof (char *));
          c->mounts[c->mounts_len].options[0] = xstrdup ("ro");
          c->mounts[c->mounts_len].options_len = 1;
        }
      c->mounts_len++;
    }
  else if (k == ARRAY_SIZE (keys) + 2)
    {
      c->devices = xrealloc (c->devices, (c->devices_len + 1) * sizeof *c->devices);
      c->devices[c->devices_len++] = (struct rt_device) { .path = xstrdup (v) };
    }
  else
    {
      c->namespaces = xrealloc (c->namespaces, (c->namespaces_len + 1)
                                                   * sizeof *c->namespaces);
      c->namespaces[c->namespaces_len++]
          = (struct rt_namespace) { .type = xstrdup (v) };
    }
}

static void
fuzz_policy (const uint8_t *data, size_t size)
{
  struct rt_config *c = xcalloc (1, sizeof *c);
  struct rt_ll_policy pol = { 0 };
  struct cm_err *e = NULL;
  if (size < 1)
    {
      free (c);
      return;
    }
  int abi = data[0] & 7;
  c->root_readonly = (data[0] & 8) != 0;
  _cleanup_free_ char *text = strndup ((const char *) data + 1, size - 1);
  for (char *line = text, *next; line && *line; line = next)
    {
      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      add_line (c, (unsigned char) line[0], line + 1);
    }
  int r = rt_ll_policy_build (c, abi, &pol, &e);
  check (r, &e);
  if (r == 0)
    {
      check_policy (&pol);
      rt_ll_policy_clear (&pol);
    }
  rt_config_free (c);
}

/* Valid UTF-8 only: yajl_tree_parse (the config parser) refuses the rest,
 * and a generator with validation tells which is which. */
static bool
valid_utf8 (const char *s, size_t n)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  bool ok = yajl_gen_string (g, (const unsigned char *) s, n)
            == yajl_gen_status_ok;
  yajl_gen_free (g);
  return ok;
}

static void
fuzz_json_str (const char *s, size_t n)
{
  if (memchr (s, '\0', n) || !valid_utf8 (s, n))
    return;
  _cleanup_free_ char *z = strndup (s, n), *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    abort ();
  /* As in the listener state: an object of annotation key and value. */
  fputc ('{', f);
  cm_json_write_str (f, z);
  fputc (':', f);
  cm_json_write_str (f, z);
  fputc ('}', f);
  fclose (f);
  char ebuf[128];
  yajl_val v = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  if (v == NULL || !YAJL_IS_OBJECT (v) || YAJL_GET_OBJECT (v)->len != 1
      || strcmp (YAJL_GET_OBJECT (v)->keys[0], z) != 0)
    abort ();
  const char *val = YAJL_GET_STRING (YAJL_GET_OBJECT (v)->values[0]);
  if (val == NULL || strcmp (val, z) != 0)
    abort ();
  yajl_tree_free (v);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  switch (data[0] % 3)
    {
    case 0:
      {
        _cleanup_free_ char *z = strndup ((const char *) data + 1, size - 1);
        fuzz_ports (z);
        break;
      }
    case 1:
      fuzz_policy (data + 1, size - 1);
      break;
    default:
      fuzz_json_str ((const char *) data + 1, size - 1);
      break;
    }
  return 0;
}
