/* Foreground waiting shared by run and exec: the signals this process
 * receives go to the container process; SIGCHLD ends the wait with its
 * status (128+N for signal N).  sigwaitinfo, no polling. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

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

int
oci_wait_remote (pid_t pid, int status_fd, const sigset_t *set)
{
  _cleanup_fd_ int sfd = signalfd (-1, set, SFD_CLOEXEC);
  struct pollfd pf[2] = { { .fd = status_fd, .events = POLLIN },
                          { .fd = sfd, .events = POLLIN } };
  if (sfd < 0)
    return rt_exec_vroot_status (status_fd);
  for (;;)
    {
      if (poll (pf, 2, -1) < 0)
        continue;
      if (pf[0].revents)
        return rt_exec_vroot_status (status_fd);
      struct signalfd_siginfo si;
      if (pf[1].revents && read (sfd, &si, sizeof si) == sizeof si
          && si.ssi_signo != SIGCHLD)
        kill (pid, (int) si.ssi_signo);
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

static void
copy_winsize (int from, int to)
{
  struct winsize ws;
  if (ioctl (from, TIOCGWINSZ, &ws) == 0)
    ioctl (to, TIOCSWINSZ, &ws);
}

/* Moves what is readable on |from| to |to|; false on EOF or error. */
static bool
pump (int from, int to)
{
  char buf[8192];
  ssize_t n = read (from, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  return cm_write_all (to, buf, (size_t) n) >= 0;
}

int
oci_relay_wait (pid_t pid, int master, const sigset_t *set)
{
  struct termios orig, raw;
  bool is_tty = isatty (0) && tcgetattr (0, &orig) == 0;
  int sfd = signalfd (-1, set, SFD_CLOEXEC), code = -1;
  struct pollfd pf[3] = { { .fd = 0, .events = POLLIN },
                          { .fd = master, .events = POLLIN },
                          { .fd = sfd, .events = POLLIN } };
  if (sfd < 0)
    return oci_wait_forwarding (pid, set);
  if (is_tty)
    {
      raw = orig;
      cfmakeraw (&raw);
      tcsetattr (0, TCSANOW, &raw);
      copy_winsize (0, master);
    }
  while (code < 0)
    {
      if (poll (pf, 3, -1) < 0)
        continue;
      if (pf[0].revents && !pump (0, master))
        pf[0].fd = -1;          /* stdin closed: stop reading it */
      if (pf[1].revents && !pump (master, 1))
        pf[1].fd = -1;          /* every slave closed */
      if (pf[2].revents)
        {
          struct signalfd_siginfo si;
          int status;
          if (read (sfd, &si, sizeof si) != sizeof si)
            continue;
          if (si.ssi_signo == SIGWINCH && is_tty)
            copy_winsize (0, master);
          else if (si.ssi_signo != SIGCHLD)
            kill (pid, (int) si.ssi_signo);
          else if (waitpid (pid, &status, WNOHANG) == pid)
            code = WIFSIGNALED (status) ? 128 + WTERMSIG (status)
                                        : WEXITSTATUS (status);
        }
    }
  /* What the container wrote just before exiting. */
  fcntl (master, F_SETFL, fcntl (master, F_GETFL) | O_NONBLOCK);
  while (pf[1].fd >= 0 && pump (master, 1))
    {
      struct pollfd q = { .fd = master, .events = POLLIN };
      if (poll (&q, 1, 0) <= 0)
        break;
    }
  if (is_tty)
    tcsetattr (0, TCSANOW, &orig);
  close (sfd);
  return code;
}
