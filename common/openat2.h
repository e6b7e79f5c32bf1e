/* Opening a path resolved inside a directory: openat2(2) where the kernel
 * has it, and one fallback walk where it does not (kernels before 5.6, or
 * a seccomp profile that answers ENOSYS, as container engines' default
 * profiles do for syscalls they do not know). */
#ifndef SANDLOCK_COMMON_OPENAT2_H
#define SANDLOCK_COMMON_OPENAT2_H

#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>

/* openat(dirfd, path, flags) with |resolve| made of RESOLVE_IN_ROOT,
 * RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and
 * RESOLVE_NO_XDEV (others fail with EINVAL, as do O_CREAT and O_TMPFILE:
 * nothing creates through it).  O_CLOEXEC is always added.
 * Returns the fd, or -1 with errno set, as the syscall does: callers word
 * their own error with the path they know.
 *
 * Without openat2 a component-by-component walk does the same job: every
 * step is opened O_NOFOLLOW from the previous one, a symlink is read and
 * its target resolved by the same walk (from |dirfd| when it is absolute
 * under RESOLVE_IN_ROOT, EXDEV under RESOLVE_BENEATH), `..` never climbs
 * above |dirfd| under RESOLVE_IN_ROOT (EXDEV under RESOLVE_BENEATH), a
 * symlink in /proc is refused (ELOOP) under RESOLVE_NO_MAGICLINKS, and
 * RESOLVE_NO_XDEV compares st_dev (a bind mount of the same filesystem is
 * not seen; nothing uses it on that path today).  The walk is not atomic
 * against a concurrent rename of a directory out of the tree, which
 * openat2 catches with EAGAIN: it is the price of running there. */
int cm_openat2 (int dirfd, const char *path, int flags, uint64_t resolve);

/* Whether the kernel answers openat2 (probed once per process). */
bool cm_openat2_supported (void);

/* Test hook: makes cm_openat2 take the fallback walk (true) or probe again
 * (false).  Only tests call it. */
void cm_openat2_force_fallback (bool on);

#endif
