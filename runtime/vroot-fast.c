/* The resolver's fast path (runtime/vroot.h, docs/nsless.md "Resolution"):
 * a path whose canonical virtual form is its own spelling needs no walk.
 *
 * With no ".", no ".." and no trailing slash, the canonical virtual path
 * is known before the tree is looked at, so the table says everything the
 * walk would learn about mounts: the longest-prefix entry holds the
 * object, and no other entry's destination is crossed on the way (one
 * that were would be a longer prefix).  What the table cannot say is
 * whether a component is a symlink; the kernel says it instead, in the one
 * openat2 of the parent from the entry's pinned fd with
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: any symlink on the way
 * fails it (ELOOP) and the call takes the walk, which splices the link's
 * text in the view.  The kernel is never let follow a link itself: a
 * target could cross a mount point or reach a masked path, which only the
 * walk sees.  The last name is then used under that pinned parent with
 * O_NOFOLLOW / AT_SYMLINK_NOFOLLOW, and a symlink there also goes to the
 * walk.  Both paths give the same answer; this one costs one system call
 * for the parent instead of two per component. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vroot.h"

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)

static bool
under (const char *path, const char *dest)
{
  size_t n = strlen (dest);
  if (n == 1)
    return true;
  return strncmp (path, dest, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Appends |path|'s components to |out| (holding |len| bytes, canonical):
 * false when one is "." or "..", the path ends in a slash, or it is too
 * long. */
static bool
append_plain (char out[PATH_MAX], size_t len, const char *path)
{
  const char *p = path;
  while (*p)
    {
      const char *end;
      size_t n;
      while (*p == '/')
        p++;
      if (*p == '\0')
        return false;           /* a trailing slash */
      end = strchrnul (p, '/');
      n = (size_t) (end - p);
      if (n > NAME_MAX || (p[0] == '.' && (n == 1 || (n == 2 && p[1] == '.'))))
        return false;
      if (len + (len > 1) + n >= PATH_MAX)
        return false;
      if (len > 1)
        out[len++] = '/';
      memcpy (out + len, p, n);
      len += n;
      out[len] = '\0';
      p = end;
    }
  return true;
}

int
vr_plain (const struct vroot *v, const char *base, const char *path,
          struct vr_plain *out)
{
  const struct vr_entry *e;
  size_t len;
  if (path[0] == '/')
    out->vpath[0] = '/', out->vpath[1] = '\0';
  else if (base[0] != '/' || strlen (base) >= PATH_MAX)
    return 1;
  else
    memcpy (out->vpath, base, strlen (base) + 1);
  len = strlen (out->vpath);
  if (*path == '\0' || !append_plain (out->vpath, len, path)
      || strcmp (out->vpath, "/") == 0)
    return 1;
  e = vr_entry_for (v, out->vpath);
  if (!e->dir || e->kind == VR_PROC || strcmp (e->dest, out->vpath) == 0)
    return 1;
  for (size_t i = 0; i < v->nmasked; i++)
    if (under (out->vpath, v->masked[i]))
      return -ENOENT;
  out->ent = e;
  out->ro = e->ro;
  for (size_t i = 0; i < v->nreadonly; i++)
    out->ro |= under (out->vpath, v->readonly[i]);
  out->rel = out->vpath + (e->dest_len == 1 ? 1 : e->dest_len + 1);
  out->name = strrchr (out->vpath, '/') + 1;
  return 0;
}

int
vr_plain_parent (struct vr_dcache *dc, uint64_t cred,
                 const struct vr_plain *p, bool *owned)
{
  char dir[PATH_MAX];
  size_t n = (size_t) (p->name - p->rel);
  int fd;
  *owned = false;
  if (n == 0)
    return p->ent->fd;          /* the entry's own directory */
  /* The parent's virtual path is vpath up to the last slash. */
  size_t vlen = (size_t) (p->name - 1 - p->vpath);
  memcpy (dir, p->vpath, vlen);
  dir[vlen] = '\0';
  if (dc && (fd = vr_dcache_get (dc, dir, cred)) >= 0)
    return fd;
  memcpy (dir, p->rel, n - 1);
  dir[n - 1] = '\0';
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = IN_ROOT };
  fd = (int) syscall (SYS_openat2, p->ent->fd, dir, &how, sizeof how);
  if (fd < 0)
    return -errno;
  if (dc == NULL)
    *owned = true;
  else
    {
      memcpy (dir, p->vpath, vlen);
      dir[vlen] = '\0';
      vr_dcache_put (dc, dir, cred, fd);
    }
  return fd;
}
