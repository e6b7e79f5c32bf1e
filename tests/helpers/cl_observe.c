/* cl_observe: a process that reports what it can see of itself, so a test
 * can tell whether something was done to it (checkpoint --leave-running
 * must leave no trace: checkpoint_engines.bats).  Static.
 *
 *   cl_observe [-n N]
 *
 * Sets up state a checkpoint touches: a second thread with a signal mask
 * of its own, a handler with SA_ONSTACK/SA_RESTART and an altstack, an
 * ignored signal, files open at offsets (one O_APPEND), a cwd, a umask.
 * Then prints "count N" every 5 ms, with no gap or repeat unless something
 * outside interferes, and every N counts (default 40) an observation:
 *   obs K: <line>      one per observed item
 *   obs K end <hash>   FNV-1a of the lines
 * Observed: /proc/self/status (signal sets, threads, umask, seccomp, tracer),
 * every thread's blocked and pending sets, /proc/self/stat ids and
 * scheduling, every signal action, the altstack, the cwd, every fd with its
 * target, offset (but stdout's and stderr's, which this output moves) and
 * flags, children of every thread, /proc/self/maps,
 * /proc/self/limits, itimers, personality and prctl state.  What moves by
 * itself (times, context switches, the interval timer's countdown, the
 * scheduler's state letter) is left out. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static uint64_t hash;
static unsigned long seq;
static char altstack[1 << 16];
static volatile int nsig;

static void
out (const char *s, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (1, s, n);
      if (w <= 0)
        exit (3);
      s += w;
      n -= (size_t) w;
    }
}

static void __attribute__ ((format (printf, 1, 2)))
obs (const char *fmt, ...)
{
  char line[4096];
  int n = snprintf (line, sizeof line, "obs %lu: ", seq);
  va_list ap;
  va_start (ap, fmt);
  n += vsnprintf (line + n, sizeof line - (size_t) n - 1, fmt, ap);
  va_end (ap);
  if (n > (int) sizeof line - 2)
    n = (int) sizeof line - 2;
  line[n++] = '\n';
  for (int i = 0; i < n; i++)
    hash = (hash ^ (unsigned char) line[i]) * 0x100000001b3ull;
  out (line, (size_t) n);
}

/* Every line of |path| that starts with one of |keys| (NULL: every line). */
static void
lines (const char *path, const char *const *keys)
{
  char buf[65536];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  char *save = NULL;
  if (fd >= 0)
    close (fd);
  if (n < 0)
    {
      obs ("%s: unreadable", path);
      return;
    }
  buf[n] = '\0';
  for (char *l = strtok_r (buf, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    for (int k = 0; !keys || keys[k]; k++)
      if (!keys || strncmp (l, keys[k], strlen (keys[k])) == 0)
        {
          obs ("%s: %s", path, l);
          break;
        }
}

static void
stat_ids (void)
{
  char buf[4096], *p;
  int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  long f[52] = { 0 };
  int i = 3;
  if (fd >= 0)
    close (fd);
  buf[n > 0 ? n : 0] = '\0';
  p = strrchr (buf, ')');
  for (p = p ? strchr (p + 2, ' ') : NULL; p && i < 51; p = strchr (p + 1, ' '))
    f[++i] = strtol (p + 1, NULL, 10);
  /* ppid pgrp session tty_nr tpgid; priority nice num_threads;
   * exit_signal rt_priority policy */
  obs ("stat: %ld %ld %ld %ld %ld; %ld %ld %ld; %ld %ld %ld", f[4], f[5], f[6],
       f[7], f[8], f[18], f[19], f[20], f[38], f[40], f[41]);
}

static void
per_dir (const char *dir, void (*fn) (const char *name))
{
  DIR *d = opendir (dir);
  struct dirent *e;
  char *names[256];
  int n = 0;
  while (d && (e = readdir (d)) && n < 256)
    if (e->d_name[0] != '.')
      names[n++] = strdup (e->d_name);
  if (d)
    closedir (d);
  /* sorted: readdir order is not the kernel's promise */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (atoi (names[j]) < atoi (names[i]))
        {
          char *t = names[i];
          names[i] = names[j];
          names[j] = t;
        }
  for (int i = 0; i < n; i++)
    {
      fn (names[i]);
      free (names[i]);
    }
}

static void
one_task (const char *tid)
{
  static const char *const keys[] = { "SigPnd", "SigBlk", NULL };
  char path[128];
  snprintf (path, sizeof path, "/proc/self/task/%s/status", tid);
  lines (path, keys);
  snprintf (path, sizeof path, "/proc/self/task/%s/children", tid);
  lines (path, NULL);
  obs ("task %s", tid);
}

static void
one_fd (const char *fd)
{
  static const char *const keys[] = { "pos", "flags", "lock", NULL };
  /* stdout and stderr move as this writes (a log file's offset) */
  bool mine = strcmp (fd, "1") == 0 || strcmp (fd, "2") == 0;
  char path[128], link[512];
  ssize_t n;
  snprintf (path, sizeof path, "/proc/self/fd/%s", fd);
  n = readlink (path, link, sizeof link - 1);
  if (n < 0)
    return;  /* the listing's own fd, closed since */
  link[n] = '\0';
  obs ("fd %s -> %s", fd, link);
  snprintf (path, sizeof path, "/proc/self/fdinfo/%s", fd);
  lines (path, mine ? keys + 1 : keys);
}

static void
observe (void)
{
  static const char *const status[] = {
    "Umask", "TracerPid", "Threads", "SigPnd", "ShdPnd", "SigBlk", "SigIgn",
    "SigCgt", "NoNewPrivs", "Seccomp", "Seccomp_filters", "CapEff", NULL
  };
  char cwd[4096];
  stack_t ss;
  struct itimerval it;

  hash = 0xcbf29ce484222325ull;
  seq++;
  lines ("/proc/self/status", status);
  stat_ids ();
  per_dir ("/proc/self/task", one_task);
  for (int s = 1; s < 65; s++)
    {
      struct sigaction sa;
      unsigned long long mask;
      if (s == SIGKILL || s == SIGSTOP || sigaction (s, NULL, &sa) < 0)
        continue;
      memcpy (&mask, &sa.sa_mask, sizeof mask);
      if (sa.sa_handler != SIG_DFL)
        obs ("sigaction %d: %p %#x %016llx", s, (void *) sa.sa_handler,
             (unsigned) sa.sa_flags, mask);
    }
  sigaltstack (NULL, &ss);
  obs ("altstack %p %zu %d", ss.ss_sp, ss.ss_size, ss.ss_flags);
  obs ("cwd %s", getcwd (cwd, sizeof cwd) ? cwd : "?");
  per_dir ("/proc/self/fd", one_fd);
  lines ("/proc/self/maps", NULL);
  lines ("/proc/self/limits", NULL);
  for (int w = 0; w < 3; w++)
    if (getitimer (w, &it) == 0)
      obs ("itimer %d: interval %ld.%06ld armed %d", w, (long) it.it_interval.tv_sec,
           (long) it.it_interval.tv_usec, it.it_value.tv_sec || it.it_value.tv_usec);
  obs ("personality %#x dumpable %d nnp %d subreaper %ld pdeathsig %ld slack %d",
       personality (0xffffffff), prctl (PR_GET_DUMPABLE),
       prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
       ({ int v = 0; prctl (PR_GET_CHILD_SUBREAPER, &v); (long) v; }),
       ({ int v = 0; prctl (PR_GET_PDEATHSIG, &v); (long) v; }),
       prctl (PR_GET_TIMERSLACK));
  {
    char line[64];
    int n = snprintf (line, sizeof line, "obs %lu end %016llx\n", seq,
                      (unsigned long long) hash);
    out (line, (size_t) n);
  }
}

static void
on_usr1 (int sig)
{
  nsig++;
}

static void *
worker (void *arg)
{
  sigset_t m;
  struct timespec ts = { 0, 2000000 };
  sigemptyset (&m);
  sigaddset (&m, SIGRTMIN + 3);
  sigaddset (&m, SIGUSR2);
  pthread_sigmask (SIG_SETMASK, &m, NULL);
  for (;;)
    nanosleep (&ts, NULL);
  return arg;
}

int
main (int argc, char **argv)
{
  unsigned long every = 40, count = 0;
  stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
  struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK | SA_RESTART };
  struct timespec ts = { 0, 5000000 };
  sigset_t m;
  pthread_t t;
  int a, b;

  if (argc == 3 && strcmp (argv[1], "-n") == 0)
    every = strtoul (argv[2], NULL, 10);
  umask (027);
  if (chdir ("/dev/shm") < 0)
    return 2;
  a = open ("obs-data", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  b = open ("obs-log", O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (a < 0 || b < 0 || write (a, "0123456789", 10) != 10
      || lseek (a, 3, SEEK_SET) != 3 || write (b, "log\n", 4) != 4)
    return 2;
  sigaltstack (&ss, NULL);
  sigemptyset (&sa.sa_mask);
  sigaddset (&sa.sa_mask, SIGUSR2);
  sigaction (SIGUSR1, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&m);
  sigaddset (&m, SIGRTMIN + 1);
  sigprocmask (SIG_SETMASK, &m, NULL);
  pthread_create (&t, NULL, worker, NULL);
  for (;;)
    {
      char line[64];
      int n = snprintf (line, sizeof line, "count %lu\n", ++count);
      out (line, (size_t) n);
      if (count % every == 0)
        observe ();
      nanosleep (&ts, NULL);
    }
}
