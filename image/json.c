/* yajl tree parsing with a size cap, and the few accessors image/ needs. */
#include <string.h>

#include "common/util.h"
#include "image/priv.h"

int
img_json_parse (const char *buf, size_t len, const char *what, yajl_val *out,
                struct rt_err **err)
{
  char ebuf[256] = "";
  _cleanup_free_ char *z = NULL;
  yajl_val v;

  if (len > IMG_MAX_MANIFEST)
    return rt_err_set (err, 0, "%s: document of %zu bytes exceeds %u", what,
                       len, IMG_MAX_MANIFEST);
  z = xmalloc (len + 1);
  memcpy (z, buf, len);
  z[len] = '\0';
  v = yajl_tree_parse (z, ebuf, sizeof ebuf);
  if (v == NULL)
    {
      char *nl = strchr (ebuf, '\n');
      if (nl)
        *nl = '\0';
      return rt_err_set (err, 0, "%s: invalid JSON: %s", what, ebuf);
    }
  if (!YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      return rt_err_set (err, 0, "%s: expected a JSON object", what);
    }
  *out = v;
  return 0;
}

yajl_val
img_json_get (yajl_val o, const char *key)
{
  if (o == NULL || !YAJL_IS_OBJECT (o))
    return NULL;
  for (size_t i = 0; i < o->u.object.len; i++)
    if (strcmp (o->u.object.keys[i], key) == 0)
      return o->u.object.values[i];
  return NULL;
}

const char *
img_json_str (yajl_val o, const char *key)
{
  yajl_val v = img_json_get (o, key);
  return v && YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
}

char **
img_json_strv (yajl_val o, const char *key)
{
  yajl_val v = img_json_get (o, key);
  char **r;
  size_t n = 0;
  if (v == NULL || !YAJL_IS_ARRAY (v))
    return NULL;
  r = xcalloc (v->u.array.len + 1, sizeof *r);
  for (size_t i = 0; i < v->u.array.len; i++)
    if (YAJL_IS_STRING (v->u.array.values[i]))
      r[n++] = xstrdup (YAJL_GET_STRING (v->u.array.values[i]));
  return r;
}
