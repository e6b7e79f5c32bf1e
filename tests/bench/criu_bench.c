/* criu_bench: checkpoint and restore time of build/helpers/cl_counter with
 * N MiB of touched memory, against a memcpy of the same size in the same
 * run (the memory-bandwidth floor).  Built and run by
 * tests/bench/checkpoint.sh against the optimized objects. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/criu.h"

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* The counter, its buffer filled; *outr is the read end of its stdout,
 * kept open until it is saved: a closed one would kill it with SIGPIPE at
 * its next "count" line (5 ms), before a checkpoint under load. */
static pid_t
spawn (const char *helper, const char *mib, int *outr)
{
  int out[2];
  char c;
  pid_t pid;
  if (pipe (out) < 0)
    exit (1);
  pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDONLY);
      dup2 (null, 0);
      dup2 (out[1], 1);
      close_range (3, ~0u, 0);
      execl (helper, "cl_counter", "-m", mib, (char *) NULL);
      _exit (127);
    }
  close (out[1]);
  /* "ready" comes once the buffer is filled */
  while (read (out[0], &c, 1) == 1 && c != '\n')
    ;
  *outr = out[0];
  return pid;
}

static double
cpu_of (const struct rusage *u)
{
  return (double) (u->ru_utime.tv_sec + u->ru_stime.tv_sec)
         + (double) (u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e6;
}

static double
self_cpu (void)
{
  struct rusage u;
  getrusage (RUSAGE_SELF, &u);
  return cpu_of (&u);
}

/* The memcpy floor: wall time, and in *cpu its CPU time (on a loaded
 * machine the wall time includes waiting for a core). */
static double
bench_memcpy (size_t n, double *cpu)
{
  char *a = malloc (n), *b = malloc (n);
  double t, c;
  memset (a, 1, n);
  memset (b, 2, n);
  c = self_cpu ();
  t = now ();
  memcpy (b, a, n);
  t = now () - t;
  *cpu = self_cpu () - c;
  if (b[n / 2] != 1)
    exit (1);
  free (a);
  free (b);
  return t;
}

int
main (int argc, char **argv)
{
  const char *helper = argc > 1 ? argv[1] : "build/helpers/cl_counter";
  printf ("| touched MiB | checkpoint s | restore s | ckpt+restore s | memcpy s | ratio "
          "| checkpoint CPU s | restore CPU s | CPU ratio (to memcpy's CPU) | image MiB |\n");
  printf ("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 2; i < argc || i == 2; i++)
    {
      const char *mib = argc > 2 ? argv[i] : "100";
      char dir[] = "/tmp/criu_bench.XXXXXX", cmd[256];
      struct cm_err *err = NULL;
      struct criu_dump_opts d = { 0 };
      int rep[2], outr;
      int32_t code = -1;
      double t0, td, tr, tm, c0, cd, cr, cm;
      struct rusage ru;
      pid_t pid, r;
      FILE *du;
      long kib = 0;

      if (mkdtemp (dir) == NULL)
        return 1;
      /* a pipe as stdout would be refused: /dev/null is a device */
      pid = spawn (helper, mib, &outr);
      d.pid = pid;
      d.image_dir = dir;
      t0 = now ();
      c0 = self_cpu ();
      if (criu_dump (&d, &err) < 0)
        {
          fprintf (stderr, "checkpoint: %s\n", err->msg);
          return 1;
        }
      td = now () - t0;
      cd = self_cpu () - c0;
      close (outr);
      waitpid (pid, NULL, 0);
      if (pipe (rep) < 0)
        return 1;
      t0 = now ();
      r = fork ();
      if (r == 0)
        {
          struct criu_restore_opts o = { .image_dir = dir, .report_fd = rep[1] };
          int null = open ("/dev/null", O_WRONLY);
          close (rep[0]);
          dup2 (null, 1);   /* the restored counter's output */
          criu_restore (&o, &err);
          fprintf (stderr, "restore: %s\n", err ? err->msg : "?");
          _exit (1);
        }
      close (rep[1]);
      if (read (rep[0], &code, 4) != 4 || code != 0)
        {
          fprintf (stderr, "restore failed (%#x)\n", (unsigned) code);
          return 1;
        }
      tr = now () - t0;
      kill (r, SIGKILL);
      wait4 (r, NULL, 0, &ru);   /* the restorer and the restored process */
      cr = cpu_of (&ru);
      tm = bench_memcpy ((size_t) atol (mib) << 20, &cm);
      snprintf (cmd, sizeof cmd, "du -sk %s", dir);
      du = popen (cmd, "r");
      if (du && fscanf (du, "%ld", &kib) != 1)
        kib = 0;
      if (du)
        pclose (du);
      printf ("| %s | %.3f | %.3f | %.3f | %.4f | %.0fx | %.3f | %.3f | %.0fx | %.1f |\n",
              mib, td, tr, td + tr, tm, (td + tr) / tm, cd, cr, (cd + cr) / cm,
              (double) kib / 1024);
      cm_rm_rf_at (AT_FDCWD, dir, &err);
      cm_err_free (&err);
    }
  return 0;
}
