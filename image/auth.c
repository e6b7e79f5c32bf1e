/* Registry auth inputs: WWW-Authenticate challenges (RFC 7235) and the
 * credentials of a Docker-style auth file.  Credential helpers are never
 * run (that would be shelling out); we say so when one is configured. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>

#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

void
img_challenge_clear (struct img_challenge *c)
{
  free (c->scheme);
  free (c->realm);
  free (c->service);
  free (c->scope);
  memset (c, 0, sizeof *c);
}

static const char *
skip_ws (const char *p)
{
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* Parses `Scheme k=v, k="v"...`.  Returns 0, or -1 when malformed. */
int
img_challenge_parse (const char *h, struct img_challenge *out)
{
  const char *p = skip_ws (h), *s = p;
  memset (out, 0, sizeof *out);
  while (*p && *p != ' ' && *p != '\t')
    p++;
  if (p == s)
    return -1;
  out->scheme = strndup (s, p - s);
  for (char *q = out->scheme; *q; q++)
    *q = tolower ((unsigned char) *q);
  while (*(p = skip_ws (p)))
    {
      const char *k = p;
      size_t klen;
      char *val;
      size_t vn = 0;
      while (*p && *p != '=' && *p != ',' && *p != ' ')
        p++;
      klen = p - k;
      p = skip_ws (p);
      if (*p != '=')
        {
          if (*p == ',')
            {
              p++;
              continue;
            }
          if (*p)
            goto bad;
          break;
        }
      p = skip_ws (p + 1);
      val = xmalloc (strlen (p) + 1);
      if (*p == '"')
        {
          for (p++; *p && *p != '"'; p++)
            {
              if (*p == '\\' && p[1])
                p++;
              val[vn++] = *p;
            }
          if (*p != '"')
            {
              free (val);
              goto bad;
            }
          p++;
        }
      else
        while (*p && *p != ',' && *p != ' ' && *p != '\t')
          val[vn++] = *p++;
      val[vn] = '\0';
      if (klen == 5 && strncasecmp (k, "realm", 5) == 0 && !out->realm)
        out->realm = val;
      else if (klen == 7 && strncasecmp (k, "service", 7) == 0 && !out->service)
        out->service = val;
      else if (klen == 5 && strncasecmp (k, "scope", 5) == 0 && !out->scope)
        out->scope = val;
      else
        free (val);
      p = skip_ws (p);
      if (*p == ',')
        p++;
      else if (*p)
        goto bad;
    }
  return 0;
bad:
  img_challenge_clear (out);
  return -1;
}

int
img_base64_decode (const char *in, char **out, size_t *outlen)
{
  size_t n = strlen (in), pad = 0;
  unsigned char *buf;
  int r;
  if (n % 4 != 0)
    return -1;
  buf = xmalloc (n / 4 * 3 + 1);
  r = EVP_DecodeBlock (buf, (const unsigned char *) in, (int) n);
  if (r < 0)
    {
      free (buf);
      return -1;
    }
  if (n >= 1 && in[n - 1] == '=')
    pad++;
  if (n >= 2 && in[n - 2] == '=')
    pad++;
  r -= (int) pad;
  buf[r] = '\0';
  *out = (char *) buf;
  *outlen = (size_t) r;
  return 0;
}

char *
img_auth_default_path (void)
{
  const char *d = getenv ("DOCKER_CONFIG"), *home = getenv ("HOME");
  if (d && *d)
    return xasprintf ("%s/config.json", d);
  if (home && *home)
    return xasprintf ("%s/.docker/config.json", home);
  return NULL;
}

/* "https://index.docker.io/v1/" and "host:port" both name a registry. */
static bool
key_matches (const char *key, const char *registry)
{
  const char *k = key;
  size_t n;
  if (cm_startswith (k, "https://"))
    k += 8;
  else if (cm_startswith (k, "http://"))
    k += 7;
  n = strcspn (k, "/");
  if (strcmp (registry, "registry-1.docker.io") == 0
      && ((n == 15 && strncmp (k, "index.docker.io", 15) == 0)
          || (n == 9 && strncmp (k, "docker.io", 9) == 0)))
    return true;
  return strlen (registry) == n && strncmp (k, registry, n) == 0;
}

int
img_auth_lookup (const char *authfile, const char *registry, char **userpass,
                 char **note, struct cm_err **err)
{
  _cleanup_free_ char *path = authfile ? xstrdup (authfile) : img_auth_default_path ();
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  yajl_val v = NULL, auths, helpers;
  const char *store;
  int found = 0;

  *userpass = NULL;
  *note = NULL;
  if (path == NULL)
    return 0;
  if (cm_read_file_at (AT_FDCWD, path, IMG_MAX_MANIFEST, &buf, &len, err) < 0)
    {
      if ((*err)->errno_ == ENOENT && authfile == NULL)
        {
          cm_err_free (err);
          return 0;
        }
      return cm_err_wrap (err, "auth file");
    }
  if ((v = cm_json_parse (buf, len, IMG_MAX_MANIFEST, path, err)) == NULL)
    return -1;
  auths = cm_json_get (v, "auths");
  for (size_t i = 0; auths && YAJL_IS_OBJECT (auths) && i < auths->u.object.len; i++)
    {
      const char *a;
      char *dec = NULL;
      size_t dlen;
      if (!key_matches (auths->u.object.keys[i], registry))
        continue;
      a = cm_json_str (auths->u.object.values[i], "auth");
      if (a == NULL || *a == '\0')
        continue;
      if (img_base64_decode (a, &dec, &dlen) < 0 || strchr (dec, ':') == NULL
          || strlen (dec) != dlen)
        {
          /* The message names the key, which lives in the tree: build it
           * before the tree goes. */
          cm_err_set (err, 0, "auth file %s: auths.\"%s\".auth for registry %s: "
                      "not base64 of user:password", path, auths->u.object.keys[i],
                      registry);
          free (dec);
          yajl_tree_free (v);
          return -1;
        }
      *userpass = dec;
      found = 1;
      break;
    }
  helpers = cm_json_get (v, "credHelpers");
  store = cm_json_str (v, "credsStore");
  if (!found)
    {
      const char *helper = NULL;
      for (size_t i = 0; helpers && YAJL_IS_OBJECT (helpers) && i < helpers->u.object.len; i++)
        if (key_matches (helpers->u.object.keys[i], registry)
            && YAJL_IS_STRING (helpers->u.object.values[i]))
          helper = YAJL_GET_STRING (helpers->u.object.values[i]);
      if (helper == NULL)
        helper = store;
      if (helper)
        *note = xasprintf ("credential helper `docker-credential-%s` configured in %s "
                           "is not run; use --creds or an `auths` entry", helper, path);
    }
  yajl_tree_free (v);
  return found;
}
