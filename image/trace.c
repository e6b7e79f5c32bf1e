/* Phase timestamps for profiling a pull (SANDLOCK_IMAGE_TRACE=1). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "image/priv.h"

static int enabled = -1;
static struct timespec t0;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
init (void)
{
  const char *e = getenv ("SANDLOCK_IMAGE_TRACE");
  enabled = e && *e && strcmp (e, "0") != 0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
}

void
img_trace (const char *what)
{
  struct timespec t;
  pthread_once (&once, init);
  if (!enabled)
    return;
  clock_gettime (CLOCK_MONOTONIC, &t);
  fprintf (stderr, "sandlock-oci: trace +%.2f ms [%ld] %s\n",
           (double) (t.tv_sec - t0.tv_sec) * 1e3 + (double) (t.tv_nsec - t0.tv_nsec) / 1e6,
           (long) syscall (SYS_gettid), what);
}
