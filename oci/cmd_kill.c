/* kill [-a] ID [SIGNAL] */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/runtime.h"
#include "state.h"

static int
signal_container (struct oci_state *st, int sig, bool all,
                  struct cm_err **err)
{
  struct rt_handle *h = NULL;
  struct cm_err *e = NULL;
  int r;
  /* One process needs no cgroup: do not fail on one that cannot open. */
  if (rt_handle_open (st->pid, st->start_time, all ? st->cgroup_path : NULL,
                      &h, err) < 0)
    return -1;
  /* Stopped (frozen) tasks get SIGKILL anyway; other signals wait. */
  r = rt_handle_kill (h, sig, all, &e);
  rt_handle_free (h);
  if (r == 0)
    return 0;
  if (all && st->cgroup_path)
    {
      *err = cm_steal_ptr (&e);
      return -1;
    }
  r = e->errno_;
  cm_err_free (&e);
  if (r == ESRCH)
    return cm_err_set (err, 0, "kill \"%s\": container not running", st->id);
  return cm_err_set (err, r, "kill container \"%s\"", st->id);
}

static int
cmd_kill (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[] = { { "all", no_argument, 0, 'a' },
                                        { 0, 0, 0, 0 } };
  struct oci_state st = { .dirfd = -1 };
  bool all = false;
  int c, sig = SIGTERM, ret = -1;

  while ((c = getopt_long (argc, argv, "+a", opts, NULL)) != -1)
    {
      if (c != 'a')
        return cm_err_set (err, 0, "kill: usage: sandlock-oci kill [-a] ID "
                           "[SIGNAL]");
      all = true;
    }
  if (optind >= argc || argc - optind > 2)
    return cm_err_set (err, 0, "kill: usage: sandlock-oci kill [-a] ID "
                       "[SIGNAL]");
  if (argc - optind == 2 && (sig = rt_signal_parse (argv[optind + 1])) < 0)
    return cm_err_set (err, 0, "kill: invalid signal \"%s\"",
                       argv[optind + 1]);
  if (oci_state_load (g, argv[optind], &st, err) < 0)
    goto out;
  /* runc's words: containerd's shim reads "container not running" as an
   * exited task (checkKillError), anything else as a failed kill */
  if (st.status == OCI_STOPPED)
    {
      cm_err_set (err, 0, "kill \"%s\": container not running", st.id);
      goto out;
    }
  ret = signal_container (&st, sig, all, err);
out:
  oci_state_free (&st);
  return ret < 0 ? -1 : 0;
}
OCI_COMMAND (kill_command, "kill", "send a signal to a container",
             "usage: sandlock-oci kill [-a|--all] ID [SIGNAL]\n\n"
             "SIGNAL is a name (KILL, SIGKILL, RTMIN+1) or a number; default\n"
             "TERM.  --all signals every process in the container's cgroup.\n",
             cmd_kill)
