/* waitany: what a container's init that reaps "any child" sees.  Forks
 * one child that exits 3, then calls wait(NULL) until it fails, and
 * prints "reaped N <errno name>" — "reaped 1 ECHILD" when only its own
 * child was there to wait for.  An alarm (5 s) ends it if wait blocks on a
 * child that never exits (a process the runtime left under the init).
 * Static; copied into test root filesystems by tests/lib/common.bash. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (void)
{
  int n = 0;
  pid_t c = fork ();
  if (c == 0)
    _exit (3);
  if (c < 0)
    return perror ("fork"), 1;
  alarm (5);
  while (wait (NULL) > 0)
    n++;
  printf ("reaped %d %s\n", n, errno == ECHILD ? "ECHILD" : "other");
  return 0;
}
