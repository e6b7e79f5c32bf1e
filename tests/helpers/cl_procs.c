/* cl_procs: a process pair with threads for the process-tree tests of
 * checkpoint/restore (tests/integration/checkpoint_procs.bats).  Static.
 *
 *   cl_procs -d DIR [-t THREADS] [-p PROBE] [-s MIB]
 *
 * The parent maps one page (-s: MIB MiB, every page written with a
 * pattern) MAP_SHARED|MAP_ANONYMOUS, blocks SIGUSR2 and
 * every real-time signal, forks a child, and each of the two starts
 * THREADS-1 more threads (default 3 in all).  Every thread then reads
 * DIR/cmd every 5 ms: a line "SEQ WORD [ARG]"; each new SEQ is done once
 * by every thread (or by the one process the word names) and answered on
 * stdout, one line each:
 *   report   every thread: "T role pid ppid tid landlock=E seccomp=S
 *            capeff=C nnp=N" — pid and ppid as the thread sees them
 *            (getpid, getppid, gettid), E the result of creating PROBE
 *            (OK or EACCES: a path Landlock makes read-only), S/C/N its
 *            own /proc/thread-self/status lines
 *   pend     every thread queues SIGRTMIN+i to itself (value 1000+i,
 *            rt_tgsigqueueinfo), the parent's main thread queues SIGUSR2
 *            to its process (value 77): all blocked, so all pending
 *   unblock  every thread unblocks everything; each signal its handler
 *            took is said "S role tid signo value"
 *   write V  the child stores V in the shared page: "W child V"
 *   read     the parent: "R parent V" with the shared page's value
 *   check    the parent: "C parent ok" when the pattern past the first
 *            page is intact, else "C parent bad"
 * Output lines are whole writes (the two processes share stdout). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16

static const char *dir, *probe = "/data/probe";
static const char *role = "parent";
static volatile int *shared;
static size_t shared_len = 4096;
static int nthreads = 3;

static __thread int got_sig[64], got_val[64], ngot;

static void
say (const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  int n;
  va_start (ap, fmt);
  n = vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  if (write (1, buf, (size_t) n) < 0)
    _exit (3);
}

static void
on_sig (int sig, siginfo_t *si, void *uc)
{
  (void) uc;
  if (ngot < 64)
    {
      got_sig[ngot] = sig;
      got_val[ngot] = si->si_value.sival_int;
      ngot++;
    }
}

static void
status_line (const char *key, char *out, size_t n)
{
  char buf[4096], *p;
  int fd = open ("/proc/thread-self/status", O_RDONLY);
  ssize_t len = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  snprintf (out, n, "?");
  if (fd >= 0)
    close (fd);
  if (len <= 0)
    return;
  buf[len] = '\0';
  p = strstr (buf, key);
  if (p == NULL)
    return;
  p += strlen (key);
  while (*p == '\t' || *p == ' ')
    p++;
  snprintf (out, n, "%.*s", (int) strcspn (p, "\n"), p);
}

static void
report (void)
{
  char sc[32], cap[32], nnp[32];
  int fd = open (probe, O_WRONLY | O_CREAT, 0600);
  const char *ll = fd >= 0 ? "OK" : errno == EACCES ? "EACCES" : strerror (errno);
  if (fd >= 0)
    close (fd);
  status_line ("\nSeccomp:", sc, sizeof sc);
  status_line ("\nCapEff:", cap, sizeof cap);
  status_line ("\nNoNewPrivs:", nnp, sizeof nnp);
  say ("T %s %d %d %ld landlock=%s seccomp=%s capeff=%s nnp=%s\n", role,
       getpid (), getppid (), (long) syscall (SYS_gettid), ll, sc, cap, nnp);
}

static void
pend (int idx)
{
  siginfo_t si;
  memset (&si, 0, sizeof si);
  si.si_code = SI_QUEUE;
  si.si_pid = getpid ();
  si.si_uid = getuid ();
  si.si_signo = SIGRTMIN + idx;
  si.si_value.sival_int = 1000 + idx;
  syscall (SYS_rt_tgsigqueueinfo, getpid (), syscall (SYS_gettid),
           SIGRTMIN + idx, &si);
  if (idx == 0 && strcmp (role, "parent") == 0)
    {
      union sigval v = { .sival_int = 77 };
      sigqueue (getpid (), SIGUSR2, v);
    }
}

static void
unblock (void)
{
  sigset_t none;
  sigemptyset (&none);
  pthread_sigmask (SIG_SETMASK, &none, NULL);
  for (int i = 0; i < ngot; i++)
    say ("S %s %ld %d %d\n", role, (long) syscall (SYS_gettid),
         got_sig[i] == SIGUSR2 ? -2 : got_sig[i] - SIGRTMIN, got_val[i]);
  ngot = 0;
}

static unsigned char
pattern (size_t i)
{
  return (unsigned char) (i * 131 + i / 4096);
}

static bool
pattern_ok (void)
{
  const unsigned char *b = (const void *) shared;
  for (size_t i = 4096; i < shared_len; i++)
    if (b[i] != pattern (i))
      return false;
  return true;
}

static void
command (int idx, const char *word, long arg)
{
  bool parent = strcmp (role, "parent") == 0;
  if (strcmp (word, "report") == 0)
    report ();
  else if (strcmp (word, "pend") == 0)
    pend (idx);
  else if (strcmp (word, "unblock") == 0)
    unblock ();
  else if (strcmp (word, "write") == 0 && !parent && idx == 0)
    {
      *shared = (int) arg;
      say ("W child %d\n", *shared);
    }
  else if (strcmp (word, "read") == 0 && parent && idx == 0)
    say ("R parent %d\n", *shared);
  else if (strcmp (word, "check") == 0 && parent && idx == 0)
    say ("C parent %s\n", pattern_ok () ? "ok" : "bad");
}

static void *
loop (void *arg)
{
  int idx = (int) (long) arg;
  char path[4096];
  long seen = -1;
  snprintf (path, sizeof path, "%s/cmd", dir);
  for (;;)
    {
      char buf[128], word[32];
      long seq, a = 0;
      struct timespec ts = { 0, 5000000 };
      int fd = open (path, O_RDONLY);
      ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
      if (fd >= 0)
        close (fd);
      if (n > 0)
        {
          buf[n] = '\0';
          if (sscanf (buf, "%ld %31s %ld", &seq, word, &a) >= 2 && seq != seen)
            {
              seen = seq;
              command (idx, word, a);
            }
        }
      nanosleep (&ts, NULL);
    }
  return NULL;
}

static void
run (void)
{
  pthread_t t[MAXT];
  for (int i = 1; i < nthreads; i++)
    pthread_create (&t[i], NULL, loop, (void *) (long) i);
  loop (0);
}

int
main (int argc, char **argv)
{
  struct sigaction sa;
  sigset_t all;
  int c;
  while ((c = getopt (argc, argv, "d:t:p:s:")) != -1)
    if (c == 'd')
      dir = optarg;
    else if (c == 't')
      nthreads = atoi (optarg);
    else if (c == 'p')
      probe = optarg;
    else if (c == 's')
      shared_len = strtoul (optarg, NULL, 10) << 20;
  if (dir == NULL || nthreads < 1 || nthreads > MAXT || shared_len < 4096)
    {
      fprintf (stderr, "usage: cl_procs -d DIR [-t THREADS] [-p PROBE] "
               "[-s MIB]\n");
      return 2;
    }
  shared = mmap (NULL, shared_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (shared == MAP_FAILED)
    return 1;
  for (size_t i = 4096; i < shared_len; i++)
    ((unsigned char *) shared)[i] = pattern (i);
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sig;
  sa.sa_flags = SA_SIGINFO;
  sigaction (SIGUSR2, &sa, NULL);
  for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
    sigaction (s, &sa, NULL);
  sigemptyset (&all);
  sigaddset (&all, SIGUSR2);
  for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
    sigaddset (&all, s);
  sigprocmask (SIG_BLOCK, &all, NULL);
  if (fork () == 0)
    role = "child";
  say ("ready %s %d\n", role, getpid ());
  run ();
  return 0;
}
