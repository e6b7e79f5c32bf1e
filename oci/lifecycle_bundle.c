/* The bundle a container owns: `run --image` builds one under
 * ROOT/image-bundles, and the container it creates makes it its own
 * (renamed to ROOT/image-bundles/ID) and takes it along when it is
 * deleted.  The ownership is one flag of the state (st->image_bundle,
 * persisted by oci_state_own_bundle); this file is what it means. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common/util.h"
#include "lifecycle.h"

static int
open_image_bundles (const struct oci_globals *g, struct cm_err **err)
{
  _cleanup_fd_ int rootfd = open (g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd;
  if (rootfd < 0)
    return cm_err_set (err, errno, "--root `%s`", g->root);
  fd = openat (rootfd, OCI_IMAGE_BUNDLES,
               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "open `%s/%s`", g->root, OCI_IMAGE_BUNDLES);
  return fd;
}

int
oci_bundle_adopt (const struct oci_globals *g, struct oci_state *st,
                  const char *tmp, char **bundle, struct cm_err **err)
{
  _cleanup_fd_ int bfd = open_image_bundles (g, err);
  _cleanup_free_ char *path = NULL;

  if (bfd < 0)
    return -1;
  path = xasprintf ("%s/%s/%s", g->root, OCI_IMAGE_BUNDLES, st->id);
  /* The record first: whatever happens next, deleting the container
   * removes the bundle. */
  if (oci_state_own_bundle (st, path, err) < 0)
    return -1;
  /* We hold the id, so what is there is no live container's. */
  if (cm_rm_rf_at (bfd, st->id, err) < 0)
    return cm_err_wrap (err, "remove the stale image bundle `%s`", path);
  if (renameat (AT_FDCWD, tmp, bfd, st->id) < 0)
    return cm_err_set (err, errno, "move image bundle `%s` to `%s`", tmp, path);
  *bundle = cm_steal_ptr (&path);
  return 0;
}

/* ROOT/image-bundles/ID: a symlink there is unlinked, not followed
 * (cm_rm_rf_at opens nothing without O_NOFOLLOW). */
void
oci_bundle_drop (const struct oci_globals *g, const struct oci_state *st)
{
  struct cm_err *e = NULL;
  _cleanup_fd_ int bfd = -1;
  if (!st->image_bundle)
    return;
  bfd = open_image_bundles (g, &e);
  if (bfd < 0)
    {
      if (e->errno_ == ENOENT)
        cm_err_free (&e);
    }
  else if (cm_rm_rf_at (bfd, st->id, &e) < 0)
    cm_err_wrap (&e, "remove the image bundle of `%s`", st->id);
  if (e)
    {
      oci_log_warning (g, e->msg);
      cm_err_free (&e);
    }
}
