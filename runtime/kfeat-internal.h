/* The parsing halves of runtime/kfeat.c's probes, apart so unit tests can
 * feed them text.  Not a public API. */
#ifndef SANDLOCK_RUNTIME_KFEAT_INTERNAL_H
#define SANDLOCK_RUNTIME_KFEAT_INTERNAL_H

#include <stdbool.h>

#include "cgroup-internal.h"

/* Does /proc/filesystems text list |name| ("nodev\toverlay")? */
bool rt_kf_has_filesystem (const char *proc_filesystems, const char *name);

/* /proc/sys/user/max_user_namespaces text: is it above 0? */
bool rt_kf_userns_allowed (const char *max_user_namespaces);

/* The v1 controllers of |h|, space-separated, named hierarchies left out;
 * malloc'd ("" when none). */
char *rt_kf_v1_controllers (const struct cg_host *h);

/* overlay_userxattr for a process that may not mount overlayfs where it
 * is: asked in a forked child, in a user and mount namespace of its own
 * (runtime/overlay-try.c); 1, 0 or RT_KF_UNKNOWN. */
int rt_kf_overlay_userns (void);

#endif
