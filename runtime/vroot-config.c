/* config.json's mounts as the namespace-less view draws them
 * (docs/nsless.md "Mounts"), and the Landlock grants that bound the view:
 * exactly root.path and each mount source, with the mount's rights. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "config.h"
#include "landlock.h"
#include "vroot.h"

/* The default devices (runtime-spec "Default Devices"), as binds of the
 * host's nodes; /dev/fd, stdin/out/err, ptmx and the core link as
 * symlinks in the private directory standing for the /dev tmpfs. */
static const char *const dev_nodes[] = {
  "null", "zero", "full", "random", "urandom", "tty", NULL,
};
static const char *const dev_links[][2] = {
  { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
  { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
  { "core", "/proc/kcore" },
};

static bool
has_opt (const struct rt_mount *m, const char *o)
{
  for (size_t i = 0; i < m->options_len; i++)
    if (strcmp (m->options[i], o) == 0)
      return true;
  return false;
}

const char *
vr_mount_type (const struct rt_mount *m)
{
  if (has_opt (m, "bind") || has_opt (m, "rbind"))
    return "bind";
  return m->type ? m->type : "";
}

/* Types the view leaves out: their destination stays the rootfs's own
 * directory (docs/nsless.md says why for each). */
bool
vr_mount_left_out (const char *type)
{
  static const char *const t[] = { "sysfs", "cgroup", "cgroup2", "devpts",
                                   "mqueue", NULL };
  for (size_t i = 0; t[i]; i++)
    if (strcmp (type, t[i]) == 0)
      return true;
  return false;
}

struct acc
{
  struct vr_mount_spec *m;
  size_t n;
  char ***owned;
  size_t nowned;
};

static const char *
own (struct acc *a, char *s)
{
  *a->owned = xrealloc (*a->owned, (a->nowned + 2) * sizeof **a->owned);
  (*a->owned)[a->nowned++] = s;
  (*a->owned)[a->nowned] = NULL;
  return s;
}

static void
push (struct acc *a, const char *dest, const char *src, enum vr_kind k, bool ro)
{
  a->m = xrealloc (a->m, (a->n + 1) * sizeof *a->m);
  a->m[a->n++] = (struct vr_mount_spec) { dest, src, k, ro, false };
}

static int
private_dir (struct acc *a, const char *tmpfs_dir, size_t i, const char **out,
             struct cm_err **err)
{
  char *d = xasprintf ("%s/tmpfs-%zu", tmpfs_dir, i);
  own (a, d);
  if (mkdir (d, 0755) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "mounts[%zu]: private directory `%s`", i, d);
  *out = d;
  return 0;
}

/* /dev as a tmpfs: its links in the private directory, then the default
 * nodes bound from the host. */
static int
default_dev (struct acc *a, const char *dir, size_t i, struct cm_err **err)
{
  for (size_t k = 0; k < ARRAY_SIZE (dev_links); k++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", dir, dev_links[k][0]);
      if (symlink (dev_links[k][1], p) < 0 && errno != EEXIST)
        return cm_err_set (err, errno, "mounts[%zu]: /dev/%s", i,
                           dev_links[k][0]);
    }
  for (size_t k = 0; dev_nodes[k]; k++)
    push (a, own (a, xasprintf ("/dev/%s", dev_nodes[k])),
          own (a, xasprintf ("/dev/%s", dev_nodes[k])), VR_BIND, false);
  return 0;
}

int
vr_specs_from_config (const struct rt_config *c, const char *tmpfs_dir,
                      struct vr_mount_spec **out, size_t *n, char ***owned,
                      struct cm_err **err)
{
  struct acc a = { .owned = owned };
  const char *src;
  *owned = NULL;
  for (size_t i = 0; i < c->mounts_len; i++)
    {
      const struct rt_mount *m = &c->mounts[i];
      const char *t = vr_mount_type (m);
      bool ro = has_opt (m, "ro");
      size_t before = a.n;
      if (strcmp (t, "bind") == 0)
        push (&a, m->destination, m->source, VR_BIND, ro);
      else if (strcmp (t, "proc") == 0)
        push (&a, m->destination, "/proc", VR_PROC, ro);
      else if (strcmp (t, "tmpfs") == 0)
        {
          if (private_dir (&a, tmpfs_dir, i, &src, err) < 0)
            goto fail;
          push (&a, m->destination, src, VR_TMPFS, ro);
          if (strcmp (m->destination, "/dev") == 0
              && default_dev (&a, src, i, err) < 0)
            goto fail;
        }
      else if (!vr_mount_left_out (t))
        {
          cm_err_set (err, 0, "mounts[%zu].type: \"%s\" cannot be drawn "
                      "without namespaces (namespace-less mode maps bind, "
                      "tmpfs and proc; docs/nsless.md)", i, t);
          goto fail;
        }
      if (a.n > before)
        a.m[before].noexec = has_opt (m, "noexec");
    }
  *out = a.m;
  *n = a.n;
  return 0;
fail:
  free (a.m);
  cm_strv_free (*owned);
  *owned = NULL;
  return -1;
}

uint64_t
vr_landlock_access (const struct vr_entry *e)
{
  uint64_t rw = e->ro ? RT_LL_FS_READ : RT_LL_FS_READ | RT_LL_FS_WRITE;
  if (e->noexec)
    rw &= ~RT_LL_FS_EXECUTE;
  if (e->kind == VR_PROC)
    return RT_LL_FS_READ_FILE | RT_LL_FS_READ_DIR
           | (e->ro ? 0 : RT_LL_FS_WRITE_FILE);
  if (!e->dir)
    {
      struct stat st;
      if (fstat (e->fd, &st) == 0 && S_ISCHR (st.st_mode))
        return RT_LL_FS_DEVICE | (e->ioctl ? RT_LL_FS_IOCTL_DEV : 0);
      return rw & RT_LL_FS_FILE;
    }
  return rw;
}
