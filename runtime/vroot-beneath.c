/* openat2's RESOLVE_BENEATH and RESOLVE_IN_ROOT in the view.  A program in
 * the container that jails a lookup with them (a file server under /srv,
 * a runtime of its own) relies on the kernel keeping it under its dirfd;
 * taken as "the view is the root", `../etc/passwd`, `/etc/passwd` or a
 * symlink to it reached the container's root from a jail at /srv.
 *
 * The lookup here is the view's walk from the dirfd's virtual path: `..`
 * is lexical in the view, so it is clamped at the jail's root (IN_ROOT) or
 * refused (BENEATH, EXDEV) before the walk, as is an absolute path under
 * BENEATH (IN_ROOT makes it relative to the jail).  Symlinks are spliced
 * by the walk as everywhere in the view; where one leads out of the jail
 * — which IN_ROOT would resolve inside it instead — the answer is EXDEV,
 * as it is for the /proc magic links.  So an answer is never outside the
 * jail; a symlink with an absolute target fails under IN_ROOT where the
 * kernel would follow it inside. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>

#include "vroot-sup.h"

/* |path| made relative to the jail, `.` and `..` removed (`..` above the
 * jail: clamped or EXDEV), a trailing slash kept. */
static int
clamp (const char *path, bool in_root, char out[PATH_MAX])
{
  size_t len = 0, depth = 0, starts[PATH_MAX / 2];
  const char *s = path;
  while (*s)
    {
      size_t n = strcspn (s, "/");
      if (n == 2 && s[0] == '.' && s[1] == '.')
        {
          if (depth > 0)
            len = starts[--depth];
          else if (!in_root)
            return -EXDEV;
        }
      else if (n > 0 && !(n == 1 && s[0] == '.'))
        {
          if (len + n + 2 > PATH_MAX)
            return -ENAMETOOLONG;
          starts[depth++] = len;
          if (len)
            out[len++] = '/';
          memcpy (out + len, s, n);
          len += n;
        }
      s += n;
      s += *s == '/';
    }
  if (len == 0)
    out[len++] = '.';
  if (s > path && s[-1] == '/' && len + 1 < PATH_MAX)
    out[len++] = '/';           /* a trailing slash: a directory */
  out[len] = '\0';
  return 0;
}

static bool
under (const char *vpath, const char *root)
{
  size_t n = strlen (root);
  return strcmp (root, "/") == 0
         || (strncmp (vpath, root, n) == 0 && (vpath[n] == '\0' || vpath[n] == '/'));
}

int
vr_resolve_scoped (struct vr_call *c, int dirfd, const char *path, int flags,
                   uint64_t resolve, struct vr_path *out)
{
  char root[PATH_MAX], rel[PATH_MAX];
  bool in_root = resolve & RESOLVE_IN_ROOT;
  int r;
  if (dirfd == AT_FDCWD)
    snprintf (root, sizeof root, "%s", c->task->cwd);
  else if ((r = vr_caller_dir (c, dirfd, root)) < 0)
    return r;
  if (path[0] == '\0')
    return -ENOENT;
  if (path[0] == '/' && !in_root)
    return -EXDEV;
  if ((r = clamp (path, in_root, rel)) < 0
      || (r = vr_resolve (c->s->v, &c->ctx, root, rel, flags, out)) < 0)
    return r;
  return out->ent == NULL || !under (out->vpath, root) ? -EXDEV : 0;
}
