/* Process identity: start times and pidfds, so a recycled pid is never
 * taken for the container's process, and signal names.  (The setup steps
 * of a container process are in process.c.) */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime.h"

/* Reads /proc/PID/stat; returns the state char and start time. */
static int
proc_stat (pid_t pid, char *state, uint64_t *start)
{
  char path[64], buf[1024];
  ssize_t n;
  int fd;
  char *p;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* comm may contain spaces and parens: the fields start after the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return -1;
  p += 2;
  *state = *p;
  /* field 3 is state; starttime is field 22: skip 19 more fields. */
  for (int i = 0; i < 19; i++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return -1;
      p++;
    }
  *start = strtoull (p, NULL, 10);
  return 0;
}

uint64_t
rt_proc_start_time (pid_t pid)
{
  char st;
  uint64_t start;
  if (pid <= 0 || proc_stat (pid, &st, &start) < 0)
    return 0;
  return start;
}

bool
rt_proc_alive (pid_t pid, uint64_t start_time)
{
  char st;
  uint64_t start;
  if (pid <= 0 || proc_stat (pid, &st, &start) < 0)
    return false;
  if (st == 'Z' || st == 'X')
    return false;
  return start_time == 0 || start == start_time;
}

int
rt_proc_signal (pid_t pid, uint64_t start_time, int sig)
{
  _cleanup_fd_ int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0 || !rt_proc_alive (pid, start_time))
    {
      errno = ESRCH;
      return -1;
    }
  return syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0) < 0 ? -1 : 0;
}

static const struct
{
  const char *name;
  int sig;
} signames[] = {
  { "HUP", SIGHUP },     { "INT", SIGINT },       { "QUIT", SIGQUIT },
  { "ILL", SIGILL },     { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },
  { "IOT", SIGIOT },     { "BUS", SIGBUS },       { "FPE", SIGFPE },
  { "KILL", SIGKILL },   { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
  { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },
  { "TERM", SIGTERM },   { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },
  { "CONT", SIGCONT },   { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },
  { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU },     { "URG", SIGURG },
  { "XCPU", SIGXCPU },   { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM },
  { "PROF", SIGPROF },   { "WINCH", SIGWINCH },   { "IO", SIGIO },
  { "POLL", SIGPOLL },   { "PWR", SIGPWR },       { "SYS", SIGSYS },
};

static int
parse_num (const char *s, long lo, long hi)
{
  char *end;
  long v;
  if (!isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  v = strtol (s, &end, 10);
  if (errno || *end || v < lo || v > hi)
    return -1;
  return (int) v;
}

int
rt_signal_parse (const char *s)
{
  if (s == NULL || *s == '\0')
    return -1;
  if (isdigit ((unsigned char) *s))
    return parse_num (s, 1, SIGRTMAX);
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < ARRAY_SIZE (signames); i++)
    if (strcasecmp (s, signames[i].name) == 0)
      return signames[i].sig;
  if (strncasecmp (s, "RTMIN", 5) == 0)
    {
      int off = s[5] == '\0' ? 0 : s[5] == '+' ? parse_num (s + 6, 0, 64) : -1;
      if (off < 0 || SIGRTMIN + off > SIGRTMAX)
        return -1;
      return SIGRTMIN + off;
    }
  if (strncasecmp (s, "RTMAX", 5) == 0)
    {
      int off = s[5] == '\0' ? 0 : s[5] == '-' ? parse_num (s + 6, 0, 64) : -1;
      if (off < 0 || SIGRTMAX - off < SIGRTMIN)
        return -1;
      return SIGRTMAX - off;
    }
  return -1;
}
