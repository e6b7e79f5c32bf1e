/* run: create + start, then (without -d) wait for the container, forward
 * the signals this process receives, clean up, and exit with its status
 * (128+N for signal N). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/util.h"
#include "cow_branch.h"
#include "image_run.h"
#include "lifecycle.h"

static int
cmd_run (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct oci_create_args a = { 0 };
  struct oci_state st;
  sigset_t set, old;
  int code, console[2] = { -1, -1 };
  _cleanup_fd_ int master = -1, img_lock = -1;
  _cleanup_free_ char *img_tmp = NULL;
  _cleanup_free_ char **img_argv = NULL;
  int r = image_run_prepare (g, &argc, &argv, &img_tmp, &img_lock, err);

  if (r < 0)
    return -1;
  /* The array is ours, its strings argv's.  The analyzer does not model
   * the cleanup attribute that reads it, hence the NOLINT. */
  if (r > 0)
    img_argv = argv; // NOLINT(clang-analyzer-deadcode.DeadStores): read by _cleanup_free_
  if (oci_parse_create_flags ("run", argc, argv, &a, true, err) < 0)
    {
      image_run_discard (img_tmp);
      return -1;
    }
  /* From here the bundle is oci_create's, then the container's: it goes
   * wherever the container goes (oci_delete). */
  a.image_bundle_tmp = img_tmp;
  /* Block before the child exists so no signal is lost; the container
   * process restores the mask before execve. */
  if (!a.detach)
    oci_block_signals (&set, &old);
  /* A terminal container run in the foreground without --console-socket:
   * we are the console (runc does the same). */
  if (!a.detach && a.console_socket == NULL
      && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, console) == 0)
    {
      a.console_fd = console[1];
      a.console_fd_set = true;
    }
  if (oci_create (g, &a, &st, err) < 0)
    goto fail;
  if (a.console_fd_set)
    {
      close (console[1]);
      console[1] = -1;
      /* The pty master, if the container has a terminal: sent during
       * create, so already queued (no blocking). */
      master = cm_recv_fd (console[0], NULL, NULL, MSG_DONTWAIT);
      /* Before `start`: the program may ask for its size at once. */
      if (master >= 0 && isatty (0))
        {
          struct winsize ws;
          if (ioctl (0, TIOCGWINSZ, &ws) == 0)
            ioctl (master, TIOCSWINSZ, &ws);
        }
    }
  if (oci_start (g, &st, err) < 0)
    {
      struct cm_err *e2 = NULL;
      oci_delete (g, &st, &e2);
      cm_err_free (&e2);
      oci_cow_decide (g, st.id, 1);     /* never ran: an error */
      oci_state_free (&st);
      goto fail;
    }
  if (a.detach)
    {
      oci_state_free (&st);
      return 0;
    }
  /* Let state/kill/delete in while we wait. */
  flock (st.dirfd, LOCK_UN);
  code = master >= 0 ? oci_relay_wait (st.pid, master, &set)
                     : oci_wait_forwarding (st.pid, &set);
  sigprocmask (SIG_SETMASK, &old, NULL);
  flock (st.dirfd, LOCK_EX);
  /* --keep (crun's): the stopped container stays for `delete`. */
  if (!a.keep && faccessat (st.dirfd, "state.json", F_OK, 0) == 0)
    {
      struct cm_err *e2 = NULL;
      if (oci_delete (g, &st, &e2) < 0)
        {
          oci_log_error (g, e2->msg);
          cm_err_free (&e2);
        }
    }
  /* The container is gone (its processes with its mount namespace): the
   * exit code picks on_exit or on_error.  --keep: delete decides. */
  if (a.keep)
    oci_cow_record_exit (g, st.id, code);
  else
    oci_cow_decide (g, st.id, code);
  oci_state_free (&st);
  if (console[0] >= 0)
    close (console[0]);
  return code;
fail:
  if (!a.detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
  for (int i = 0; i < 2; i++)
    if (console[i] >= 0)
      close (console[i]);
  return -1;
}
OCI_COMMAND (run_command, "run", "create and start a container, wait for it",
             "usage: sandlock-oci run [-d|--detach] [-b|--bundle DIR]\n"
             "         [--pid-file F] [--console-socket S] [--preserve-fds N]\n"
             "         [--no-pivot] [--no-new-keyring] [--keep]\n"
             "         [--cow-on-exit A] [--cow-on-error A]\n"
             "         [--config FILE] ID\n"
             "       sandlock-oci run [flags] --image REF ID [-- CMD...]\n\n"
             "Without -d, waits for the container, forwards signals to it,\n"
             "deletes it when it exits (unless --keep: it stays, stopped, for\n"
             "`delete`) and exits with its status (128+N when killed by\n"
             "signal N).  --config FILE is used instead of BUNDLE/config.json.\n"
             "--cow-on-exit/--cow-on-error (commit|abort|keep|defer) decide\n"
             "the container's `cow` mounts after exit 0 / a failure, over the\n"
             "run.oci.sandlock.cow.* annotations (docs/cow.md).  With --image, pulls REF when needed and runs\n"
             "it from a bundle built under the state root, ROOT/image-bundles/ID,\n"
             "which is deleted with the container; --cache-dir DIR,\n"
             "--allow-devices, --max-unpacked-size SIZE, --timeout and\n"
             "--stall-timeout apply to it as to `pull` (see `help pull`).\n",
             cmd_run)
