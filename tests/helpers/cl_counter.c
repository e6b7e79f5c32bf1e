/* cl_counter: the process criu-lite tests checkpoint and restore.  Static.
 *
 *   cl_counter [-m MiB] [-t THREADS] [-f FILE] [-a FILE] [-j] [-c] [-V N] [-g]
 *              [-l FILE] [-L flock:FILE|ofd:FILE]
 *
 * Fills a MiB buffer with a known pattern, then loops: the counter goes up
 * and "count N" is printed every 5 ms (poll on stdin).  Commands on stdin:
 *   v  verify the whole buffer: "verify ok" or "verify bad AT"
 *   t  threads: "threads ok N" when every thread's counter moved since the
 *      last `t` and each still has its own signal mask, else "threads bad"
 *   f  write one byte to each file: "file off=N append=A size=S" per file
 *   s  raise SIGUSR1: "signal n=N alt=A" (handler runs on the altstack)
 *   j  with -j: let the extra thread finish and pthread_join it: "joined"
 *   k  with -c: SIGUSR2 to the process group (the child exits 7 on it),
 *      wait(2) for the child: "kid exited N"
 *   q  exit 0
 * -V N verifies the buffer every N counts by itself ("verify ok ...").
 * -g keeps one more page of the pattern under PROT_NONE (a guard written
 * before it was protected); every verify checks it too.
 * -l FILE holds an exclusive flock(2) on FILE (created).
 * -L KIND:FILE takes an exclusive flock(2) or OFD lock on FILE (created),
 * maps its first page shared and closes the fd: the mapping keeps the open
 * file, and so the lock, with no fd left to show it.
 * -c forks a child (in a process group of their own) that prints
 * "kid count N" every 5 ms.
 * Each thread i blocks SIGRTMIN+i only, so a mask restored to the wrong
 * thread (or not at all) shows. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16
static void say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static uint64_t *buf, *guard;
static size_t words;
static volatile uint64_t tcount[MAXT], tseen[MAXT];
static volatile int tbad[MAXT];
static int nthreads;
static int files[2] = { -1, -1 };
static volatile int nsig, on_alt, quit_joiner;
static char altstack[1 << 16];

static void
on_usr1 (int sig)
{
  char here;
  nsig++;
  on_alt = &here >= altstack && &here < altstack + sizeof altstack;
}

static void
kid_quit (int sig)
{
  _exit (7);
}

static void
kid (void)
{
  uint64_t n = 0;
  struct timespec ts = { 0, 5000000 };
  signal (SIGUSR2, kid_quit);
  for (;;)
    {
      say ("kid count %llu\n", (unsigned long long) ++n);
      nanosleep (&ts, NULL);
    }
}

static void *
joiner (void *arg)
{
  struct timespec ts = { 0, 1000000 };
  while (!quit_joiner)
    nanosleep (&ts, NULL);
  return arg;
}

static uint64_t
pattern (size_t i)
{
  return (i * 0x9E3779B97F4A7C15ull) ^ 0x5a5a5a5a;
}

static void
say (const char *fmt, ...)
{
  char line[256];
  va_list ap;
  int n;
  va_start (ap, fmt);
  n = vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  if (write (1, line, (size_t) n) < 0)
    exit (3);
}

static void *
worker (void *arg)
{
  int i = (int) (intptr_t) arg;
  sigset_t want, have;
  struct timespec ts = { 0, 1000000 };
  sigemptyset (&want);
  sigaddset (&want, SIGRTMIN + i);
  pthread_sigmask (SIG_SETMASK, &want, NULL);
  for (;;)
    {
      tcount[i]++;
      pthread_sigmask (SIG_SETMASK, NULL, &have);
      if (!sigismember (&have, SIGRTMIN + i) || sigismember (&have, SIGRTMIN + MAXT))
        tbad[i] = 1;
      nanosleep (&ts, NULL);
    }
  return NULL;
}

static int
lock_mapped (const char *arg)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int ofd = strncmp (arg, "ofd:", 4) == 0;
  int fd = open (strchr (arg, ':') + 1, O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ftruncate (fd, 4096) < 0
      || (ofd ? fcntl (fd, F_OFD_SETLK, &fl) : flock (fd, LOCK_EX)) < 0
      || mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
         == MAP_FAILED)
    return -1;
  return close (fd);
}

static void
verify (void)
{
  if (guard)
    {
      int bad = mprotect (guard, 4096, PROT_READ) < 0;
      for (size_t i = 0; !bad && i < 4096 / 8; i++)
        bad = guard[i] != pattern (i + 7);
      if (bad || mprotect (guard, 4096, PROT_NONE) < 0)
        {
          say ("verify bad guard\n");
          return;
        }
    }
  for (size_t i = 0; i < words; i++)
    if (buf[i] != pattern (i))
      {
        say ("verify bad %zu\n", i * 8);
        return;
      }
  say ("verify ok\n");
}

static void
threads (void)
{
  int good = 1;
  for (int i = 0; i < nthreads; i++)
    {
      if (tbad[i] || tcount[i] == tseen[i])
        good = 0;
      tseen[i] = tcount[i];
    }
  say ("threads %s %d\n", good ? "ok" : "bad", nthreads);
}

static void
touch_files (void)
{
  for (int i = 0; i < 2; i++)
    if (files[i] >= 0)
      {
        struct stat st;
        if (write (files[i], "+", 1) != 1 || fstat (files[i], &st) < 0)
          exit (4);
        say ("file off=%ld append=%d size=%ld\n",
             (long) lseek (files[i], 0, SEEK_CUR),
             (fcntl (files[i], F_GETFL) & O_APPEND) != 0, (long) st.st_size);
      }
}

int
main (int argc, char **argv)
{
  size_t mib = 1;
  uint64_t count = 0;
  int opt, join = 0, child = 0, stdin_eof = 0;
  unsigned long every = 0;
  sigset_t none;
  pthread_t jt;
  stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
  struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };

  while ((opt = getopt (argc, argv, "m:t:f:a:jcV:gl:L:")) != -1)
    if (opt == 'l')
      {
        int fd = open (optarg, O_RDWR | O_CREAT, 0600);
        if (fd < 0 || flock (fd, LOCK_EX) < 0)
          return 2;
      }
    else if (opt == 'L')
      {
        if (strchr (optarg, ':') == NULL || lock_mapped (optarg) < 0)
          return 2;
      }
    else if (opt == 'g')
      {
        guard = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (guard == MAP_FAILED)
          return 2;
        for (size_t i = 0; i < 4096 / 8; i++)
          guard[i] = pattern (i + 7);
        mprotect (guard, 4096, PROT_NONE);
      }
    else if (opt == 'V')
      every = strtoul (optarg, NULL, 10);
    else if (opt == 'j')
      join = 1;
    else if (opt == 'c')
      child = 1;
    else if (opt == 'm')
      mib = strtoul (optarg, NULL, 10);
    else if (opt == 't')
      nthreads = atoi (optarg) > MAXT ? MAXT : atoi (optarg);
    else if (opt == 'f' || opt == 'a')
      {
        int fd = open (optarg, O_RDWR | O_CREAT | O_TRUNC
                       | (opt == 'a' ? O_APPEND : 0), 0600);
        if (fd < 0 || write (fd, "hello", 5) != 5)
          return 2;
        files[opt == 'a'] = fd;
      }
  words = mib * (1u << 20) / 8;
  buf = malloc (words * 8 + 1);
  for (size_t i = 0; i < words; i++)
    buf[i] = pattern (i);
  sigemptyset (&none);
  sigaddset (&none, SIGRTMIN + MAXT);   /* the main thread's own mask */
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int i = 0; i < nthreads; i++)
    {
      pthread_t t;
      pthread_create (&t, NULL, worker, (void *) (intptr_t) i);
    }
  if (child)
    {
      setpgid (0, 0);
      signal (SIGUSR2, SIG_IGN);
      if (fork () == 0)
        kid ();
    }
  sigaltstack (&ss, NULL);
  sigaction (SIGUSR1, &sa, NULL);
  if (join)
    pthread_create (&jt, NULL, joiner, NULL);
  say ("ready %d\n", (int) getpid ());
  for (;;)
    {
      struct pollfd p = { stdin_eof ? -1 : 0, POLLIN, 0 };
      char c;
      ssize_t n;
      say ("count %llu\n", (unsigned long long) ++count);
      if (every && count % every == 0)
        verify ();
      if (poll (&p, 1, 5) <= 0)
        continue;
      if ((n = read (0, &c, 1)) == 0)
        stdin_eof = 1;  /* no more commands: just count */
      if (n != 1)
        continue;
      if (c == 'v')
        verify ();
      else if (c == 't')
        threads ();
      else if (c == 'f')
        touch_files ();
      else if (c == 's')
        {
          kill (getpid (), SIGUSR1);
          say ("signal n=%d alt=%d\n", nsig, on_alt);
        }
      else if (c == 'j' && join)
        {
          quit_joiner = 1;
          pthread_join (jt, NULL);
          say ("joined\n");
          join = 0;
        }
      else if (c == 'k' && child)
        {
          int st = 0;
          kill (0, SIGUSR2);
          wait (&st);
          say ("kid exited %d\n", WIFEXITED (st) ? WEXITSTATUS (st) : -1);
        }
      else if (c == 'q')
        return 0;
    }
}
