/* libFuzzer entry for the namespace-less view's path resolver
 * (runtime/vroot-resolve.c).  On the first input it builds a fixed tree
 * under $TMPDIR: a rootfs planted with escapes (absolute and relative
 * symlinks out, a loop, a chain, `..` links), a bind mount whose source
 * holds more of them, a file bind, and the host's /proc.  Each input is a
 * path: the first byte picks the flags (bit 0 VR_NOFOLLOW, bit 1
 * VR_CREATE) and the base directory of a relative path (byte >> 2, mod 4),
 * the rest is the path (up to the first NUL).
 *
 * Invariants: a result is 0 or a negative errno; on success the virtual
 * path is absolute and canonical (no "//", ".", "..", trailing "/"), its
 * entry is the one vr_entry_for names, the path under it is relative
 * without "..", and what vr_open reaches — checked through
 * /proc/self/fd — lies under that entry's host path: never outside the
 * view.
 *
 * And the fast path (runtime/vroot-fast.c) against the walk: where
 * vr_plain takes a path and its parent opens without a symlink on the
 * way, the walk (VR_NOFOLLOW) must give the same entry, virtual path and
 * type, or the same errno. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/vroot.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static struct vroot v;
static char top[PATH_MAX];

static void
put (const char *rel, const char *link)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", top, rel);
  if (link == NULL)
    mkdir (p, 0755);
  else if (*link == '=')
    {
      int fd = open (p, O_CREAT | O_WRONLY, 0644);
      if (fd >= 0)
        close (fd);
    }
  else if (symlink (link, p) < 0)
    abort ();
}

static void
cleanup (void)
{
  struct cm_err *err = NULL;
  vr_free (&v);
  cm_rm_rf_at (AT_FDCWD, top, &err);
  cm_err_free (&err);
}

static void
setup (void)
{
  const char *t = getenv ("TMPDIR");
  struct cm_err *err = NULL;
  snprintf (top, sizeof top, "%s/fuzz-vroot.XXXXXX", t ? t : "/tmp");
  if (mkdtemp (top) == NULL)
    abort ();
  const char *tree[][2] = {
    { "rootfs", NULL }, { "rootfs/etc", NULL }, { "rootfs/usr", NULL },
    { "rootfs/usr/lib", NULL }, { "rootfs/proc", NULL }, { "rootfs/d", NULL },
    { "rootfs/etc/passwd", "=" }, { "rootfs/usr/lib/x", "=" },
    { "rootfs/lib", "usr/lib" }, { "rootfs/up", "../../../../.." },
    { "rootfs/abs", "/" }, { "rootfs/host", "/../host" },
    { "rootfs/loop", "loop" }, { "rootfs/a", "b" }, { "rootfs/b", "c/.." },
    { "rootfs/c", "d" }, { "rootfs/dotdot", ".." }, { "rootfs/self", "/proc/self" },
    { "rootfs/fd", "/proc/self/fd/0" }, { "rootfs/cwd", "/proc/self/cwd/../.." },
    { "host", NULL }, { "host/secret", "=" }, { "data", NULL },
    { "data/in", NULL }, { "data/in/f", "=" }, { "data/up", "../../../.." },
    { "data/root", "/" }, { "data/etc", "/etc/passwd" }, { "file", "=" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (tree); i++)
    put (tree[i][0], tree[i][1]);
  char hostabs[PATH_MAX * 2], rootfs[PATH_MAX * 2], data[PATH_MAX * 2],
       file[PATH_MAX * 2];
  snprintf (hostabs, sizeof hostabs, "%s/host", top);
  snprintf (rootfs, sizeof rootfs, "%s/rootfs/hostabs", top);
  if (symlink (hostabs, rootfs) < 0)
    abort ();
  snprintf (rootfs, sizeof rootfs, "%s/rootfs", top);
  snprintf (data, sizeof data, "%s/data", top);
  snprintf (file, sizeof file, "%s/file", top);
  struct vr_mount_spec m[] = {
    { "/mnt/data", data, VR_BIND, false, false },
    { "/etc/file", file, VR_BIND, true, false },
    { "/proc", "/proc", VR_PROC, true, false },
  };
  if (vr_build (&v, rootfs, false, m, ARRAY_SIZE (m), &err) < 0)
    abort ();
  atexit (cleanup);
}

static int
magic (void *ud, pid_t pid, const char *name, char out[PATH_MAX])
{
  if (strcmp (name, "cwd") == 0)
    return snprintf (out, PATH_MAX, "/usr/lib"), 0;
  if (strcmp (name, "root") == 0)
    return snprintf (out, PATH_MAX, "/"), 0;
  return -EACCES;
}

static void
check_canonical (const char *p)
{
  if (p[0] != '/' || strstr (p, "//") || strstr (p, "/./")
      || strstr (p, "/../") || (strlen (p) > 1 && p[strlen (p) - 1] == '/'))
    abort ();
  const char *tail = strrchr (p, '/');
  if (strcmp (tail, "/.") == 0 || strcmp (tail, "/..") == 0)
    abort ();
}

/* What vr_open reached must lie under the entry's host path. */
static void
check_inside (const struct vr_path *p)
{
  char link[64], host[PATH_MAX];
  int fd = vr_open (p, O_PATH, 0);
  ssize_t n;
  if (fd < 0)
    return;
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, host, sizeof host - 1);
  close (fd);
  if (n < 0)
    abort ();
  host[n] = '\0';
  size_t l = strlen (p->ent->host);
  if (strcmp (p->ent->host, "/") != 0
      && (strncmp (host, p->ent->host, l) != 0
          || (host[l] != '\0' && host[l] != '/')))
    abort ();
}

/* The fast path's answer for |path| agrees with the walk's. */
static void
check_fast (const struct vr_ctx *c, const char *base, const char *path)
{
  struct vr_plain pl;
  struct vr_path q;
  struct stat st;
  bool owned;
  int r = vr_plain (&v, base, path, &pl);
  if (r == 1)
    return;
  if (r < 0)
    abort ();                   /* nothing is masked in this tree */
  check_canonical (pl.vpath);
  if (vr_entry_for (&v, pl.vpath) != pl.ent || pl.ent->kind == VR_PROC
      || strchr (pl.name, '/') != NULL)
    abort ();
  int dfd = vr_plain_parent (NULL, 0, &pl, &owned);
  if (dfd == -ELOOP)
    return;                     /* a symlink on the way: the walk's job */
  int w = vr_resolve (&v, c, base, path, VR_NOFOLLOW, &q);
  if (dfd < 0)
    {
      if (w != dfd)
        abort ();
      return;
    }
  r = fstatat (dfd, pl.name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
  if (owned)
    close (dfd);
  if (r < 0)
    {
      if (w != r)
        abort ();
      return;
    }
  if (w < 0 || q.ent != pl.ent || strcmp (q.vpath, pl.vpath) != 0
      || q.type != (st.st_mode & S_IFMT))
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const bases[] = { "/", "/usr/lib", "/mnt/data/in",
                                       "/proc" };
  char path[PATH_MAX + 16];
  struct vr_path p;
  if (v.n == 0)
    setup ();
  if (size < 1)
    return 0;
  size_t len = size - 1 < sizeof path - 1 ? size - 1 : sizeof path - 1;
  memcpy (path, data + 1, len);
  path[len] = '\0';
  struct vr_ctx c = { .tgid = getpid (), .tid = getpid (), .cwd = "/usr/lib",
                      .magic = magic };
  check_fast (&c, bases[(data[0] >> 2) & 3], path);
  int r = vr_resolve (&v, &c, bases[(data[0] >> 2) & 3], path, data[0] & 3, &p);
  if (r > 0 || (r < 0 && -r > 4095))
    abort ();
  if (r < 0)
    return 0;
  if (p.ent == NULL)
    {
      if (p.fd_pid != getpid () || p.fd_num < 0)
        abort ();
      return 0;
    }
  check_canonical (p.vpath);
  if (vr_entry_for (&v, p.vpath) != p.ent || p.rel[0] == '/'
      || strcmp (p.rel, "..") == 0 || cm_startswith (p.rel, "../")
      || strstr (p.rel, "/../") != NULL)
    abort ();
  if (!p.missing)
    check_inside (&p);
  return 0;
}
