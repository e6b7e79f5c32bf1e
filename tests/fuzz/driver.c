/* Plain driver for the fuzz targets: a main() that feeds each file named on
 * the command line (a directory: each regular file in it) through
 * LLVMFuzzerTestOneInput once.  Built with gcc and ASan+UBSan next to the
 * libFuzzer binaries (Makefile: build/fuzz-seeds/NAME), so the seeds and
 * every regression input run even where clang's libFuzzer is missing.
 * Exit 0 when every input went through; a sanitizer report or an abort()
 * in a target's invariant check ends the process non-zero, and so does an
 * input that takes longer than FUZZ_INPUT_SECONDS (10): a parser that
 * is slow on some input is a denial of service (libFuzzer's -timeout). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *current;
static unsigned budget = 10;

static void
on_alarm (int sig)
{
  static const char msg[] = "fuzz driver: ERROR: timeout, input took longer "
                            "than FUZZ_INPUT_SECONDS: ";
  (void) sig;
  (void) !write (2, msg, sizeof msg - 1);
  (void) !write (2, current, strlen (current));
  (void) !write (2, "\n", 1);
  _exit (70);
}

static int
run_file (const char *path)
{
  _cleanup_free_ uint8_t *buf = NULL;
  FILE *f = fopen (path, "rb");
  size_t cap = 4096, n = 0, r;
  if (f == NULL)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  buf = xmalloc (cap);
  while ((r = fread (buf + n, 1, cap - n, f)) > 0)
    if ((n += r) == cap)
      buf = xrealloc (buf, cap *= 2);
  fclose (f);
  /* A copy of exactly |n| bytes, so ASan sees reads past the input. */
  _cleanup_free_ uint8_t *exact = xmalloc (n ? n : 1);
  memcpy (exact, buf, n);
  current = path;
  alarm (budget);
  LLVMFuzzerTestOneInput (exact, n);
  alarm (0);
  return 0;
}

static int
run_dir (const char *dir)
{
  struct dirent **ents;
  int n = scandir (dir, &ents, NULL, alphasort), rc = 0;
  if (n < 0)
    {
      fprintf (stderr, "%s: %s\n", dir, strerror (errno));
      return -1;
    }
  for (int i = 0; i < n; i++)
    {
      struct stat st;
      _cleanup_free_ char *p = xasprintf ("%s/%s", dir, ents[i]->d_name);
      if (stat (p, &st) == 0 && S_ISREG (st.st_mode) && run_file (p) < 0)
        rc = -1;
      free (ents[i]);
    }
  free (ents);
  return rc;
}

int
main (int argc, char **argv)
{
  int rc = 0;
  const char *b = getenv ("FUZZ_INPUT_SECONDS");
  if (b && atoi (b) > 0)
    budget = (unsigned) atoi (b);
  signal (SIGALRM, on_alarm);
  for (int i = 1; i < argc; i++)
    {
      struct stat st;
      if (stat (argv[i], &st) < 0)
        {
          fprintf (stderr, "%s: %s\n", argv[i], strerror (errno));
          rc = 1;
        }
      else if (S_ISDIR (st.st_mode) ? run_dir (argv[i]) < 0
                                    : run_file (argv[i]) < 0)
        rc = 1;
    }
  if (argc < 2)
    fprintf (stderr, "usage: %s FILE|DIR...\n", argv[0]);
  return argc < 2 ? 2 : rc;
}
