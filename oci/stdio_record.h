/* The container's stdio as the runtime gave it to the init, recorded at
 * create (and at restore, which creates) as the file "stdio" of the state
 * directory, so that `checkpoint` knows which fds of the tree are the
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
int oci_stdio_record (int dirfd, pid_t pid, bool terminal, struct cm_err **err);

/* The record of the container in |dirfd|: 1 with |out| filled, 0 when
 * it has none (created by an older runtime), -1 on error. */
int oci_stdio_load (int dirfd, struct criu_stdio out[3], struct cm_err **err);

#endif
