/* The leftovers of a create killed between making a quota'd branch's
 * storage and recording it (docs/cow.md "Quota", crash and restart): the
 * caller knows the storage path and the tag it gave the tmpfs as its
 * mount source; the tmpfs is unmounted only when it is provably that one. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

/* Whether the mountinfo entry of device |dev| says tmpfs with source
 * |tag| (fields: ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE SOURCE). */
static bool
mount_is_tagged (dev_t dev, const char *tag)
{
  _cleanup_free_ char *want = NULL, *line = NULL;
  size_t cap = 0;
  bool found = false;
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return false;
  want = xasprintf (" %u:%u ", major (dev), minor (dev));
  while (!found && getline (&line, &cap, f) > 0)
    {
      char *sep = strstr (line, " - ");
      char *p = strstr (line, want);
      char type[64], source[256];
      if (p == NULL || sep == NULL || p > sep
          || sscanf (sep, " - %63s %255s", type, source) != 2)
        continue;
      found = strcmp (type, "tmpfs") == 0 && strcmp (source, tag) == 0;
    }
  fclose (f);
  return found;
}

/* STORAGE/quota is a mount point (its own device, not STORAGE's) of a
 * tmpfs whose source is |tag|. */
static bool
ours_mounted (const char *storage, const char *dir, const char *tag)
{
  struct stat s, q;
  struct statfs fs;
  return lstat (storage, &s) == 0 && S_ISDIR (s.st_mode)
         && lstat (dir, &q) == 0 && S_ISDIR (q.st_mode)
         && s.st_dev != q.st_dev && statfs (dir, &fs) == 0
         && fs.f_type == TMPFS_MAGIC && mount_is_tagged (q.st_dev, tag);
}

bool
cow_quota_reclaim (const char *storage, const char *tag)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" COW_QUOTA_DIR, storage);
  if (ours_mounted (storage, dir, tag))
    {
      cow_quota_umount (storage);
      return cow_remove (storage, NULL) == 0;
    }
  /* made, not yet mounted (or made and left empty): nothing in it */
  rmdir (dir);
  return rmdir (storage) == 0 || errno == ENOENT;
}
