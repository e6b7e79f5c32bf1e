/* The fd numbers an exec in the view hands its files over at, and the
 * names in the exec directory that lead to them (runtime/vroot-exec.c).
 *
 * The kernel refuses an fd at or above the caller's soft RLIMIT_NOFILE
 * (EBADF), and shells and daemons lower it (`ulimit -n 256`, which sets
 * the hard limit too).  Under the usual 1024 or more the numbers are the
 * fixed VR_EXEC_FD, VR_INTERP_FD, VR_SCRIPT_FD (1023, 1022, 1021), and
 * NAME -> /proc/self/fd/1023 in the exec directory.  Under a lower limit
 * they are the highest numbers below it that the caller has no fd at
 * (read from its /proc/<pid>/fd, on exec only), and the binary's link is
 * NAME in a subdirectory named for its number, two bytes no program name
 * is made of (0x80 | the number's high, low six bits): "XX/NAME" ->
 * /proc/self/fd/N.  That relative path is still resolved in the exec
 * directory (the caller's kernel cwd), needs no more room in the caller's
 * string than an absolute path's directory part of three bytes or more
 * ("/bin/"), and keeps the last name, which argv[0] — when it is the same
 * buffer — and a script interpreter's argv[0] keep too (busybox
 * dispatches on it). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vroot-sup.h"

/* The caller's soft RLIMIT_NOFILE: prlimit, or its /proc/<pid>/limits
 * where another uid's is not readable by prlimit. */
static long
soft_nofile (pid_t pid)
{
  struct rlimit rl;
  char path[64], buf[4096], *p;
  if (prlimit (pid, RLIMIT_NOFILE, NULL, &rl) == 0)
    return rl.rlim_cur > 1L << 20 ? 1L << 20 : (long) rl.rlim_cur;
  snprintf (path, sizeof path, "/proc/%d/limits", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return -ESRCH;
  buf[n] = '\0';
  if ((p = strstr (buf, "Max open files")) == NULL)
    return -EIO;
  p += strlen ("Max open files");
  while (*p == ' ')
    p++;
  return strncmp (p, "unlimited", 9) == 0 ? 1L << 20 : strtol (p, NULL, 10);
}

int
vr_exec_fds (struct vr_call *c, struct vr_exec_fds *x)
{
  char path[64];
  int *slot[3] = { &x->exec, &x->interp, &x->script };
  long lim = soft_nofile (c->tid);
  size_t k = 0;
  *x = (struct vr_exec_fds) { VR_EXEC_FD, VR_INTERP_FD, VR_SCRIPT_FD };
  if (lim < 0)
    return (int) lim;
  if (lim > VR_EXEC_FD)
    return 0;
  bool was = vr_cred_out ();    /* its fd table: a ptrace-class read */
  for (long n = lim - 1; n > 2 && k < 3; n--)
    {
      snprintf (path, sizeof path, "/proc/%d/fd/%ld", (int) c->tid, n);
      if (faccessat (AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0
          && errno == ENOENT)
        *slot[k++] = (int) n;
    }
  vr_cred_back (was);
  return k == 3 ? 0 : -EMFILE;
}

int
vr_exec_link (struct vr_call *c, const char *name, int num,
              char rel[NAME_MAX + 4])
{
  char target[32], dir[3] = { (char) (0x80 | num >> 6),
                              (char) (0x80 | (num & 63)), 0 };
  int r = 0, e = 0, d;
  snprintf (target, sizeof target, "/proc/self/fd/%d", num);
  if (num == VR_EXEC_FD)
    snprintf (rel, NAME_MAX + 4, "%s", name);
  else
    snprintf (rel, NAME_MAX + 4, "%s/%s", dir, name);
  bool was = vr_cred_out ();    /* the supervisor's directory */
  if (num == VR_EXEC_FD)
    d = c->s->exec_dir;
  else
    {
      /* Searchable by every uid, as the exec directory is. */
      if (mkdirat (c->s->exec_dir, dir, 0711) == 0)
        fchmodat (c->s->exec_dir, dir, 0711, 0);
      d = openat (c->s->exec_dir, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW
                  | O_CLOEXEC);
    }
  if (d < 0)
    r = -1, e = errno;
  else if (symlinkat (target, d, name) < 0 && errno != EEXIST)
    r = -1, e = errno;
  if (d >= 0 && d != c->s->exec_dir)
    close (d);
  vr_cred_back (was);
  return r < 0 ? -e : 0;
}
