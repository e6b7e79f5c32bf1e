/* Everything a namespace-less container needs before its init exists, in
 * one call for the runtime's prepare stage: the private directories under
 * the container's state (the exec directory the init's kernel cwd will
 * be, the directories standing for its tmpfs mounts), the view, the
 * virtual process.cwd, the supervisor's state and the calls to trap. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "config.h"
#include "vroot-setup.h"

static int
mkdir_new (const char *path, struct cm_err **err)
{
  if (mkdir (path, 0700) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "namespace-less mode: mkdir `%s`", path);
  return 0;
}

static int
make_dirs (struct vr_setup *s, const char *state_dir, struct cm_err **err)
{
  s->dir = xasprintf ("%s/vroot", state_dir);
  s->exec_path = xasprintf ("%s/exec", s->dir);
  s->tmpfs_path = xasprintf ("%s/tmpfs", s->dir);
  if (mkdir_new (s->dir, err) < 0 || mkdir_new (s->exec_path, err) < 0
      || mkdir_new (s->tmpfs_path, err) < 0)
    return -1;
  /* Searchable by all: the container's kernel cwd, through which it
   * execs (vroot-exec.c) whatever uid it has changed to.  Its links name
   * /proc/self/fd/N only; it cannot be listed. */
  if (chmod (s->dir, 0711) < 0 || chmod (s->exec_path, 0711) < 0)
    return cm_err_set (err, errno, "namespace-less mode: chmod `%s`",
                       s->exec_path);
  s->exec_dir = open (s->exec_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (s->exec_dir < 0)
    return cm_err_set (err, errno, "namespace-less mode: open `%s`",
                       s->exec_path);
  return 0;
}

/* process.cwd in the view: canonical, a directory (runc creates a missing
 * cwd; the view's walk does the same, never outside the view). */
static int
virtual_cwd (struct vr_setup *s, const char *cwd, struct cm_err **err)
{
  static const struct vr_ctx none = { 0 };
  struct vr_path p;
  int r = vr_resolve (&s->v, &none, "/", cwd, 0, &p);
  if (r == -ENOENT)
    {
      r = vr_mkdir_p (&s->v, cwd);
      if (r == 0)
        r = vr_resolve (&s->v, &none, "/", cwd, 0, &p);
    }
  if (r < 0)
    return cm_err_set (err, -r, "process.cwd: `%s` in the view", cwd);
  if (p.type != S_IFDIR || p.ent == NULL)
    return cm_err_set (err, ENOTDIR, "process.cwd: `%s` in the view", cwd);
  s->cwd = xstrdup (p.vpath);
  return 0;
}

int
vr_setup_prepare (struct vr_setup *s, const struct rt_config *c,
                  const char *rootfs, const char *state_dir,
                  struct cm_err **err)
{
  memset (s, 0, sizeof *s);
  s->exec_dir = -1;
  if (make_dirs (s, state_dir, err) < 0
      || vr_specs_from_config (c, s->tmpfs_path, &s->specs, &s->nspecs,
                               &s->owned, err) < 0
      || vr_build (&s->v, rootfs, c->root_readonly, s->specs, s->nspecs,
                   err) < 0)
    goto fail;
  s->built = true;
  vr_set_paths (&s->v, c->masked_paths, c->masked_paths_len,
                c->readonly_paths, c->readonly_paths_len);
  if (virtual_cwd (s, c->process && c->process->cwd ? c->process->cwd : "/",
                   err) < 0)
    goto fail;
  s->ntrapped = vr_trapped_syscalls (s->trapped, ARRAY_SIZE (s->trapped));
  vr_sup_init (&s->sup, &s->v, 0, s->cwd, s->exec_dir);
  s->sup.hostname = c->hostname && *c->hostname ? c->hostname : NULL;
  s->sup.domainname = c->domainname && *c->domainname ? c->domainname : NULL;
  return 0;
fail:
  vr_setup_free (s);
  return -1;
}

void
vr_setup_free (struct vr_setup *s)
{
  if (s->sup.init_cwd)
    vr_sup_fini (&s->sup);
  if (s->built)
    vr_free (&s->v);
  if (s->exec_dir >= 0)
    close (s->exec_dir);
  free (s->specs);
  cm_strv_free (s->owned);
  free (s->cwd);
  free (s->dir), free (s->exec_path), free (s->tmpfs_path);
  memset (s, 0, sizeof *s);
  s->exec_dir = -1;
}
