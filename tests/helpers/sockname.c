/* The names a unix socket reports (tests/integration/nsless_proc.bats):
 *   sockname PATH         bind a listening socket at PATH, connect to it;
 *                         print "sock <getsockname>", "peer <getpeername
 *                         of the client>", "acc <getsockname of the
 *                         accepted socket>", then "unix <path>" for
 *                         each line of /proc/net/unix naming PATH's
 *                         last name
 *   sockname loop N       N getsockname calls on an unnamed socket (cost) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *
name_of (int fd, int peer)
{
  static struct sockaddr_un a;
  socklen_t len = sizeof a;
  memset (&a, 0, sizeof a);
  if ((peer ? getpeername (fd, (struct sockaddr *) &a, &len)
            : getsockname (fd, (struct sockaddr *) &a, &len)) < 0)
    return "ERR";
  return len > sizeof (sa_family_t) ? a.sun_path : "(unnamed)";
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "loop") == 0)
    {
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      for (long i = atol (argv[2]); i > 0; i--)
        name_of (s, 0);
      return 0;
    }
  if (argc != 2)
    return 2;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  strncpy (a.sun_path, argv[1], sizeof a.sun_path - 1);
  int l = socket (AF_UNIX, SOCK_STREAM, 0), c = socket (AF_UNIX, SOCK_STREAM, 0);
  if (bind (l, (struct sockaddr *) &a, sizeof a) < 0 || listen (l, 1) < 0
      || connect (c, (struct sockaddr *) &a, sizeof a) < 0)
    {
      perror ("sockname");
      return 1;
    }
  int s = accept (l, NULL, NULL);
  printf ("sock %s\n", name_of (l, 0));
  printf ("peer %s\n", name_of (c, 1));
  printf ("acc %s\n", name_of (s, 0));
  const char *last = strrchr (argv[1], '/');
  char line[4096];
  FILE *f = fopen ("/proc/net/unix", "r");
  while (f && fgets (line, sizeof line, f))
    {
      char *p = strrchr (line, ' ');
      if (p && strstr (p, last ? last + 1 : argv[1]))
        printf ("unix %s", p + 1);
    }
  return 0;
}
