/* The virtual root's mount table: root.path and config.json's mounts as
 * pinned O_PATH fds (runtime/vroot.h).  Built once, before the container
 * process exists; the supervisor only reads it afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "config.h"
#include "vroot.h"

static void
set_list (struct vroot *v, char *const *in, size_t n, char ***out,
          size_t *nout)
{
  static const struct vr_ctx none = { 0 };
  struct vr_path p;
  *out = xcalloc (n + 1, sizeof **out);
  *nout = 0;
  for (size_t i = 0; i < n; i++)
    if (in[i] && in[i][0] == '/'
        && vr_resolve (v, &none, "/", in[i], VR_NOFOLLOW, &p) == 0)
      (*out)[(*nout)++] = xstrdup (p.vpath);
}

void
vr_set_paths (struct vroot *v, char *const *masked, size_t nmasked,
              char *const *readonly, size_t nreadonly)
{
  char **m, **r;
  size_t nm, nr;
  /* Resolved before any is set: a masked path must not hide another's
   * resolution. */
  set_list (v, masked, nmasked, &m, &nm);
  set_list (v, readonly, nreadonly, &r, &nr);
  cm_strv_free (v->masked);
  cm_strv_free (v->readonly);
  v->masked = m, v->nmasked = nm;
  v->readonly = r, v->nreadonly = nr;
}

void
vr_free (struct vroot *v)
{
  for (size_t i = 0; i < v->n; i++)
    {
      if (v->e[i].fd >= 0)
        close (v->e[i].fd);
      free (v->e[i].dest);
      free (v->e[i].host);
    }
  free (v->e);
  cm_strv_free (v->masked);
  cm_strv_free (v->readonly);
  memset (v, 0, sizeof *v);
}

int
vr_host_to_virtual (const struct vroot *v, const char *host,
                    char out[PATH_MAX])
{
  const struct vr_entry *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < v->n; i++)
    {
      const struct vr_entry *e = &v->e[i];
      size_t l = strlen (e->host);
      bool under = strcmp (e->host, "/") == 0 ? host[0] == '/'
                   : strncmp (host, e->host, l) == 0
                     && (host[l] == '\0' || (host[l] == '/' && e->dir));
      if (under && (best == NULL || l >= best_len))
        best = e, best_len = l;
    }
  if (best == NULL)
    return -ENOENT;
  const char *rest = host + (strcmp (best->host, "/") == 0 ? 0 : best_len);
  while (*rest == '/')
    rest++;
  if (snprintf (out, PATH_MAX, "%s%s%s", best->dest,
                *rest && best->dest_len > 1 ? "/" : "", rest) >= PATH_MAX)
    return -ENAMETOOLONG;
  return 0;
}

static int
pin (struct vr_entry *e, const char *host, const char *what,
     struct cm_err **err)
{
  struct stat st;
  e->fd = open (host, O_PATH | O_CLOEXEC);
  if (e->fd < 0)
    return cm_err_set (err, errno, "%s: open `%s`", what, host);
  if (fstat (e->fd, &st) < 0)
    return cm_err_set (err, errno, "%s: stat `%s`", what, host);
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode) && !S_ISCHR (st.st_mode))
    return cm_err_set (err, 0, "%s: `%s` is neither a directory, a file nor "
                       "a character device", what, host);
  e->dir = S_ISDIR (st.st_mode);
  e->host = realpath (host, NULL);
  if (e->host == NULL)
    return cm_err_set (err, errno, "%s: resolve `%s`", what, host);
  return 0;
}

/* Creates the missing components of |dest| inside the view (directories,
 * and the last one as an empty file when |file|), each from the pinned fd
 * of the directory that holds it. */
int
vr_make_point (const struct vroot *v, const char *dest, bool file)
{
  static const struct vr_ctx none = { 0 };
  char prefix[PATH_MAX], name[NAME_MAX + 1];
  const char *p = dest;
  struct vr_path r;
  int rc;

  while (*p)
    {
      const char *end = strchrnul (p + 1, '/');
      bool last = *end == '\0' || strspn (end, "/") == strlen (end);
      snprintf (prefix, sizeof prefix, "%.*s", (int) (end - dest), dest);
      p = end;
      if ((rc = vr_resolve (v, &none, "/", prefix, VR_CREATE, &r)) < 0)
        return rc;
      if (!r.missing)
        continue;
      _cleanup_fd_ int dfd = vr_open_parent (v, &r, name);
      if (dfd < 0)
        return dfd;
      if (last && file)
        {
          int fd = openat (dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW
                           | O_CLOEXEC, 0644);
          if (fd < 0 && errno != EEXIST)
            return -errno;
          if (fd >= 0)
            close (fd);
        }
      else if (mkdirat (dfd, name, 0755) < 0 && errno != EEXIST)
        return -errno;
      if (last)
        break;
    }
  return 0;
}

static int
add_mount (struct vroot *v, const struct vr_mount_spec *m, size_t i,
           struct cm_err **err)
{
  static const struct vr_ctx none = { 0 };
  _cleanup_free_ char *what = xasprintf ("mounts[%zu]", i);
  struct vr_entry *e = &v->e[v->n];
  struct vr_path r;
  int rc;

  if (m->dest == NULL || m->dest[0] != '/')
    return cm_err_set (err, 0, "%s.destination: must be an absolute path", what);
  e->fd = -1;
  e->kind = m->kind;
  e->ro = m->ro;
  e->noexec = m->noexec;
  if (pin (e, m->source, what, err) < 0)
    goto fail;
  if ((rc = vr_make_point (v, m->dest, !e->dir)) < 0
      || (rc = vr_resolve (v, &none, "/", m->dest, 0, &r)) < 0)
    {
      cm_err_set (err, -rc, "%s.destination: `%s` in the rootfs", what, m->dest);
      goto fail;
    }
  if ((r.type == S_IFDIR) != e->dir)
    {
      cm_err_set (err, 0, "%s.destination: `%s` is a %s in the rootfs, the "
                  "source a %s", what, m->dest, r.type == S_IFDIR
                  ? "directory" : "file", e->dir ? "directory" : "file");
      goto fail;
    }
  e->dest = xstrdup (r.vpath);
  e->dest_len = strlen (e->dest);
  v->n++;
  return 0;
fail:
  if (e->fd >= 0)
    close (e->fd);
  free (e->host);
  memset (e, 0, sizeof *e);
  return -1;
}

int
vr_build (struct vroot *v, const char *rootfs, bool root_ro,
          const struct vr_mount_spec *m, size_t n, struct cm_err **err)
{
  struct vr_entry *root;
  memset (v, 0, sizeof *v);
  v->e = xcalloc (n + 1, sizeof *v->e);
  root = &v->e[0];
  root->kind = VR_ROOT;
  root->ro = root_ro;
  root->fd = -1;
  if (pin (root, rootfs, "root.path", err) < 0)
    goto fail;
  if (!root->dir)
    {
      cm_err_set (err, ENOTDIR, "root.path: `%s`", rootfs);
      goto fail;
    }
  root->dest = xstrdup ("/");
  root->dest_len = 1;
  v->n = 1;
  for (size_t i = 0; i < n; i++)
    if (add_mount (v, &m[i], i, err) < 0)
      goto fail;
  return 0;
fail:
  if (v->n == 0)
    {
      if (root->fd >= 0)
        close (root->fd);
      free (root->host);
      root->fd = -1;
      root->host = NULL;
    }
  vr_free (v);
  return -1;
}

bool
vr_host_node (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 && (S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode));
}
