/* /proc/<pid>/net's socket tables in the view.  Without a network
 * namespace they are the host's: every TCP/UDP endpoint of the host, and
 * /proc/net/unix with the host path of every named unix socket.  Where
 * config.json lists a network namespace the container should see its
 * own, and a namespace of its own holds exactly the sockets its processes
 * made.  So a read-only open of a socket table is served from a copy
 * keeping the header and the lines whose inode is a socket in the fd table
 * of a container process.  Those fd tables are read with CAP_SYS_PTRACE
 * raised on the caller's credentials (vr_cred_mem_out, as for its
 * memory): a namespace's table lists every socket of the namespace to
 * any reader, and a root container without CAP_SYS_PTRACE may not read
 * the fd links of a process whose capabilities exceed its own; only the
 * inode numbers are taken, to choose lines of the table the caller has
 * opened itself.  Chosen over empty
 * tables, which would hide the container's own listening sockets from
 * ss, netstat and health checks, and over ENOENT, which breaks them; the
 * cost (a stat read per host process, a readlink per fd of each
 * container process) is paid only at the open of such a file, which no
 * program does in a hot loop.
 * A config.json with no network namespace asked for the host's network:
 * its tables stay the host's.  Interfaces, routes and counters (dev,
 * route, if_inet6, snmp, …) stay the host's either way: netlink, which
 * `ip` reads, is not drawn either (docs/nsless.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"
#include "vroot-memfd.h"
#include "vroot-sup.h"

#define NET_MAX (16 << 20)      /* bytes of one table read */

static const struct
{
  const char *name;
  int col;                      /* the inode's field, from 0 */
} tables[] = {
  { "tcp", 9 },      { "tcp6", 9 },     { "udp", 9 },  { "udp6", 9 },
  { "udplite", 9 },  { "udplite6", 9 }, { "raw", 9 },  { "raw6", 9 },
  { "icmp", 9 },     { "icmp6", 9 },    { "unix", 6 }, { "packet", 8 },
  { "netlink", 9 },
};

/* The inode field of the table |p| names, or -1: "<pid>/net/NAME" or
 * "<pid>/task/<tid>/net/NAME". */
static int
wanted (const struct vr_sup *s, const struct vr_path *p, int oflags)
{
  if (!s->netns || p->ent == NULL || p->ent->kind != VR_PROC
      || (oflags & O_PATH) || (oflags & O_ACCMODE) != O_RDONLY
      || p->type != S_IFREG)
    return -1;
  const char *name = strrchr (p->rel, '/');
  if (name == NULL || name - p->rel < 4 || memcmp (name - 4, "/net", 4) != 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (tables); i++)
    if (strcmp (name + 1, tables[i].name) == 0)
      return tables[i].col;
  return -1;
}

struct inos
{
  unsigned long *v;
  size_t n, cap;
};

static void
add_fds (struct inos *set, pid_t pid)
{
  char dir[64], t[64];
  snprintf (dir, sizeof dir, "/proc/%d/fd", (int) pid);
  DIR *d = opendir (dir);
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      ssize_t n = readlinkat (dirfd (d), de->d_name, t, sizeof t - 1);
      unsigned long ino;
      if (n <= 0)
        continue;
      t[n] = '\0';
      if (sscanf (t, "socket:[%lu]", &ino) != 1)
        continue;
      if (set->n == set->cap)
        {
          set->cap = set->cap ? set->cap * 2 : 64;
          set->v = xrealloc (set->v, set->cap * sizeof *set->v);
        }
      set->v[set->n++] = ino;
    }
  closedir (d);
}

/* The sockets of every container process: the init's descendants (one
 * /proc/<pid>/stat read per host process, proc-tree.c), each kept only
 * when the view counts it the container's (pid_ok: not the exec server
 * nor its handlers, whose sockets are the runtime's). */
static void
container_sockets (struct vr_call *c, struct inos *set)
{
  _cleanup_free_ pid_t *d = NULL;
  pid_t init = c->s->init;
  if (init <= 0)
    return;
  add_fds (set, init);
  size_t n = rt_proc_descendants (init, &d);
  for (size_t i = 0; i < n; i++)
    if (c->ctx.pid_ok (c->ctx.ud, d[i]))
      add_fds (set, d[i]);
}

static bool
has (const struct inos *set, unsigned long ino)
{
  for (size_t i = 0; i < set->n; i++)
    if (set->v[i] == ino)
      return true;
  return false;
}

/* Whether line |s| (to |end|) names a socket of |set| in field |col|. */
static bool
ours (const struct inos *set, const char *s, const char *end, int col)
{
  const char *q = s;
  for (int f = 0; q < end; f++)
    {
      while (q < end && *q == ' ')
        q++;
      if (f == col)
        return q < end && has (set, strtoul (q, NULL, 10));
      while (q < end && *q != ' ')
        q++;
    }
  return false;
}

/* A kept line; in unix, a socket bound in the view named by its view
 * path instead of the supervisor's on-behalf one (vroot-sockname.c). */
static int
put_line (const struct vr_sup *sup, int m, const char *s, const char *e,
          int col)
{
  const char *p = col == 6 ? memmem (s, (size_t) (e - s), " /proc/self/fd/", 15)
                           : NULL;
  char kname[PATH_MAX];
  const char *v = NULL;
  size_t n = p ? (size_t) (e - p - 1) : 0;
  if (p && n > 0 && p[n] == '\n' && n - 1 < sizeof kname)
    {
      memcpy (kname, p + 1, n - 1);
      kname[n - 1] = '\0';
      /* the inode: field 6 */
      const char *q = s;
      for (int f = 0; f < 6 && q; f++)
        q = strchr (q, ' '), q = q ? q + strspn (q, " ") : NULL;
      v = q ? vr_sockname_view (sup, strtoul (q, NULL, 10), kname) : NULL;
    }
  if (v == NULL)
    return cm_write_all (m, s, (size_t) (e - s)) < 0 ? -1 : 0;
  if (cm_write_all (m, s, (size_t) (p + 1 - s)) < 0
      || cm_write_all (m, v, strlen (v)) < 0 || cm_write_all (m, "\n", 1) < 0)
    return -1;
  return 0;
}

static int
filtered (struct vr_call *c, int fd, int col)
{
  _cleanup_free_ char *buf = NULL;
  struct inos set = { 0 };
  size_t len;
  int r = vr_read_whole (fd, NET_MAX, &buf, &len);
  if (r < 0)
    return r;
  int m = memfd_create ("net", MFD_CLOEXEC);
  if (m < 0)
    return -errno;
  bool was = vr_cred_mem_out ();
  container_sockets (c, &set);
  vr_cred_mem_back (was);
  for (const char *s = buf, *e; s < buf + len; s = e)
    {
      const char *nl = memchr (s, '\n', (size_t) (buf + len - s));
      e = nl ? nl + 1 : buf + len;
      if ((s == buf || ours (&set, s, e, col))
          && put_line (c->s, m, s, e, col) < 0)
        r = -EIO;
    }
  free (set.v);
  if (r < 0 || lseek (m, 0, SEEK_SET) < 0)
    {
      close (m);
      return -EIO;
    }
  return m;
}

int
vr_procnet_serve (struct vr_call *c, const struct vr_path *p, int oflags,
                  int fd)
{
  int col = wanted (c->s, p, oflags);
  if (col < 0)
    return fd;
  int m = filtered (c, fd, col);
  close (fd);
  return m;
}
