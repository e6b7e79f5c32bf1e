#include <stdbool.h>
#include <string.h>

#include "common/json_read.h"
#include "common/util.h"

int
cm_json_prescan (const char *buf, size_t len, const char *name, struct cm_err **err)
{
  bool in_str = false;
  unsigned depth = 0;

  if (memchr (buf, '\0', len) != NULL)
    return cm_err_set (err, 0, "%s: invalid JSON: NUL byte in input", name);
  for (size_t i = 0; i < len; i++)
    {
      char ch = buf[i];
      if (in_str)
        {
          if (ch == '"')
            in_str = false;
          else if (ch == '\\' && i + 1 < len)
            {
              if (buf[i + 1] == 'u' && i + 5 < len
                  && memcmp (buf + i + 2, "0000", 4) == 0)
                return cm_err_set (err, 0, "%s: invalid JSON: \\u0000 in a "
                                   "string is not supported", name);
              i++;
            }
        }
      else if (ch == '"')
        in_str = true;
      else if (ch == '/' && i + 1 < len && buf[i + 1] == '*')
        {
          /* yajl_tree_parse allows comments; a quote inside one must not
           * hide the brackets after it from the depth count. */
          const char *e = memmem (buf + i + 2, len - i - 2, "*/", 2);
          i = e ? (size_t) (e - buf) + 1 : len;
        }
      else if (ch == '/' && i + 1 < len && buf[i + 1] == '/')
        {
          const char *e = memchr (buf + i, '\n', len - i);
          i = e ? (size_t) (e - buf) : len;
        }
      else if (ch == '[' || ch == '{')
        {
          if (++depth > CM_JSON_MAX_DEPTH)
            return cm_err_set (err, 0, "%s: invalid JSON: nested deeper "
                               "than %d levels", name, CM_JSON_MAX_DEPTH);
        }
      else if ((ch == ']' || ch == '}') && depth > 0)
        depth--;
    }
  return 0;
}

yajl_val
cm_json_parse (const char *buf, size_t len, size_t max, const char *what,
               struct cm_err **err)
{
  _cleanup_free_ char *copy = NULL;
  char ebuf[256] = "";
  yajl_val tree;

  if (len > max)
    {
      cm_err_set (err, 0, "%s: too large (%zu bytes, limit %zu)", what, len,
                  max);
      return NULL;
    }
  if (cm_json_prescan (buf, len, what, err) < 0)
    return NULL;
  copy = xmalloc (len + 1);
  memcpy (copy, buf, len);
  copy[len] = '\0';
  tree = yajl_tree_parse (copy, ebuf, sizeof ebuf);
  if (tree == NULL)
    {
      /* yajl's message is "parse error: ...\n<context>\n(right here)";
       * its first line is the message. */
      ebuf[strcspn (ebuf, "\n")] = '\0';
      cm_err_set (err, 0, "%s: invalid JSON: %s", what,
                  ebuf[0] ? ebuf : "parse error");
      return NULL;
    }
  if (tree->type != yajl_t_object)
    {
      yajl_tree_free (tree);
      cm_err_set (err, 0, "%s: expected object", what);
      return NULL;
    }
  return tree;
}

yajl_val
cm_json_get (yajl_val o, const char *key)
{
  yajl_val v = NULL;
  if (o == NULL || !YAJL_IS_OBJECT (o))
    return NULL;
  for (size_t i = 0; i < o->u.object.len; i++)
    if (strcmp (o->u.object.keys[i], key) == 0)
      v = o->u.object.values[i];
  return v != NULL && YAJL_IS_NULL (v) ? NULL : v;
}

const char *
cm_json_str (yajl_val o, const char *key)
{
  yajl_val v = cm_json_get (o, key);
  return v && YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
}

char **
cm_json_strv (yajl_val o, const char *key)
{
  yajl_val v = cm_json_get (o, key);
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
