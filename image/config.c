/* The image config resolved for running: argv from Entrypoint + Cmd, Env,
 * WorkingDir, User looked up in the image's own /etc/passwd and /etc/group
 * (read through openat2 RESOLVE_IN_ROOT: the image's symlinks cannot point
 * the lookup at the host), labels and exposed ports as annotations. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/openat2.h"
#include "common/util.h"
#include "image/priv.h"

void
img_config_free (struct img_config *c)
{
  if (c == NULL)
    return;
  cm_strv_free (c->args);
  cm_strv_free (c->env);
  free (c->cwd);
  free (c->gids);
  for (size_t i = 0; i < c->annot_len; i++)
    {
      free (c->annot_keys[i]);
      free (c->annot_values[i]);
    }
  free (c->annot_keys);
  free (c->annot_values);
  free (c);
}

static char *
read_in_root (const char *rootfs, const char *path)
{
  _cleanup_fd_ int root = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int fd = -1;
  char *buf = NULL;
  size_t len;
  struct cm_err *e = NULL;
  if (root < 0)
    return NULL;
  fd = cm_openat2 (root, path, O_RDONLY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return NULL;
  if (cm_read_file_at (fd, "", 1u << 20, &buf, &len, &e) < 0)
    {
      cm_err_free (&e);
      char p[64];
      snprintf (p, sizeof p, "/proc/self/fd/%d", fd);
      if (cm_read_file_at (AT_FDCWD, p, 1u << 20, &buf, &len, &e) < 0)
        {
          cm_err_free (&e);
          return NULL;
        }
    }
  return buf;
}

static bool
parse_u32 (const char *s, uint32_t *out)
{
  char *end;
  unsigned long v;
  if (*s == '\0')
    return false;
  errno = 0;
  v = strtoul (s, &end, 10);
  if (errno || *end || v > UINT32_MAX)
    return false;
  *out = (uint32_t) v;
  return true;
}

/* Finds field 0 == |name| (or field 2 == the number) in a colon file;
 * returns fields 2 and 3 (uid/gid, or gid). */
static bool
lookup (const char *file, const char *name, uint32_t *id, uint32_t *gid)
{
  char *save = NULL;
  _cleanup_free_ char *copy = file ? xstrdup (file) : NULL;
  if (copy == NULL)
    return false;
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[5] = { 0 };
      int n = 0;
      for (char *p = line; n < 5; n++)
        {
          f[n] = p;
          p = strchr (p, ':');
          if (p == NULL)
            {
              n++;
              break;
            }
          *p++ = '\0';
        }
      if (n < 3 || strcmp (f[0], name) != 0)
        continue;
      if (!parse_u32 (f[2], id))
        return false;
      if (gid && !(n >= 4 && parse_u32 (f[3], gid)))
        return false;
      return true;
    }
  return false;
}

/* Supplementary groups: every group of /etc/group listing |user|. */
static void
groups_of (const char *file, const char *user, struct img_config *c)
{
  char *save = NULL;
  _cleanup_free_ char *copy = file ? xstrdup (file) : NULL;
  if (copy == NULL || user == NULL)
    return;
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[4] = { 0 }, *p = line, *s2 = NULL;
      uint32_t g;
      for (int n = 0; n < 4 && p; n++)
        {
          f[n] = p;
          p = strchr (p, ':');
          if (p)
            *p++ = '\0';
        }
      if (f[3] == NULL || !parse_u32 (f[2], &g))
        continue;
      for (char *m = strtok_r (f[3], ",", &s2); m; m = strtok_r (NULL, ",", &s2))
        if (strcmp (m, user) == 0)
          {
            c->gids = xrealloc (c->gids, (c->gids_len + 1) * sizeof *c->gids);
            c->gids[c->gids_len++] = g;
          }
    }
}

static int
resolve_user (const char *rootfs, const char *user, struct img_config *c,
              struct cm_err **err)
{
  _cleanup_free_ char *u = xstrdup (user ? user : "");
  _cleanup_free_ char *passwd = read_in_root (rootfs, "/etc/passwd");
  _cleanup_free_ char *group = read_in_root (rootfs, "/etc/group");
  char *grp = strchr (u, ':');
  const char *name = NULL;

  c->uid = c->gid = 0;
  if (grp)
    *grp++ = '\0';
  if (*u)
    {
      if (!parse_u32 (u, &c->uid))
        {
          if (!lookup (passwd, u, &c->uid, &c->gid))
            return cm_err_set (err, 0, "image config User `%s`: no such user in the "
                               "image's /etc/passwd", user);
          name = u;
        }
      else if (!lookup (passwd, u, &c->uid, &c->gid))
        c->gid = c->uid == 0 ? 0 : c->uid;
    }
  if (grp && *grp && !parse_u32 (grp, &c->gid) && !lookup (group, grp, &c->gid, NULL))
    return cm_err_set (err, 0, "image config User `%s`: no such group in the image's "
                       "/etc/group", user);
  if (name)
    groups_of (group, name, c);
  return 0;
}

static void
annot (struct img_config *c, const char *k, const char *v)
{
  c->annot_keys = xrealloc (c->annot_keys, (c->annot_len + 1) * sizeof (char *));
  c->annot_values = xrealloc (c->annot_values, (c->annot_len + 1) * sizeof (char *));
  c->annot_keys[c->annot_len] = xstrdup (k);
  c->annot_values[c->annot_len++] = xstrdup (v);
}

int
img_config_resolve (const struct img_opts *o, const struct img_image *im,
                    char *const *cmd, struct img_config **out, struct cm_err **err)
{
  _cleanup_free_ char *raw = NULL;
  size_t len, na = 0;
  struct img_config_doc *d = NULL;
  struct img_config *c;
  char *const *tail;

  if (img_config_raw (o, im, &raw, &len, err) < 0 || img_config_parse (raw, len, &d, err) < 0)
    return -1;
  c = xcalloc (1, sizeof *c);
  tail = cmd && cmd[0] ? cmd : d->cmd;
  c->args = xcalloc (cm_strv_len (d->entrypoint) + cm_strv_len (tail) + 2, sizeof (char *));
  for (size_t i = 0; d->entrypoint && d->entrypoint[i]; i++)
    c->args[na++] = xstrdup (d->entrypoint[i]);
  for (size_t i = 0; tail && tail[i]; i++)
    c->args[na++] = xstrdup (tail[i]);
  if (na == 0)
    c->args[na++] = xstrdup ("sh");
  if (d->env && d->env[0])
    c->env = cm_steal_ptr (&d->env);
  else
    {
      c->env = xcalloc (2, sizeof (char *));
      c->env[0] = xstrdup ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    }
  c->cwd = xstrdup (d->workdir && *d->workdir ? d->workdir : "/");
  if (resolve_user (im->rootfs, d->user, c, err) < 0)
    {
      img_config_free (c);
      img_config_doc_free (d);
      return -1;
    }
  for (size_t i = 0; i < d->labels_len; i++)
    annot (c, d->label_keys[i], d->label_values[i]);
  if (d->ports && d->ports[0])
    {
      _cleanup_free_ char *joined = xstrdup ("");
      for (size_t i = 0; d->ports[i]; i++)
        {
          char *n = xasprintf ("%s%s%s", joined, i ? "," : "", d->ports[i]);
          free (joined);
          joined = n;
        }
      annot (c, "org.opencontainers.image.exposedPorts", joined);
    }
  annot (c, "org.opencontainers.image.ref.name", im->ref);
  annot (c, "org.opencontainers.image.manifest.digest", im->manifest_digest);
  img_config_doc_free (d);
  *out = c;
  return 0;
}
