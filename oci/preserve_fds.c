/* --preserve-fds N (create, run, exec): the caller passes fds 3..3+N-1.
 *
 * Checked while the flags are parsed, before the runtime opens anything:
 * a hole in that range would otherwise be filled by the runtime's own fds
 * (the flock()ed state directory first), which the container then inherits
 * -- a cwd of /proc/self/fd/N in the host's state directory
 * (CVE-2024-21626), and a lock held by the parked init that hangs every
 * later command.  With no hole, everything the runtime opens lands above
 * the range. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "lifecycle.h"

static int
check_passed (const char *cmd, int n, struct cm_err **err)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
      && (rlim_t) n + 3 > rl.rlim_cur)
    return cm_err_set (err, 0, "%s: --preserve-fds %d: fds 3..%d exceed the "
                       "open-file limit (RLIMIT_NOFILE %llu)", cmd, n, n + 2,
                       (unsigned long long) rl.rlim_cur);
  for (int fd = 3; fd < 3 + n; fd++)
    if (fcntl (fd, F_GETFD) < 0)
      return cm_err_set (err, errno == EBADF ? 0 : errno,
                         "%s: --preserve-fds %d: fd %d is not open (the "
                         "caller must pass every fd from 3 to %d)", cmd, n,
                         fd, n + 2);
  return 0;
}

int
oci_parse_preserve_fds (const char *cmd, const char *arg, int *out,
                        struct cm_err **err)
{
  char *end;
  long n;
  errno = 0;
  n = strtol (arg, &end, 10);
  if (errno || end == arg || *end || n < 0 || n > 65536)
    return cm_err_set (err, 0, "%s: --preserve-fds: expected a number from 0 "
                       "to 65536, got \"%s\"", cmd, arg);
  if (check_passed (cmd, (int) n, err) < 0)
    return -1;
  *out = (int) n;
  return 0;
}
