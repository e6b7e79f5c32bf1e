/* fifoprobe: FIFO opens from inside a namespace-less container
 * (tests/integration/nsless_fifo.bats).  Prints the errno's name on a
 * failed open and exits 0 (as sysc does).  Static; copied into test root
 * filesystems by tests/lib/common.bash.
 *
 *   fifoprobe read <path> [openat2]      open O_RDONLY, print what is read
 *                                        to EOF
 *   fifoprobe write <path> <text> [openat2]  open O_WRONLY, write <text>
 *   fifoprobe try <path> r|w|rw|rn|wn    open (n: O_NONBLOCK), print OK
 *   fifoprobe hold <path> <prog> [args]  a reader of <path> (opened
 *                                        O_NONBLOCK, the flag cleared) at
 *                                        fd 3, then exec <prog>
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int
open_ (const char *path, int flags, int use2)
{
  struct open_how how = { .flags = (unsigned long long) flags };
  if (!use2)
    return open (path, flags);
  return (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static int
fail (void)
{
  const char *n = strerrorname_np (errno);
  printf ("%s\n", n ? n : "E?");
  return 0;
}

int
main (int argc, char **argv)
{
  static const struct { const char *k; int f; } modes[] = {
    { "r", O_RDONLY }, { "w", O_WRONLY }, { "rw", O_RDWR },
    { "rn", O_RDONLY | O_NONBLOCK }, { "wn", O_WRONLY | O_NONBLOCK },
  };
  char buf[4096];
  ssize_t n;
  int fd;
  if (argc >= 3 && strcmp (argv[1], "read") == 0)
    {
      if ((fd = open_ (argv[2], O_RDONLY, argc > 3)) < 0)
        return fail ();
      while ((n = read (fd, buf, sizeof buf)) > 0)
        fwrite (buf, 1, (size_t) n, stdout);
      return 0;
    }
  if (argc >= 4 && strcmp (argv[1], "write") == 0)
    {
      if ((fd = open_ (argv[2], O_WRONLY, argc > 4)) < 0)
        return fail ();
      return write (fd, argv[3], strlen (argv[3])) < 0;
    }
  if (argc >= 4 && strcmp (argv[1], "hold") == 0)
    {
      if ((fd = open (argv[2], O_RDONLY | O_NONBLOCK)) < 0)
        return fail ();
      if (dup2 (fd, 3) < 0 || fcntl (3, F_SETFL, 0) < 0)
        return fail ();
      execv (argv[3], argv + 3);
      return fail ();
    }
  if (argc == 4 && strcmp (argv[1], "try") == 0)
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
      if (strcmp (argv[3], modes[i].k) == 0)
        {
          if ((fd = open (argv[2], modes[i].f)) < 0)
            return fail ();
          printf ("OK\n");
          return 0;
        }
  fprintf (stderr, "usage: fifoprobe read|write|try ...\n");
  return 2;
}
