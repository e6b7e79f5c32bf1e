/* pause ID: freeze every process of the container (cgroup freezer). */
#include <string.h>

#include "runtime/cgroup.h"
#include "state.h"

static int
cmd_pause (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  struct oci_state st = { .dirfd = -1 };
  struct rt_cgroup *cg = NULL;
  int ret = -1;

  if (argc != 2 || argv[1][0] == '-')
    return rt_err_set (err, 0, "pause: usage: sandlock-oci pause ID");
  if (oci_state_load (g, argv[1], &st, err) < 0)
    goto out;
  /* runc's wording (libcontainer ErrNotRunning); "paused" is refused too. */
  if (strcmp (st.status, "running") != 0)
    {
      rt_err_set (err, 0, "container not running");
      goto out;
    }
  if (oci_state_cgroup (&st, "pause", "pausing needs the cgroup freezer",
                        &cg, err) < 0
      || rt_cgroup_freeze (cg, true, err) < 0)
    goto out;
  ret = 0;
out:
  rt_cgroup_free (cg);
  oci_state_free (&st);
  return ret;
}
OCI_COMMAND (pause_command, "pause", "suspend every process in a container",
             "usage: sandlock-oci pause ID\n\n"
             "Freezes the container's cgroup (v1 freezer.state or v2\n"
             "cgroup.freeze); `state` then reports \"paused\".\n",
             cmd_pause)
