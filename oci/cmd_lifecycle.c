/* create, start, state, delete — the runtime-spec lifecycle commands. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "lifecycle.h"

static int
cmd_create (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct oci_create_args a = { .detach = true };
  struct oci_state st;
  if (oci_parse_create_flags ("create", argc, argv, &a, false, err) < 0)
    return -1;
  if (oci_create (g, &a, &st, err) < 0)
    return -1;
  oci_state_free (&st);
  return 0;
}
OCI_COMMAND (create_command, "create", "create a container (parked before its process runs)",
             "usage: sandlock-oci create [-b|--bundle DIR] [--pid-file F]\n"
             "         [--console-socket S] [--preserve-fds N] [--no-pivot]\n"
             "         [--no-new-keyring] [--config FILE] ID\n\n"
             "Sets up the container from DIR/config.json (or --config FILE)\n"
             "and returns once its process is parked before execve; `start ID`\n"
             "runs it.\n",
             cmd_create)

static int
one_id (const char *cmd, int argc, char **argv, const char **id,
        struct cm_err **err)
{
  if (argc != 2)
    return cm_err_set (err, 0, "%s: usage: sandlock-oci %s ID", cmd, cmd);
  *id = argv[1];
  return 0;
}

static int
cmd_start (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct oci_state st = { .dirfd = -1 };
  const char *id = NULL;
  int r;
  if (one_id ("start", argc, argv, &id, err) < 0
      || oci_state_load (g, id, &st, err) < 0)
    {
      oci_state_free (&st);
      return -1;
    }
  r = oci_start (g, &st, err);
  oci_state_free (&st);
  return r < 0 ? -1 : 0;
}
OCI_COMMAND (start_command, "start", "run the process of a created container",
             "usage: sandlock-oci start ID\n", cmd_start)

static int
cmd_state (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct oci_state st = { .dirfd = -1 };
  const char *id = NULL;
  _cleanup_free_ char *j = NULL;
  if (one_id ("state", argc, argv, &id, err) < 0
      || oci_state_load (g, id, &st, err) < 0)
    {
      oci_state_free (&st);
      return -1;
    }
  j = oci_state_json (&st, true);
  printf ("%s\n", j);
  oci_state_free (&st);
  return 0;
}
OCI_COMMAND (state_command, "state", "print the state of a container as JSON",
             "usage: sandlock-oci state ID\n", cmd_state)

static int
cmd_delete (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[] = { { "force", no_argument, 0, 'f' },
                                        { 0, 0, 0, 0 } };
  struct oci_state st = { .dirfd = -1 };
  bool force = false;
  int c, r;

  while ((c = getopt_long (argc, argv, "+f", opts, NULL)) != -1)
    {
      if (c != 'f')
        return cm_err_set (err, 0, "delete: usage: sandlock-oci delete [-f] ID");
      force = true;
    }
  if (optind + 1 != argc)
    return cm_err_set (err, 0, "delete: usage: sandlock-oci delete [-f] ID");
  /* runc: deleting what is already gone with --force is not an error;
   * and what cannot be read any more can still be removed. */
  r = force ? oci_state_load_any (g, argv[optind], &st, err)
            : oci_state_load (g, argv[optind], &st, err);
  if (r != 0)
    {
      oci_state_free (&st);
      return r < 0 ? -1 : 0;
    }
  if (!force && (st.status == OCI_RUNNING || st.status == OCI_PAUSED))
    {
      cm_err_set (err, 0, "cannot delete container \"%s\" that is not "
                  "stopped: %s (use --force)", st.id,
                  oci_status_name (st.status));
      oci_state_free (&st);
      return -1;
    }
  /* under the id's lock: leftovers of a create of it that was killed */
  oci_cow_reclaim (g, st.id);
  r = oci_delete (g, &st, err);
  /* Gone now: its cow branches are decided (docs/cow.md). */
  if (r == 0)
    oci_cow_decide (g, st.id, -1);
  oci_state_free (&st);
  return r < 0 ? -1 : 0;
}
OCI_COMMAND (delete_command, "delete", "delete a container and what it holds",
             "usage: sandlock-oci delete [-f|--force] ID\n\n"
             "Removes a created or stopped container; --force kills a running\n"
             "one first.\n",
             cmd_delete)
