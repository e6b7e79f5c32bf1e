/* The quota of a branch (docs/cow.md "Quota"): upper and work on a tmpfs
 * of max_disk bytes mounted at STORAGE/quota, so that the kernel refuses
 * the write that would cross the limit with ENOSPC, in the writer.  The
 * tmpfs is RAM and does not survive a restart: once the writer is gone a
 * branch that stays (kept, deferred) is persisted to STORAGE/upper on the
 * storage's own filesystem and the tmpfs goes; commit and abort work
 * straight from it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/util.h"
#include "internal.h"

/* Empty files, directories, symlinks and whiteouts use no data pages, so
 * size= alone would let a writer fill the host's memory with inodes (each
 * costs about 1 KiB of kernel memory): one inode per KiB of the limit
 * bounds that by the limit itself, and 4096 keep a small quota usable. */
static uint64_t
quota_inodes (uint64_t max_disk)
{
  return max_disk / 1024 > 4096 ? max_disk / 1024 : 4096;
}

void
cow_layer_paths (struct cow_branch *b)
{
  const char *q = b->in_tmpfs ? "/" COW_QUOTA_DIR : "";
  free (b->upper);
  free (b->work);
  b->upper = xasprintf ("%s%s/upper", b->storage, q);
  b->work = xasprintf ("%s%s/work", b->storage, q);
}

int
cow_quota_mount (const struct cow_branch *b, struct cm_err **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" COW_QUOTA_DIR, b->storage);
  _cleanup_free_ char *data
      = xasprintf ("size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0700",
                   b->max_disk, quota_inodes (b->max_disk));
  if (mkdir (dir, 0700) < 0)
    return cm_err_set (err, errno, "cow quota: mkdir `%s`", dir);
  if (mount ("tmpfs", dir, "tmpfs", 0, data) < 0)
    return cm_err_set (err, errno, "cow quota: mount a tmpfs (%s) on `%s`",
                       data, dir);
  return 0;
}

void
cow_quota_umount (const char *storage)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" COW_QUOTA_DIR, storage);
  /* Detached: a mount namespace made while it was mounted (another
   * container's, before its pivot_root) may still hold a copy. */
  (void) umount2 (dir, MNT_DETACH | UMOUNT_NOFOLLOW);
  rmdir (dir);
}

void
cow_quota_release_at (int dirfd, const char *rel)
{
  _cleanup_free_ char *path
      = dirfd == AT_FDCWD ? xstrdup (rel)
                          : xasprintf ("/proc/self/fd/%d/%s", dirfd, rel);
  cow_quota_umount (path);
}

bool
cow_quota_mounted (const char *storage)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" COW_QUOTA_DIR, storage);
  _cleanup_free_ char *upper = xasprintf ("%s/upper", dir);
  struct stat s, q;
  struct statfs fs;
  return stat (storage, &s) == 0 && stat (dir, &q) == 0 && s.st_dev != q.st_dev
         && statfs (dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC
         && access (upper, F_OK) == 0;
}

int
cow_branch_usable (const struct cow_branch *b, struct cm_err **err)
{
  if (!b->lost)
    return 0;
  return cm_err_set (err, 0,
                     "cow branch `%s`: its quota tmpfs `%s/" COW_QUOTA_DIR
                     "` is gone (the host restarted?) and the writes it "
                     "held with it%s; `abort` drops the branch",
                     b->storage, b->storage,
                     b->state == COW_COMMITTING
                         ? ", half-way through a commit into its lower"
                         : "");
}

/* The tmpfs upper, copied into STORAGE/upper and STORAGE/work (removed
 * first: the leftovers of a persist that died before meta was switched,
 * which nothing reads), then made durable. */
static int
copy_to_disk (const struct cow_branch *b, struct cm_err **err)
{
  _cleanup_free_ char *up = xasprintf ("%s/upper", b->storage);
  _cleanup_free_ char *wk = xasprintf ("%s/work", b->storage);
  _cleanup_fd_ int src = -1, dst = -1;
  if (cm_rm_rf_at (AT_FDCWD, up, err) < 0 || cm_rm_rf_at (AT_FDCWD, wk, err) < 0)
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
