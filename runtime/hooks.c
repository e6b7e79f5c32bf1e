/* OCI hooks: fork+exec with the state on stdin and a timeout enforced by
 * poll() on a pidfd, so no sleep and no SIGALRM juggling. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime.h"

static int
pidfd_open_ (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

static char **
nul_strv (char **v, size_t n, char *fallback)
{
  char **r = xcalloc (n + 2, sizeof *r);
  size_t i = 0;
  if (n == 0 && fallback)
    r[i++] = fallback;
  for (size_t j = 0; j < n; j++)
    r[i++] = v[j];
  return r;
}

static int
ms_left (const struct timespec *deadline)
{
  struct timespec now;
  long long ms;
  clock_gettime (CLOCK_MONOTONIC, &now);
  ms = (deadline->tv_sec - now.tv_sec) * 1000LL
       + (deadline->tv_nsec - now.tv_nsec) / 1000000;
  return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int) ms;
}

/* Writes the state to the hook's stdin while watching the hook and the
 * clock: a state larger than the pipe (annotations make it megabytes) must
 * not block on a hook that does not read, past its timeout.  Returns 0
 * when written or when the hook exited or closed stdin, -1 (ETIMEDOUT)
 * when the timeout passed first. */
static int
feed_stdin (int fd, int pfd, const char *state,
            const struct timespec *deadline)
{
  size_t len = strlen (state), off = 0;
  fcntl (fd, F_SETFL, O_NONBLOCK);
  while (off < len)
    {
      struct pollfd p[2] = { { .fd = fd, .events = POLLOUT },
                             { .fd = pfd, .events = POLLIN } };
      ssize_t w = write (fd, state + off, len - off);
      int r;
      if (w > 0)
        {
          off += (size_t) w;
          continue;
        }
      if (w < 0 && errno != EAGAIN && errno != EINTR)
        return 0;               /* EPIPE: the hook closed its stdin */
      r = poll (p, pfd >= 0 ? 2 : 1, deadline ? ms_left (deadline) : -1);
      if (r == 0)
        return -1;
      if (r > 0 && (p[1].revents & POLLIN))
        return 0;               /* the hook exited without reading it all */
    }
  return 0;
}

static int
run_one (const struct rt_hook *h, const char *kind, size_t idx,
         const char *state, struct cm_err **err)
{
  _cleanup_free_ char **argv = nul_strv (h->args, h->args_len, h->path);
  /* No env: the runtime's own, as runc and crun pass (engines rely on
   * PATH reaching their hooks). */
  _cleanup_free_ char **envp = h->env_len ? nul_strv (h->env, h->env_len,
                                                      NULL)
                                          : NULL;
  _cleanup_fd_ int pfd = -1;
  int in[2], status;
  struct timespec deadline;
  bool timed;
  pid_t pid;

  if (pipe2 (in, O_CLOEXEC) < 0)
    return cm_err_set (err, errno, "%s hook %zu: pipe", kind, idx);
  pid = fork ();
  if (pid < 0)
    {
      close (in[0]);
      close (in[1]);
      return cm_err_set (err, errno, "%s hook %zu: fork", kind, idx);
    }
  if (pid == 0)
    {
      dup2 (in[0], 0);
      execve (h->path, argv, envp ? envp : environ);
      _exit (127);
    }
  close (in[0]);
  pfd = pidfd_open_ (pid);
  timed = h->timeout_present && pfd >= 0;
  clock_gettime (CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timed && h->timeout > 0 ? h->timeout : 0;
  /* A hook that does not read its stdin must not block us: SIGPIPE is
   * ignored by the caller and EPIPE is fine. */
  {
    struct sigaction sa = { .sa_handler = SIG_IGN }, old;
    int r;
    sigaction (SIGPIPE, &sa, &old);
    r = feed_stdin (in[1], pfd, state, timed ? &deadline : NULL);
    sigaction (SIGPIPE, &old, NULL);
    close (in[1]);
    if (r < 0)
      {
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
        return cm_err_set (err, 0, "%s hook %zu (%s): timed out after %ds",
                           kind, idx, h->path, h->timeout);
      }
  }
  if (timed)
    {
      struct pollfd p = { .fd = pfd, .events = POLLIN };
      int r;
      do
        r = poll (&p, 1, ms_left (&deadline));
      while (r < 0 && errno == EINTR);
      if (r == 0)
        {
          kill (pid, SIGKILL);
          waitpid (pid, NULL, 0);
          return cm_err_set (err, 0, "%s hook %zu (%s): timed out after %ds",
                             kind, idx, h->path, h->timeout);
        }
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return cm_err_set (err, errno, "%s hook %zu: waitpid", kind, idx);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 127
      && access (h->path, X_OK) < 0)
    return cm_err_set (err, errno, "%s hook %zu: exec `%s`", kind, idx,
                       h->path);
  if (WIFSIGNALED (status))
    return cm_err_set (err, 0, "%s hook %zu (%s): killed by signal %d", kind,
                       idx, h->path, WTERMSIG (status));
  return cm_err_set (err, 0, "%s hook %zu (%s): exited with status %d", kind,
                     idx, h->path, WEXITSTATUS (status));
}

int
rt_hooks_run (const struct rt_hook_list *l, const char *kind,
              const char *state_json, struct cm_err **err)
{
  for (size_t i = 0; i < l->len; i++)
    if (run_one (&l->hooks[i], kind, i, state_json, err) < 0)
      return -1;
  return 0;
}

int
rt_hooks_run_all (const struct rt_hook_list *l, const char *kind,
                  const char *state_json, rt_hook_warn_fn warn,
                  const void *ud)
{
  int failed = 0;
  for (size_t i = 0; i < l->len; i++)
    {
      struct cm_err *e = NULL;
      if (run_one (&l->hooks[i], kind, i, state_json, &e) < 0)
        {
          warn (ud, e->msg);
          cm_err_free (&e);
          failed++;
        }
    }
  return failed;
}
