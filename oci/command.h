/* The command table.  Each sub-command lives in its own oci/cmd_*.c and
 * registers itself with OCI_COMMAND(), so adding a command never touches
 * main.c. */
#ifndef SANDLOCK_OCI_COMMAND_H
#define SANDLOCK_OCI_COMMAND_H

#include <stdbool.h>

#include "../common/err.h"

enum oci_log_format
{
  OCI_LOG_TEXT,
  OCI_LOG_JSON
};

struct oci_globals
{
  char *root;                   /* state root, resolved in main() */
  char *log;                    /* --log FILE or NULL */
  enum oci_log_format log_format;
  bool debug;
  bool systemd_cgroup;
  bool no_cgroup;               /* --cgroup-manager disabled */
  int rootless;                 /* -1 auto, 0 false, 1 true */
};

/* |run| returns the process exit code (>= 0), or < 0 with *err set, which
 * main() reports (stderr + --log) and turns into exit 1. */
struct oci_command
{
  const char *name;
  const char *summary;          /* one line for `--help` */
  const char *usage;            /* full text for `help CMD` */
  int (*run) (struct oci_globals *g, int argc, char **argv,
              struct cm_err **err);
  struct oci_command *next;
};

void oci_command_register (struct oci_command *c);
const struct oci_command *oci_command_find (const char *name);
const struct oci_command *oci_command_list (void);

#define OCI_COMMAND(var, name_, summary_, usage_, fn_)                    \
  static struct oci_command var = { name_, summary_, usage_, fn_, 0 };   \
  __attribute__ ((constructor)) static void var##_register (void)         \
  {                                                                       \
    oci_command_register (&var);                                          \
  }

/* Writes a debug line to stderr (and --log) when --debug was given. */
void oci_debug (const struct oci_globals *g, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Writes one error line to stderr and, with --log, to the log in the
 * --log-format.  Used by main() and by paths that exit without returning. */
void oci_log_error (const struct oci_globals *g, const char *msg);

/* The same at level "warning": the operation goes on. */
void oci_log_warning (const struct oci_globals *g, const char *msg);

/* oci_log_warning for rt_hooks_run_all (|g| is the struct oci_globals). */
void oci_hook_warning (const void *g, const char *msg);

#endif
