/* run: create + start, then (without -d) wait for the container, forward
 * the signals this process receives, clean up, and exit with its status
 * (128+N for signal N). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "image_run.h"
#include "lifecycle.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
                                 SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP };

static int
wait_forwarding (pid_t pid, const sigset_t *set)
{
  for (;;)
    {
      siginfo_t si;
      int status, sig = sigwaitinfo (set, &si);
      if (sig < 0)
        continue;
      if (sig == SIGCHLD)
        {
          pid_t r = waitpid (pid, &status, WNOHANG);
          if (r == pid)
            return WIFSIGNALED (status) ? 128 + WTERMSIG (status)
                                        : WEXITSTATUS (status);
          continue;
        }
      kill (pid, sig);
    }
}

static int
cmd_run (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  struct oci_create_args a = { 0 };
  struct oci_state st;
  sigset_t set, old;
  int code;
  _cleanup_free_ char *img_bundle = NULL;

  if (image_run_prepare (g, &argc, &argv, &img_bundle, err) < 0)
    return -1;
  if (oci_parse_create_flags ("run", argc, argv, &a, true, err) < 0)
    return -1;
  if (img_bundle)
    a.bundle = img_bundle;
  /* Block before the child exists so no signal is lost; the container
   * process restores the mask before execve. */
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (size_t i = 0; i < ARRAY_SIZE (forwarded); i++)
    sigaddset (&set, forwarded[i]);
  if (!a.detach)
    sigprocmask (SIG_BLOCK, &set, &old);
  if (oci_create (g, &a, &st, err) < 0)
    return -1;
  if (oci_start (g, &st, err) < 0)
    {
      struct rt_err *e2 = NULL;
      oci_container_destroy (g, &st, &e2);
      rt_err_free (&e2);
      oci_state_free (&st);
      return -1;
    }
  if (a.detach)
    {
      oci_state_free (&st);
      return 0;
    }
  /* Let state/kill/delete in while we wait. */
  flock (st.dirfd, LOCK_UN);
  code = wait_forwarding (st.pid, &set);
  sigprocmask (SIG_SETMASK, &old, NULL);
  flock (st.dirfd, LOCK_EX);
  if (faccessat (st.dirfd, "state.json", F_OK, 0) == 0)
    {
      struct rt_err *e2 = NULL;
      if (oci_container_destroy (g, &st, &e2) < 0)
        {
          oci_log_error (g, e2->msg);
          rt_err_free (&e2);
        }
    }
  oci_state_free (&st);
  if (img_bundle)
    {
      struct rt_err *e2 = NULL;
      rt_rm_rf_at (AT_FDCWD, img_bundle, &e2);
      rt_err_free (&e2);
    }
  return code;
}
OCI_COMMAND (run_command, "run", "create and start a container, wait for it",
             "usage: sandlock-oci run [-d|--detach] [-b|--bundle DIR]\n"
             "         [--pid-file F] [--console-socket S] [--preserve-fds N]\n"
             "         [--no-pivot] [--no-new-keyring] ID\n"
             "       sandlock-oci run [flags] --image REF ID [-- CMD...]\n\n"
             "Without -d, waits for the container, forwards signals to it,\n"
             "deletes it when it exits and exits with its status (128+N when\n"
             "killed by signal N).  With --image, pulls REF when needed and runs\n"
             "it from a bundle built under the state root.\n",
             cmd_run)
