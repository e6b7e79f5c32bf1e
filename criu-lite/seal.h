/* criu-lite internals: the caller's call lists (seal.c). */
#ifndef SANDLOCK_CRIU_LITE_SEAL_H
#define SANDLOCK_CRIU_LITE_SEAL_H

#include "criu-lite/criu.h"

/* Offsets inside the data; NULL is fine. */
int cl_seal_check (const struct criu_seal *s, const char *what,
                   struct cm_err **err);
/* Makes the calls in this thread, from C. */
int cl_seal_run (const struct criu_seal *s, const char *what,
                 struct cm_err **err);

#endif
