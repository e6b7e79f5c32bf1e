/* A quota'd branch that stays (kept, deferred) moves off its tmpfs onto
 * the storage's own filesystem (cow/cow.h cow_branch_persist): RAM is
 * given back, and the branch survives a restart. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"
#include "internal.h"

/* The tmpfs upper, copied into STORAGE/upper and STORAGE/work (removed
 * first: the leftovers of a persist that died before meta was switched,
 * which nothing reads), then made durable. */
static int
copy_to_disk (const struct cow_branch *b, struct cm_err **err)
{
  _cleanup_free_ char *up = xasprintf ("%s/upper", b->storage);
  _cleanup_free_ char *wk = xasprintf ("%s/work", b->storage);
  _cleanup_fd_ int src = -1, dst = -1;
  if (cm_rm_rf_at (AT_FDCWD, up, err) < 0
      || cm_rm_rf_at (AT_FDCWD, wk, err) < 0)
    return -1;
  if (mkdir (up, 0700) < 0 || mkdir (wk, 0700) < 0)
    return cm_err_set (err, errno, "cow persist: mkdir in `%s`", b->storage);
  src = open (b->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  dst = open (up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0 || dst < 0)
    return cm_err_set (err, errno, "cow persist: open `%s`",
                       src < 0 ? b->upper : up);
  /* Whiteouts are 0:0 device nodes and opaque marks trusted.* xattrs:
   * every node and every xattr, strictly, or the copy means less. */
  if (cm_copy_tree (src, dst,
                    CM_COPY_OWNERS | CM_COPY_ALL_XATTRS | CM_COPY_DEVICES
                        | CM_COPY_TOP_META | CM_COPY_XATTRS_STRICT,
                    "cow persist", b->upper, err)
      < 0)
    return -1;
  if (syncfs (dst) < 0)
    return cm_err_set (err, errno, "cow persist: syncfs `%s`", up);
  return 0;
}

int
cow_branch_persist (struct cow_branch *b, struct cm_err **err)
{
  if (!b->in_tmpfs)
    {
      if (b->max_disk)
        cow_quota_umount (b->storage);
      return 0;
    }
  if (cow_branch_usable (b, err) < 0)
    return -1;
  if (b->state == COW_PENDING || b->state >= COW_COMMITTING)
    return cm_err_set (err, EBUSY,
                       "cow branch `%s` is %s: only a kept or deferred "
                       "branch moves off its quota tmpfs",
                       b->storage, cow_state_name (b->state));
  if (copy_to_disk (b, err) < 0)
    return -1;
  /* meta switches to the disk copy: the commit point */
  b->in_tmpfs = false;
  cow_layer_paths (b);
  if (cow_meta_write (b, err) < 0)
    {
      b->in_tmpfs = true;
      cow_layer_paths (b);
      return -1;
    }
  cow_quota_umount (b->storage);
  return 0;
}
