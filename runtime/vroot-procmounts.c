/* /proc/<pid>/mountinfo, mounts and mountstats in the view.  With no mount
 * namespace the kernel's are the host's: every host mount, and where the
 * rootfs and each bind source live on the host.  A read-only open of one
 * is served from a copy drawn from the view's mount table (vroot.c), the
 * way a namespaced container's own table reads: the root first, then each
 * entry at its destination, in the order the view was built (a mount's
 * parent is the latest earlier entry holding its destination).  Each
 * entry is shown as what the container gets:
 *   fstype  proc for the filtered /proc, tmpfs for a tmpfs stand-in, the
 *           source's own type for the root and a bind (statfs of the
 *           pinned fd);
 *   root    "/" (the path inside the source's filesystem would name the
 *           host directory);
 *   source  the fstype (as overlay and tmpfs read), never a host device
 *           or path;
 *   options ro/rw as drawn, nosuid (no_new_privs: a setuid bit is never
 *           honoured), nodev unless the entry is a bound device node (the
 *           supervisor refuses every other device node, vroot-devnode.c),
 *           noexec as drawn.
 * The device number is the pinned object's, as stat(2) of the mount point
 * shows it, so tools that match the two agree.  Mount ids are the entry
 * index plus a base; the root's parent is one outside the table, as in a
 * mount namespace whose root was pivoted in. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-memfd.h"
#include "vroot-sup.h"

#define ID_BASE 1000

enum { MNT_INFO, MNT_MOUNTS, MNT_STATS };

static const struct
{
  unsigned long magic;
  const char *name;
} fstypes[] = {
  { EXT4_SUPER_MAGIC, "ext4" },  { XFS_SUPER_MAGIC, "xfs" },
  { BTRFS_SUPER_MAGIC, "btrfs" }, { TMPFS_MAGIC, "tmpfs" },
  { OVERLAYFS_SUPER_MAGIC, "overlay" }, { PROC_SUPER_MAGIC, "proc" },
  { SYSFS_MAGIC, "sysfs" },      { NFS_SUPER_MAGIC, "nfs" },
  { FUSE_SUPER_MAGIC, "fuse" },  { SQUASHFS_MAGIC, "squashfs" },
  { F2FS_SUPER_MAGIC, "f2fs" },  { MSDOS_SUPER_MAGIC, "vfat" },
  { V9FS_MAGIC, "9p" },          { RAMFS_MAGIC, "ramfs" },
  { 0x2fc12fc1, "zfs" },         { 0x6e667364, "nsfs" },
  { 0x9660, "iso9660" },         { 0x58295829, "zonefs" },
};

/* Which file |p| names: -1 for none of the three. */
static int
wanted (const struct vr_path *p, int oflags)
{
  const char *name;
  if (p->ent == NULL || p->ent->kind != VR_PROC || (oflags & O_PATH)
      || (oflags & O_ACCMODE) != O_RDONLY || p->type != S_IFREG)
    return -1;
  name = strrchr (p->rel, '/');
  if (name == NULL)
    return -1;                  /* /proc/mounts is a symlink to self/mounts */
  name++;
  if (strcmp (name, "mountinfo") == 0)
    return MNT_INFO;
  if (strcmp (name, "mounts") == 0)
    return MNT_MOUNTS;
  return strcmp (name, "mountstats") == 0 ? MNT_STATS : -1;
}

/* A bound device node (a file bind: the /dev defaults, a device the
 * config binds). */
static bool
is_dev (const struct vr_entry *e)
{
  struct stat st;
  return !e->dir && fstat (e->fd, &st) == 0
         && (S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode));
}

static const char *
fstype_of (const struct vr_entry *e, bool *sb_ro)
{
  struct statfs sf;
  *sb_ro = false;
  if (e->kind == VR_PROC)
    return "proc";
  if (e->kind == VR_TMPFS)
    return "tmpfs";
  if (fstatfs (e->fd, &sf) < 0)
    return "none";
  *sb_ro = (sf.f_flags & ST_RDONLY) != 0;
  if (sf.f_type == TMPFS_MAGIC && is_dev (e))
    return "devtmpfs";          /* the host's /dev: same magic as tmpfs */
  for (size_t i = 0; i < ARRAY_SIZE (fstypes); i++)
    if ((unsigned long) sf.f_type == fstypes[i].magic)
      return fstypes[i].name;
  return "none";
}

/* The mount point as the kernel escapes it: space, tab, newline, '\'. */
static void
put_escaped (FILE *out, const char *s)
{
  for (; *s; s++)
    if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
      fprintf (out, "\\%03o", (unsigned char) *s);
    else
      fputc (*s, out);
}

static void
put_opts (FILE *out, const struct vr_entry *e)
{
  bool dev = is_dev (e);
  fprintf (out, "%s,nosuid%s%s,relatime", e->ro ? "ro" : "rw",
           dev ? "" : ",nodev", e->noexec ? ",noexec" : "");
}

/* The id of the mount entry |i| sits on: the latest earlier entry whose
 * destination holds it (a mount over the same point stacks on it). */
static int
parent_id (const struct vroot *v, size_t i)
{
  const char *d = v->e[i].dest;
  size_t best = SIZE_MAX, best_len = 0;
  for (size_t k = 0; k < i; k++)
    {
      const struct vr_entry *e = &v->e[k];
      size_t l = strcmp (e->dest, "/") == 0 ? 0 : e->dest_len;
      bool holds = (l == 0) || (strncmp (d, e->dest, l) == 0
                                && (d[l] == '/' || d[l] == '\0'));
      if (holds && (best == SIZE_MAX || l >= best_len))
        best = k, best_len = l;
    }
  return best == SIZE_MAX ? ID_BASE - 1 : ID_BASE + (int) best;
}

static void
line (FILE *out, const struct vroot *v, size_t i, int kind)
{
  const struct vr_entry *e = &v->e[i];
  struct stat st;
  bool sb_ro;
  const char *type = fstype_of (e, &sb_ro);
  if (kind == MNT_STATS)
    {
      fprintf (out, "device %s mounted on ", type);
      put_escaped (out, e->dest);
      fprintf (out, " with fstype %s\n", type);
      return;
    }
  if (kind == MNT_MOUNTS)
    {
      fprintf (out, "%s ", type);
      put_escaped (out, e->dest);
      fprintf (out, " %s ", type);
      put_opts (out, e);
      fputs (" 0 0\n", out);
      return;
    }
  if (fstat (e->fd, &st) < 0)
    st.st_dev = 0;
  fprintf (out, "%d %d %u:%u / ", ID_BASE + (int) i, parent_id (v, i),
           major (st.st_dev), minor (st.st_dev));
  put_escaped (out, e->dest);
  fputc (' ', out);
  put_opts (out, e);
  fprintf (out, " - %s %s %s\n", type, type, sb_ro || e->ro ? "ro" : "rw");
}

/* A memfd holding the table of |kind|; -errno. */
static int
draw (const struct vroot *v, int kind)
{
  FILE *out;
  int m = vr_memfd_writer ("mounts", &out);
  if (m < 0)
    return m;
  for (size_t i = 0; i < v->n; i++)
    line (out, v, i, kind);
  return vr_memfd_done (m, out);
}

int
vr_procmounts_serve (struct vr_call *c, const struct vr_path *p, int oflags,
                     int fd)
{
  int kind = wanted (p, oflags);
  if (kind < 0)
    return fd;
  int m = draw (c->s->v, kind);
  close (fd);
  return m;
}
