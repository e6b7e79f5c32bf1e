/* Foreground waiting shared by run and exec: the signals this process
 * receives go to the container process; SIGCHLD ends the wait with its
 * status (128+N for signal N).  sigwaitinfo, no polling. */
#include <signal.h>
#include <sys/wait.h>

#include "common/util.h"
#include "lifecycle.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
                                 SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP };

int
oci_wait_forwarding (pid_t pid, const sigset_t *set)
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

void
oci_block_signals (sigset_t *set, sigset_t *old)
{
  sigemptyset (set);
  sigaddset (set, SIGCHLD);
  for (size_t i = 0; i < ARRAY_SIZE (forwarded); i++)
    sigaddset (set, forwarded[i]);
  sigprocmask (SIG_BLOCK, set, old);
}
