/* /proc/<pid>/maps, smaps and numa_maps in the view.  The kernel names the
 * file behind each mapping by its host path — the rootfs's location on
 * the host (`/home/u/…/rootfs/lib/libc.so`), which a namespaced container
 * never sees.  A read-only open of one is served from a copy: each path
 * that lies in the view becomes its virtual path, any other its inode
 * (`file:[<ino>]`, as the view names an fd outside it); names that are
 * no path (`[heap]`, `/memfd:…`) stay.  The copy is the file as it was at
 * the open, not at each read. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-memfd.h"
#include "vroot-sup.h"

#define MAPS_MAX (16 << 20)     /* bytes of one copy */

int
vr_procmaps_wanted (const struct vr_path *p, int oflags)
{
  const char *name;
  if (p->ent == NULL || p->ent->kind != VR_PROC || (oflags & O_PATH)
      || (oflags & O_ACCMODE) != O_RDONLY || p->type != S_IFREG)
    return VR_MAPS_NO;
  name = strrchr (p->rel, '/');
  name = name ? name + 1 : p->rel;
  if (strcmp (name, "maps") == 0 || strcmp (name, "smaps") == 0)
    return VR_MAPS;
  return strcmp (name, "numa_maps") == 0 ? VR_MAPS_NUMA : VR_MAPS_NO;
}

/* The host path at |s| (up to |end|) as the view names it, into |out|. */
static void
rename_path (const struct vroot *v, const char *s, const char *end,
             const char *ino, FILE *out)
{
  static const char deleted[] = " (deleted)";
  char host[PATH_MAX], vpath[PATH_MAX];
  size_t n = (size_t) (end - s), dl = sizeof deleted - 1;
  bool gone = n > dl && memcmp (end - dl, deleted, dl) == 0;
  if (gone)
    n -= dl;
  if (n >= sizeof host || cm_startswith (s, "/memfd:"))
    {
      fwrite (s, 1, (size_t) (end - s), out);
      return;
    }
  memcpy (host, s, n);
  host[n] = '\0';
  if (vr_host_to_virtual (v, host, vpath) == 0)
    fputs (vpath, out);
  else
    fprintf (out, "file:[%.*s]", (int) strcspn (ino, " "), ino);
  if (gone)
    fputs (deleted, out);
}

/* One line: maps and smaps name the file from the first " /" to the end,
 * numa_maps after "file=" up to the next space; a path follows a space. */
static void
line (const struct vroot *v, bool numa, const char *s, const char *end,
      FILE *out)
{
  const char *f = numa ? memmem (s, (size_t) (end - s), " file=/", 7) : NULL;
  const char *p, *stop, *ino = "0";
  if (f)
    p = f + 6, stop = memchr (p, ' ', (size_t) (end - p));
  else
    {
      p = memmem (s, (size_t) (end - s), " /", 2), stop = end;
      p = p ? p + 1 : NULL;
    }
  if (p == NULL || (numa && f == NULL))
    {
      fwrite (s, 1, (size_t) (end - s), out);
      return;
    }
  if (stop == NULL)
    stop = end;
  /* maps: address perms offset dev inode path */
  const char *q = s;
  for (int i = 0; i < 4 && q < p; i++)
    q = memchr (q, ' ', (size_t) (p - q)), q = q ? q + 1 : p;
  if (!f && q < p)
    ino = q;
  fwrite (s, 1, (size_t) (p - s), out);
  rename_path (v, p, stop, ino, out);
  fwrite (stop, 1, (size_t) (end - stop), out);
}

int
vr_procmaps_copy (struct vr_call *c, int fd, int kind)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  FILE *out;
  int r = vr_read_whole (fd, MAPS_MAX, &buf, &len);
  if (r < 0)
    return r;
  int m = vr_memfd_writer ("maps", &out);
  if (m < 0)
    return m;
  for (const char *s = buf, *e; s < buf + len; s = e)
    {
      const char *nl = memchr (s, '\n', (size_t) (buf + len - s));
      e = nl ? nl + 1 : buf + len;
      line (c->s->v, kind == VR_MAPS_NUMA, s, nl ? nl : e, out);
      if (nl)
        fputc ('\n', out);
    }
  return vr_memfd_done (m, out);
}
