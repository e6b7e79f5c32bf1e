/* The quota of a branch (docs/cow.md "Quota"): upper and work on a tmpfs
 * of max_disk bytes mounted at STORAGE/quota, so that the kernel refuses
 * the write that would cross the limit with ENOSPC, in the writer.  The
 * tmpfs is RAM and does not survive a restart: a branch that stays moves
 * off it (persist.c); commit and abort work straight from it. */
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
cow_quota_mount (const struct cow_branch *b, const char *tag,
                 struct cm_err **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" COW_QUOTA_DIR, b->storage);
  _cleanup_free_ char *data
      = xasprintf ("size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0700",
                   b->max_disk, quota_inodes (b->max_disk));
  if (mkdir (dir, 0700) < 0)
    return cm_err_set (err, errno, "cow quota: mkdir `%s`", dir);
  if (mount (tag ? tag : "tmpfs", dir, "tmpfs", 0, data) < 0)
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
