/* The container lifecycle (oci/lifecycle*.c, start_record.c): create,
 * start, delete, shared by the create, start, run and delete commands. */
#ifndef SANDLOCK_OCI_LIFECYCLE_H
#define SANDLOCK_OCI_LIFECYCLE_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "command.h"
#include "runtime/runtime.h"
#include "state.h"

struct oci_create_args
{
  const char *id;
  const char *bundle;           /* NULL: current directory */
  const char *pid_file;
  const char *console_socket;
  int console_fd;               /* run: our own socketpair end, if set */
  bool console_fd_set;
  int preserve_fds;
  bool no_pivot;
  const char *isolation;        /* --isolation: namespaces|landlock|auto */
  bool no_new_keyring;
  bool detach;
  bool keep;                    /* run --keep: no delete when it exits */
  const char *config;           /* --config FILE: instead of bundle/config.json */
  /* run --image: the bundle built under ROOT/image-bundles, which
   * oci_create either makes the container's own (renamed to
   * ROOT/image-bundles/ID, deleted with it) or removes.  Overrides bundle. */
  const char *image_bundle_tmp;
  /* restore: what the init becomes instead of execve of process.args
   * (zeroed: RT_PAYLOAD_EXEC) */
  struct rt_payload payload;
  /* run --cow-on-exit / --cow-on-error: override the annotations. */
  const char *cow_on_exit, *cow_on_error;
};

/* Creates the container; on success |st| is loaded and locked, status
 * "created", and the init pid is in st->pid.  On failure nothing is left
 * (no state, no image bundle; an existing container of that id is not
 * touched). */
int oci_create (struct oci_globals *g, const struct oci_create_args *a,
                struct oci_state *st, struct cm_err **err);

/* The isolation --isolation MODE (NULL: auto) names: "auto" resolved to
 * "namespaces" where this user can make them, else "landlock" (the
 * namespace-less mode); any other value is returned as it is. */
const char *oci_isolation_resolve (const char *mode);

/* Kills, waits for and cleans up a container: cgroup, poststop hooks, the
 * bundle it owns, the state directory.  Used by delete, by run when the
 * container exits, and by a create that fails half-way. */
int oci_delete (const struct oci_globals *g, struct oci_state *st,
                struct cm_err **err);

/* Makes the bundle `run --image` built at |tmp| (under ROOT/image-bundles)
 * the bundle of the freshly created, locked |st|: records the ownership,
 * replaces whatever a killed run left at ROOT/image-bundles/ID (no
 * container has that id: we hold it) and renames |tmp| there.  *bundle
 * gets that path (caller frees).  On failure |tmp| is left to the caller. */
int oci_bundle_adopt (const struct oci_globals *g, struct oci_state *st,
                      const char *tmp, char **bundle, struct cm_err **err);

/* Removes the bundle |st| owns, if any (never following a symlink; a
 * failure is a warning: the container is still deleted). */
void oci_bundle_drop (const struct oci_globals *g, const struct oci_state *st);

/* Releases a created container and runs poststart hooks. */
int oci_start (struct oci_globals *g, struct oci_state *st,
               struct cm_err **err);

/* start.json in the locked state directory |dirfd|: what `start` needs
 * of |cfg| (ociVersion, hooks.poststart), written at create. */
int oci_start_record_save (int dirfd, const struct rt_config *cfg,
                           struct cm_err **err);
/* Reads it back as a config holding only those fields (a container
 * created without the record: its stored config.json). */
int oci_start_record_load (int dirfd, struct rt_config **out,
                           struct cm_err **err);

/* Parses the flags create and run share; returns the getopt index of the
 * container id, or < 0 with *err set. */
int oci_parse_create_flags (const char *cmd, int argc, char **argv,
                            struct oci_create_args *a, bool allow_detach,
                            struct cm_err **err);

/* Parses --preserve-fds |arg| into |out| and checks, before the runtime
 * opens anything, that the caller really passes fds 3..3+N-1 (no hole the
 * runtime's own fds could fill) within RLIMIT_NOFILE.  |cmd| prefixes the
 * error. */
int oci_parse_preserve_fds (const char *cmd, const char *arg, int *out,
                            struct cm_err **err);

/* Writes |pid| to |path| atomically (runc's --pid-file: no newline). */
int oci_write_pid_file (const char *path, pid_t pid, struct cm_err **err);

/* Blocks SIGCHLD and the forwarded signals (before the child exists, so
 * none is lost); |old| gets the previous mask. */
void oci_block_signals (sigset_t *set, sigset_t *old);

/* Waits for our child |pid|, forwarding the signals in |set|; returns its
 * exit code or 128+signal. */
int oci_wait_forwarding (pid_t pid, const sigset_t *set);

/* oci_wait_forwarding for a process that is not our child (namespace-less
 * exec): the status comes from |status_fd| (rt_exec_vroot_status). */
int oci_wait_remote (pid_t pid, int status_fd, const sigset_t *set);

/* The same, while relaying between our stdio and the container's pty
 * |master| (stdin raw when it is a tty; SIGWINCH resizes the pty). */
int oci_relay_wait (pid_t pid, int master, const sigset_t *set);

#endif
