/* Forking the supervisor and the init inside the supervisor's Landlock
 * domain (runtime/vroot-domain.c).  runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_DOMAIN_H
#define SANDLOCK_RUNTIME_VROOT_DOMAIN_H

#include <fcntl.h>
#include <stdbool.h>

#include "common/err.h"
#include "vroot.h"

/* Runs |fn|(|ud|, err) on a thread of this process that first entered
 * vr_landlock_self_with(|v|, |exec_dir|, |net|, |extra|, |n|): what |fn|
 * forks is born in that domain.  Returns |fn|'s result (its error in
 * |err|).  The thread
 * waits for vr_domain_release; the borrowed arguments must live until
 * |fn| has returned. */
int vr_domain_fork (const struct vroot *v, int exec_dir,
                    const struct vr_net *net, const struct vr_ll_extra *extra,
                    size_t n, int (*fn) (void *, struct cm_err **), void *ud,
                    struct cm_err **err);

/* Lets the thread end (the create is over, the init's PDEATHSIG
 * dropped or the init gone), without waiting for it to leave.  Harmless
 * when none runs. */
void vr_domain_release (void);

#endif
