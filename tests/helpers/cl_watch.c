/* cl_watch: counts the writes to a file, for tests that must see a
 * command write a cgroup file (the freezer) however briefly.  Static.
 * A write is an open-write-close: IN_CLOSE_WRITE is counted, with
 * IN_OPEN and IN_MODIFY watched too so that no two events in a row are
 * identical (inotify merges those when unread).
 *
 *   cl_watch FILE N MS   prints "ready", then "modified K" once K = N
 *                        writes were seen or MS milliseconds passed */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
main (int argc, char **argv)
{
  int fd, want, k = 0;
  long end;
  if (argc != 4)
    {
      fprintf (stderr, "usage: cl_watch FILE N MS\n");
      return 2;
    }
  want = atoi (argv[2]);
  end = now_ms () + atol (argv[3]);
  fd = inotify_init1 (IN_CLOEXEC);
  if (fd < 0 || inotify_add_watch (fd, argv[1], IN_OPEN | IN_MODIFY | IN_CLOSE_WRITE) < 0)
    {
      perror (argv[1]);
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  while (k < want && now_ms () < end)
    {
      struct pollfd p = { fd, POLLIN, 0 };
      char buf[4096];
      ssize_t n;
      if (poll (&p, 1, (int) (end - now_ms ())) <= 0)
        continue;
      n = read (fd, buf, sizeof buf);
      for (char *e = buf; n > 0 && e < buf + n;
           e += sizeof (struct inotify_event) + ((struct inotify_event *) e)->len)
        if (((struct inotify_event *) e)->mask & IN_CLOSE_WRITE)
          k++;
    }
  printf ("modified %d\n", k);
  return 0;
}
