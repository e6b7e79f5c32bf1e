/* The one JSON reader (common/json_read.c) and what image/ gains from it:
 * the depth and \u0000 guards config.json had, and Go's last-wins rule for
 * duplicate keys, so an image config means to us what it means to the
 * engines that also read it. */
#include <string.h>

#include "common/json_read.h"
#include "common/util.h"
#include "image/priv.h"
#include "tests/unit/tap.h"

static bool
refused (const char *buf, size_t len, const char *want)
{
  struct cm_err *e = NULL;
  yajl_val v = cm_json_parse (buf, len, 1 << 20, "doc", &e);
  bool r = v == NULL && e && strstr (e->msg, want);
  if (!r)
    printf ("#   got %s\n", e ? e->msg : "a tree");
  if (v)
    yajl_tree_free (v);
  cm_err_free (&e);
  return r;
}

int
main (void)
{
  struct cm_err *e = NULL;
  struct img_config_doc *cd = NULL;
  _cleanup_free_ char *deep = xmalloc (2 * 300 + 32);
  yajl_val v;
  size_t n = 0;

  ok (refused ("[]", 2, "doc: expected object"), "a non-object root");
  ok (refused ("{\"a\":", 5, "doc: invalid JSON: "), "truncated");
  v = cm_json_parse ("{\"a\":1}", 7, 7, "doc", &e);
  ok (v != NULL, "at the cap %s", e ? e->msg : "");
  if (v)
    yajl_tree_free (v);
  cm_err_free (&e);
  {
    struct cm_err *e2 = NULL;
    ok (cm_json_parse ("{\"a\":1}", 7, 3, "doc", &e2) == NULL && e2
        && strstr (e2->msg, "too large (7 bytes, limit 3)"), "over the cap");
    cm_err_free (&e2);
  }
  ok (refused ("{\"a\":\"x\\u0000y\"}", 16, "\\u0000 in a string"),
      "\\u0000 in a string");
  ok (refused ("{\"a\":1}\0", 8, "NUL byte"), "a NUL byte");

  v = cm_json_parse ("{\"k\":\"first\",\"k\":\"last\",\"n\":null}", 33, 1 << 20,
                     "doc", &e);
  ok (v && strcmp (cm_json_str (v, "k"), "last") == 0,
      "a duplicate key: the last wins");
  ok (v && cm_json_get (v, "n") == NULL, "null reads as absent");
  if (v)
    yajl_tree_free (v);
  cm_err_free (&e);

  /* image/: a config nested 300 deep is refused before yajl builds it. */
  n = (size_t) sprintf (deep, "{\"config\":");
  for (int i = 0; i < 300; i++)
    deep[n++] = '[';
  for (int i = 0; i < 300; i++)
    deep[n++] = ']';
  deep[n++] = '}';
  ok (img_config_parse (deep, n, &cd, &e) < 0 && e
      && strstr (e->msg, "nested deeper than 128"),
      "image config: nesting refused: %s", e ? e->msg : "accepted");
  cm_err_free (&e);
  img_config_doc_free (cd);
  cd = NULL;
  {
    static const char dup[] = "{\"architecture\":\"s390x\",\"os\":\"linux\","
                               "\"architecture\":\"amd64\","
                               "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}";
    ok (img_config_parse (dup, sizeof dup - 1, &cd, &e) == 0 && cd->arch
        && strcmp (cd->arch, "amd64") == 0,
        "image config: a duplicate architecture reads as the last one (%s) %s",
        cd && cd->arch ? cd->arch : "?", e ? e->msg : "");
    cm_err_free (&e);
    img_config_doc_free (cd);
  }
  return tap_done ();
}
