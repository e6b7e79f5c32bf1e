/* create/run shared implementation. */
#ifndef SANDLOCK_OCI_LIFECYCLE_H
#define SANDLOCK_OCI_LIFECYCLE_H

#include <stdbool.h>

#include "command.h"
#include "state.h"

struct oci_create_args
{
  const char *id;
  const char *bundle;           /* NULL: current directory */
  const char *pid_file;
  const char *console_socket;
  int preserve_fds;
  bool no_pivot;
  bool no_new_keyring;
  bool detach;
};

/* Creates the container; on success |st| is loaded and locked, status
 * "created", and the init pid is in st->pid.  On failure nothing is left. */
int oci_create (struct oci_globals *g, const struct oci_create_args *a,
                struct oci_state *st, struct rt_err **err);

/* Releases a created container and runs poststart hooks. */
int oci_start (struct oci_globals *g, struct oci_state *st,
               struct rt_err **err);

/* Parses the flags create and run share; returns the getopt index of the
 * container id, or < 0 with *err set. */
int oci_parse_create_flags (const char *cmd, int argc, char **argv,
                            struct oci_create_args *a, bool allow_detach,
                            struct rt_err **err);

#endif
