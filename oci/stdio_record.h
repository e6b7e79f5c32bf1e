/* The container's stdio as the runtime gave it to the init, recorded at
 * create (and at restore, which creates) as the field "stdio" of
 * state.json — written with the "created" state, no file of its own —, so that `checkpoint` knows which fds of the tree are the
 * engine's — the very pipe, pty or /dev/null passed — and rebinds exactly
 * those to the restoring side's (docs/checkpoint.md, "The container's
 * stdio"). */
#ifndef SANDLOCK_OCI_STDIO_RECORD_H
#define SANDLOCK_OCI_STDIO_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/err.h"
#include "criu-lite/criu.h"

/* Records fds 0-2 of the created init |pid| (parked, its stdio set):
 * with a |terminal|, the pty the init holds (any reopen of it is the
 * same terminal); else this process's own fds 0-2, which the init
 * inherited, each with the mount it was opened through.  No record when
 * the pty cannot be read (a runtime without CAP_SYS_PTRACE over the
 * init). */
int oci_stdio_record (pid_t pid, bool terminal, char **out,
                      struct cm_err **err);

/* Record |rec| (state.json's "stdio", NULL when absent): 1 with |out|
 * filled, 0 when there is none (created by an older runtime), -1 when it
 * is malformed. */
int oci_stdio_load (const char *rec, struct criu_stdio out[3],
                    struct cm_err **err);

#endif
