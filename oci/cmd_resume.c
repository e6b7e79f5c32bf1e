/* resume ID: thaw a paused container. */
#include <string.h>

#include "runtime/cgroup.h"
#include "state.h"

static int
cmd_resume (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  struct oci_state st = { .dirfd = -1 };
  struct rt_cgroup *cg = NULL;
  int ret = -1;

  if (argc != 2 || argv[1][0] == '-')
    return rt_err_set (err, 0, "resume: usage: sandlock-oci resume ID");
  if (oci_state_load (g, argv[1], &st, err) < 0)
    goto out;
  /* "paused" comes from the freezer itself (oci_state_refresh), so a
   * container without a cgroup can never be paused. */
  if (strcmp (st.status, "paused") != 0)
    {
      rt_err_set (err, 0, "container not paused");
      goto out;
    }
  if (oci_state_cgroup (&st, "resume", NULL, &cg, err) < 0
      || rt_cgroup_freeze (cg, false, err) < 0)
    goto out;
  ret = 0;
out:
  rt_cgroup_free (cg);
  oci_state_free (&st);
  return ret;
}
OCI_COMMAND (resume_command, "resume", "resume a paused container",
             "usage: sandlock-oci resume ID\n", cmd_resume)
