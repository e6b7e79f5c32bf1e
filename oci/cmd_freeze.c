/* pause ID / resume ID: freeze or thaw every process of the container
 * through the cgroup freezer; `state` then reports "paused" from the
 * freezer itself. */
#include <stdbool.h>
#include <string.h>

#include "state.h"

static int
set_frozen (struct oci_globals *g, int argc, char **argv, bool freeze,
            struct cm_err **err)
{
  const char *cmd = freeze ? "pause" : "resume";
  struct oci_state st = { .dirfd = -1 };
  struct rt_handle *h = NULL;
  int ret = -1;

  if (argc != 2 || argv[1][0] == '-')
    return cm_err_set (err, 0, "%s: usage: sandlock-oci %s ID", cmd, cmd);
  if (oci_state_load (g, argv[1], &st, err) < 0)
    goto out;
  /* runc's wording (libcontainer ErrNotRunning / ErrNotPaused).  A created
   * container is refused: "created" is reported before the freezer is
   * looked at, so it could never be resumed. */
  if (st.status != (freeze ? OCI_RUNNING : OCI_PAUSED))
    {
      cm_err_set (err, 0, freeze ? "container not running"
                                 : "container not paused");
      goto out;
    }
  if (oci_state_handle (&st, cmd, "pausing needs the cgroup freezer", &h,
                        err) < 0
      || rt_handle_freeze (h, freeze, err) < 0)
    goto out;
  ret = 0;
out:
  rt_handle_free (h);
  oci_state_free (&st);
  return ret;
}

static int
cmd_pause (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  return set_frozen (g, argc, argv, true, err);
}

static int
cmd_resume (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  return set_frozen (g, argc, argv, false, err);
}

OCI_COMMAND (pause_command, "pause", "suspend every process in a container",
             "usage: sandlock-oci pause ID\n\n"
             "Freezes the container's cgroup (v1 freezer.state or v2\n"
             "cgroup.freeze); `state` then reports \"paused\".\n",
             cmd_pause)
OCI_COMMAND (resume_command, "resume", "resume a paused container",
             "usage: sandlock-oci resume ID\n", cmd_resume)
