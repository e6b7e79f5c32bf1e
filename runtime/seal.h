/* runtime internals: the seal of RT_PAYLOAD_FN_SEAL (seal.c). */
#ifndef SANDLOCK_RUNTIME_SEAL_H
#define SANDLOCK_RUNTIME_SEAL_H

#include "internal.h"

/* In the init, before Landlock: the calls that finish the container's
 * confinement.  The init keeps it until it exits. */
int rt_seal_build (const struct rt_plan *p, const struct rt_seal **out,
                   struct cm_err **err);

#endif
