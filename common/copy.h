/* Copying a directory tree between two directory fds: the image bundle's
 * rootfs (image/), tmpcopyup (runtime/mount.c), and a copy-up. */
#ifndef SANDLOCK_COMMON_COPY_H
#define SANDLOCK_COMMON_COPY_H

#include <stdbool.h>

#include "common/err.h"

enum
{
  CM_COPY_OWNERS = 1 << 0,      /* chown to the source's owner (root only
                                   in practice); a failure is an error */
  CM_COPY_ALL_XATTRS = 1 << 1,  /* every xattr, not only user.* */
  CM_COPY_DEVICES = 1 << 2,     /* char and block nodes (else skipped) */
  CM_COPY_DEVICES_0600 = 1 << 3,/* ... at most mode 0600, owned by the
                                   copier: for a tree a user chose */
  CM_COPY_TOP_META = 1 << 4,    /* |src|'s own metadata onto |dst| too */
  CM_COPY_XATTRS_STRICT = 1 << 5,/* an xattr that cannot be set is an
                                   error (else skipped): for a tree whose
                                   xattrs carry meaning (an overlay upper) */
};

/* Copies the contents of directory |src| into directory |dst|, which
 * should be empty (an existing name fails with EEXIST).  Kept: file data
 * (reflink where the file system can, copy_file_range, then read/write),
 * modes, owners (CM_COPY_OWNERS), times, xattrs, symlinks as they are,
 * hardlinks within the tree (of every non-directory), FIFOs, sockets (the
 * inode: nothing is listening on the copy).  Skipped, and only when the
 * flags say so: device nodes (without CM_COPY_DEVICES), xattrs other than
 * user.* (without CM_COPY_ALL_XATTRS), an xattr the destination refuses
 * (without CM_COPY_XATTRS_STRICT).  Nothing is
 * resolved through a symlink: every name is opened O_NOFOLLOW from its
 * parent's fd.  |dst| keeps its own metadata unless CM_COPY_TOP_META.
 * Errors read "|what|: OP `|where|/name`" (|where| may be ""). */
int cm_copy_tree (int src, int dst, unsigned flags, const char *what,
                  const char *where, struct cm_err **err);

#endif
