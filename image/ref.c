/* Image references in skopeo's transport syntax (containers-transports(5)).
 * The transport prefix is required; a tag together with a digest is
 * refused rather than silently preferring one of them. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common/util.h"
#include "image/image.h"

#define DOCKER_HUB "registry-1.docker.io"

#define TRANSPORTS "docker://, oci:, oci-archive:, docker-daemon:"

/* A reference without one of our transports: an unknown transport
 * (`http://...`, or one of skopeo's we do not implement) is named as
 * such; anything else lacks a transport. */
static int
transport_error (const char *s, struct cm_err **err)
{
  static const char *const skopeo[] = {
    "docker-archive", "containers-storage", "dir", "ostree", "sif", "tarball",
  };
  size_t n = strspn (s, "abcdefghijklmnopqrstuvwxyz0123456789-+.");
  if (n > 0 && strncmp (s + n, "://", 3) == 0)
    return cm_err_set (err, 0, "%s: unknown transport `%.*s://` (supported: " TRANSPORTS ")",
                       s, (int) n, s);
  for (size_t i = 0; s[n] == ':' && i < sizeof skopeo / sizeof skopeo[0]; i++)
    if (strlen (skopeo[i]) == n && strncmp (s, skopeo[i], n) == 0)
      return cm_err_set (err, 0, "%s: transport `%s:` is not supported (supported: "
                         TRANSPORTS ")", s, skopeo[i]);
  return cm_err_set (err, 0, "%s: missing transport (" TRANSPORTS "; e.g. docker://%s)", s, s);
}

bool
img_digest_valid (const char *d)
{
  if (d == NULL || strncmp (d, "sha256:", 7) != 0 || strlen (d) != 71)
    return false;
  for (const char *p = d + 7; *p; p++)
    if (!isdigit ((unsigned char) *p) && !(*p >= 'a' && *p <= 'f'))
      return false;
  return true;
}

void
img_ref_free (struct img_ref *r)
{
  if (r == NULL)
    return;
  free (r->registry);
  free (r->repository);
  free (r->tag);
  free (r->digest);
  free (r->path);
  free (r);
}

static bool
tag_valid (const char *t)
{
  size_t n = strlen (t);
  if (n == 0 || n > 128 || !(isalnum ((unsigned char) t[0]) || t[0] == '_'))
    return false;
  for (; *t; t++)
    if (!isalnum ((unsigned char) *t) && *t != '_' && *t != '.' && *t != '-')
      return false;
  return true;
}

/* Path components: [a-z0-9]+ joined by ".", "_", "__" or "-"s. */
static bool
repo_valid (const char *s)
{
  bool need_alnum = true;
  char prev = '\0';
  if (*s == '\0' || strlen (s) > 255)
    return false;
  for (; *s; prev = *s++)
    {
      if (islower ((unsigned char) *s) || isdigit ((unsigned char) *s))
        need_alnum = false;
      else if (*s == '.' || *s == '_' || *s == '-' || *s == '/')
        {
          /* "__" and runs of "-" are separators too; anything else after a
           * separator (or at the start) is not. */
          if (need_alnum && !(prev && *s == '_' && prev == '_')
              && !(prev && *s == '-' && prev == '-'))
            return false;
          need_alnum = true;
        }
      else
        return false;
    }
  return !need_alnum;
}

static bool
host_valid (const char *h)
{
  if (*h == '\0')
    return false;
  if (*h == '[')                /* [v6]:port */
    return strchr (h, ']') != NULL;
  for (; *h && *h != ':'; h++)
    if (!isalnum ((unsigned char) *h) && *h != '.' && *h != '-')
      return false;
  if (*h == ':')
    return h[1] && strspn (h + 1, "0123456789") == strlen (h + 1);
  return true;
}

/* name[:tag][@digest] with an optional registry host first. */
static int
parse_docker_name (const char *text, const char *s, struct img_ref *r,
                   struct cm_err **err)
{
  _cleanup_free_ char *name = xstrdup (s);
  char *at = strchr (name, '@'), *slash, *colon;

  if (at)
    {
      *at = '\0';
      if (!img_digest_valid (at + 1))
        return cm_err_set (err, 0, "%s: invalid digest `%s` (want sha256:<64 hex>)",
                           text, at + 1);
      r->digest = xstrdup (at + 1);
    }
  slash = strchr (name, '/');
  if (slash && (memchr (name, '.', slash - name) || memchr (name, ':', slash - name)
                || (slash - name == 9 && strncmp (name, "localhost", 9) == 0)))
    {
      *slash = '\0';
      if (!host_valid (name))
        return cm_err_set (err, 0, "%s: invalid registry host `%s`", text, name);
      r->registry = xstrdup (strcmp (name, "docker.io") == 0
                             || strcmp (name, "index.docker.io") == 0
                             ? DOCKER_HUB : name);
      memmove (name, slash + 1, strlen (slash + 1) + 1);
    }
  else
    r->registry = xstrdup (DOCKER_HUB);

  slash = strrchr (name, '/');
  colon = strrchr (name, ':');
  if (colon && (slash == NULL || colon > slash))
    {
      *colon = '\0';
      if (!tag_valid (colon + 1))
        return cm_err_set (err, 0, "%s: invalid tag `%s`", text, colon + 1);
      if (r->digest)
        return cm_err_set (err, 0, "%s: a reference may name a tag or a digest, not both",
                           text);
      r->tag = xstrdup (colon + 1);
    }
  if (!repo_valid (name))
    return cm_err_set (err, 0, "%s: invalid repository name `%s`", text, name);
  if (strcmp (r->registry, DOCKER_HUB) == 0 && strchr (name, '/') == NULL)
    r->repository = xasprintf ("library/%s", name);
  else
    r->repository = xstrdup (name);
  if (r->tag == NULL && r->digest == NULL)
    r->tag = xstrdup ("latest");
  return 0;
}

/* DIR[:tag]: the tag is after the last colon when no '/' follows it. */
static int
parse_path_tag (const char *text, const char *s, struct img_ref *r,
                struct cm_err **err)
{
  const char *colon = strrchr (s, ':');
  if (colon && strchr (colon, '/') == NULL)
    {
      if (!tag_valid (colon + 1))
        return cm_err_set (err, 0, "%s: invalid tag `%s`", text, colon + 1);
      r->path = strndup (s, colon - s);
      r->tag = xstrdup (colon + 1);
    }
  else
    r->path = xstrdup (s);
  if (r->path == NULL || r->path[0] == '\0')
    return cm_err_set (err, 0, "%s: missing path", text);
  return 0;
}

int
img_ref_parse (const char *s, struct img_ref **out, struct cm_err **err)
{
  struct img_ref *r = xcalloc (1, sizeof *r);
  int ret;

  if (cm_startswith (s, "docker://"))
    {
      r->transport = IMG_DOCKER;
      ret = parse_docker_name (s, s + 9, r, err);
    }
  else if (cm_startswith (s, "oci:"))
    {
      r->transport = IMG_OCI;
      ret = parse_path_tag (s, s + 4, r, err);
    }
  else if (cm_startswith (s, "oci-archive:"))
    {
      r->transport = IMG_OCI_ARCHIVE;
      ret = parse_path_tag (s, s + 12, r, err);
    }
  else if (cm_startswith (s, "docker-daemon:"))
    {
      r->transport = IMG_DOCKER_DAEMON;
      ret = parse_docker_name (s, s + 14, r, err);
      if (ret == 0 && r->digest)
        ret = cm_err_set (err, 0, "%s: docker-daemon: takes name:tag, not a digest", s);
      if (ret == 0)
        r->path = xstrdup (s + 14);
    }
  else
    ret = transport_error (s, err);
  if (ret < 0)
    {
      img_ref_free (r);
      return ret;
    }
  *out = r;
  return 0;
}

char *
img_ref_format (const struct img_ref *r)
{
  const char *sep = r->digest ? "@" : ":";
  const char *what = r->digest ? r->digest : r->tag;
  switch (r->transport)
    {
    case IMG_DOCKER:
      return xasprintf ("docker://%s/%s%s%s", r->registry, r->repository,
                        what ? sep : "", what ? what : "");
    case IMG_OCI:
    case IMG_OCI_ARCHIVE:
      return xasprintf ("%s:%s%s%s", r->transport == IMG_OCI ? "oci" : "oci-archive",
                        r->path, r->tag ? ":" : "", r->tag ? r->tag : "");
    case IMG_DOCKER_DAEMON:
      return xasprintf ("docker-daemon:%s", r->path);
    default:
      return xstrdup ("?");
    }
}
