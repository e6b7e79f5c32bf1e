/* `run --image REF ID [-- CMD...]`: pulls REF when needed and builds a
 * bundle for it under the state root, then run continues as usual with
 * that bundle.
 *
 * The bundle is built in ROOT/image-bundles/.run-XXXXXX and only becomes
 * ROOT/image-bundles/ID once oci_create holds the id (state.c), so a
 * second `run` of an existing id never touches the first one's bundle.
 * Each build directory is flock()ed by the run building it; one left by a
 * killed run (^C during a pull) is unlocked and the next `run --image`
 * removes it.  The lock of ROOT/image-bundles itself (shared while a build
 * directory is made and locked, exclusive while sweeping) keeps the sweep
 * from taking a directory between its mkdtemp and its flock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "image_cli.h"
#include "image_run.h"
#include "lifecycle.h"
#include "state.h"

#define BUILD_PREFIX ".run-"

static int
lock_fd (int fd, int op, const char *what, struct cm_err **err)
{
  while (flock (fd, op) < 0)
    if (errno != EINTR)
      return cm_err_set (err, errno, "lock `%s`", what);
  return 0;
}

/* Removes the build directories no live run holds.  Called with |bfd|
 * locked exclusively. */
static void
sweep_builds (int bfd)
{
  int dfd = fcntl (bfd, F_DUPFD_CLOEXEC, 0);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  struct dirent *de;

  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    {
      _cleanup_fd_ int fd = -1;
      struct cm_err *e = NULL;
      if (!cm_startswith (de->d_name, BUILD_PREFIX))
        continue;
      fd = openat (bfd, de->d_name,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
        continue;               /* not a directory, or a run is building it */
      if (cm_rm_rf_at (bfd, de->d_name, &e) < 0)
        cm_err_free (&e);
    }
  closedir (d);
}

/* Makes and locks a new build directory; *tmp its path, *lockfd its fd. */
static int
new_build_dir (struct oci_globals *g, char **tmp, int *lockfd,
               struct cm_err **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", g->root, OCI_IMAGE_BUNDLES);
  _cleanup_free_ char *path = NULL;
  _cleanup_fd_ int bfd = -1, fd = -1;

  if (cm_mkdir_p (dir, 0700, err) < 0)
    return -1;
  bfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (bfd < 0)
    return cm_err_set (err, errno, "open `%s`", dir);
  if (lock_fd (bfd, LOCK_EX, dir, err) < 0)
    return -1;
  sweep_builds (bfd);
  /* Not atomic (flock(2)), and need not be: only mkdtemp-to-flock below
   * must not meet a sweep. */
  if (lock_fd (bfd, LOCK_SH, dir, err) < 0)
    return -1;
  path = xasprintf ("%s/" BUILD_PREFIX "XXXXXX", dir);
  if (mkdtemp (path) == NULL)
    return cm_err_set (err, errno, "create a build directory in `%s`", dir);
  fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if ((fd < 0 || fchmod (fd, 0755) < 0
           ? cm_err_set (err, errno, "build directory `%s`", path)
           : lock_fd (fd, LOCK_EX, path, err))
      < 0)
    {
      struct cm_err *e = NULL;
      if (cm_rm_rf_at (AT_FDCWD, path, &e) < 0)
        cm_err_free (&e);
      return -1;
    }
  *tmp = cm_steal_ptr (&path);
  *lockfd = cm_steal_fd (&fd);
  return 0;
}

void
image_run_discard (const char *tmp)
{
  struct cm_err *e = NULL;
  if (tmp && cm_rm_rf_at (AT_FDCWD, tmp, &e) < 0)
    cm_err_free (&e);
}

/* Fails early, before any pull, for an id create would refuse anyway; the
 * authoritative check is oci_state_create's, under the id's lock. */
static int
check_id (struct oci_globals *g, const char *id, struct cm_err **err)
{
  _cleanup_free_ char *p = NULL;
  if (!oci_id_valid (id))
    return cm_err_set (err, 0, "run --image: invalid container id \"%s\"", id);
  p = xasprintf ("%s/%s", g->root, id);
  if (faccessat (AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return cm_err_set (err, 0, "container \"%s\" already exists", id);
  return 0;
}

/* The pull's limits (--timeout, --stall-timeout), as `pull` takes them:
 * returns 1 when av[*i] was one (its value consumed), 0 when not. */
static int
pull_limit_flag (struct image_cli *c, char **av, int ac, int *i, struct cm_err **err)
{
  static const char *const names[] = { "timeout", "stall-timeout" };
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    {
      size_t n = strlen (names[k]);
      const char *a = av[*i], *v;
      if (strncmp (a, "--", 2) != 0 || strncmp (a + 2, names[k], n) != 0)
        continue;
      if (a[2 + n] == '=')
        v = a + 3 + n;
      else if (a[2 + n] == '\0' && *i + 1 < ac)
        v = av[++*i];
      else
        continue;
      for (const struct option *o = image_cli_options; o->name; o++)
        if (strcmp (o->name, names[k]) == 0)
          return image_cli_opt (c, o->val, v, err) < 0 ? -1 : 1;
    }
  return 0;
}

int
image_run_prepare (struct oci_globals *g, int *argc, char ***argv, char **tmp,
                   int *lockfd, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1, .quiet = true };
  const char *ref = NULL, *iso = NULL;
  char **av = *argv, **out;
  char *const *cmd = NULL;
  int ac = *argc, n = 0, ret;
  struct img_image *im = NULL;

  *tmp = NULL;
  *lockfd = -1;
  out = xcalloc ((size_t) ac + 1, sizeof *out);
  for (int i = 0; i < ac; i++)
    {
      int lim = pull_limit_flag (&c, av, ac, &i, err);
      if (lim < 0)
        {
          free (out);
          return -1;
        }
      if (lim > 0)
        continue;
      if (strcmp (av[i], "--image") == 0 && i + 1 < ac)
        ref = av[++i];
      else if (cm_startswith (av[i], "--image="))
        ref = av[i] + 8;
      else if (strcmp (av[i], "--cache-dir") == 0 && i + 1 < ac)
        c.o.cache_dir = av[++i];
      else if (cm_startswith (av[i], "--cache-dir="))
        c.o.cache_dir = av[i] + 12;
      else if (strcmp (av[i], "--allow-devices") == 0)
        c.o.allow_devices = true;
      else if ((strcmp (av[i], "--max-unpacked-size") == 0 && i + 1 < ac)
               || cm_startswith (av[i], "--max-unpacked-size="))
        {
          const char *v = av[i][19] == '=' ? av[i] + 20 : av[++i];
          if (image_cli_size ("--max-unpacked-size", v, &c.o.max_unpacked, err) < 0)
            {
              free (out);
              return -1;
            }
        }
      else if (strcmp (av[i], "--isolation") == 0 && i + 1 < ac)
        {
          iso = av[i + 1];
          out[n++] = av[i];     /* create takes it too */
        }
      else if (cm_startswith (av[i], "--isolation="))
        {
          iso = av[i] + 12;
          out[n++] = av[i];
        }
      else if (ref && strcmp (av[i], "--") == 0)
        {
          cmd = av + i + 1;
          break;
        }
      else
        out[n++] = av[i];
    }
  if (ref == NULL)
    {
      free (out);
      return 0;
    }
  if (n < 2 || out[n - 1][0] == '-')
    {
      free (out);
      return cm_err_set (err, 0, "run --image: expected REF ID [-- CMD...]");
    }
  if (check_id (g, out[n - 1], err) < 0 || img_pull (&c.o, ref, &im, err) < 0)
    {
      free (out);
      return -1;
    }
  /* The cached rootfs as an overlay lower when the kernel allows it, else
   * a copy (docs/cow.md).  The namespace-less mode has no mount namespace
   * to mount an overlay in: always the copy (docs/nsless.md). */
  c.nsless = strcmp (oci_isolation_resolve (iso), "landlock") == 0;
  c.g = g;
  const char *why = c.nsless
                        ? "the namespace-less mode cannot mount an overlay"
                    : c.o.allow_devices
                        ? "--allow-devices: the image's device nodes are "
                          "given in a copy only (the overlay is nodev)"
                        : oci_cow_image_unusable ();
  c.cow = why == NULL;
  if (why)
    {
      _cleanup_free_ char *w = xasprintf ("run --image: copying the cached "
                                          "rootfs: %s", why);
      oci_log_warning (g, w);
    }
  ret = new_build_dir (g, tmp, lockfd, err);
  if (ret == 0)
    ret = image_cli_bundle (&c, im, *tmp, cmd && *cmd ? cmd : NULL, err);
  img_image_free (im);
  if (ret < 0)
    {
      free (out);
      image_run_discard (*tmp);
      free (*tmp);
      *tmp = NULL;
      if (*lockfd >= 0)
        close (*lockfd);
      *lockfd = -1;
      return -1;
    }
  *argc = n;
  *argv = out;
  return 1;
}
