/* credt: credential changes inside a namespace-less container, each
 * followed by the open it should change (tests/integration/
 * nsless_creds.bats).  Every id change is a raw system call: it changes
 * the calling thread only (glibc's wrappers would change every thread).
 * Prints one line per open ("OK" or the errno's name).  Static; copied
 * into test root filesystems by tests/lib/common.bash.
 *
 *   credt userns <file>               drops to uid 1000; opens; unshare,
 *                                     clone and clone3 into a new user
 *                                     namespace, each followed by its
 *                                     result and (where it worked) an open
 *   credt open <file> [w]             open O_RDONLY (w: O_WRONLY)
 *   credt thread-setresuid <file>     main opens; a thread opens, drops
 *                                     itself to uid 1000, opens again;
 *                                     then main (still root) opens
 *   credt setgroups <file> <gid>      open; groups {gid}; open; none; open
 *   credt setfsuid <file> <uid>       open; fsuid uid; open; fsuid 0; open
 *   credt capset <file>               open w; CAP_DAC_OVERRIDE out of the
 *                                     effective set; open w; back; open w
 *   credt bset-exec <file> <self>     open w; CAP_DAC_OVERRIDE out of the
 *                                     bounding set; open w; exec
 *                                     <self> open <file> w
 *   credt thread-exec <file> <self>   main opens w; a thread drops
 *                                     CAP_DAC_OVERRIDE from its bounding set
 *                                     and execs <self> open <file> w while
 *                                     main keeps opening
 *   credt storm <file> <n>            n threads then n processes, one at a
 *                                     time; each opens, the odd ones drop
 *                                     to uid 1000 and open again: prints
 *                                     the count of wrong answers
 *                                     ("wrong=K")
 *   credt tloop <file> <n>            a thread (not the leader) stats
 *                                     <file> n times: "OK" or the errno
 *   credt umask-thread <dir>          main creates <dir>/a, a thread sets
 *                                     umask 077 (shared: CLONE_FS), main
 *                                     creates <dir>/b: their modes, octal
 *   credt reuse <file> <rounds>       each round: a thread drops to uid
 *                                     1000, opens, writes its tid to
 *                                     /tmp/credt.tid and exits; after
 *                                     /tmp/credt.go appears (the test
 *                                     moves ns_last_pid), a root thread
 *                                     opens: "tid=T was=A open=R"
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *file;
static int wflag = O_RDONLY;
static char *self;

static const char *
try_open (void)
{
  int fd = open (file, wflag | O_CLOEXEC);
  if (fd < 0)
    {
      const char *n = strerrorname_np (errno);
      return n ? n : "E?";
    }
  close (fd);
  return "OK";
}

static void
show (void)
{
  printf ("%s\n", try_open ());
  fflush (stdout);
}

static int
drop_uid (void)
{
  return (int) syscall (SYS_setresuid, 1000, 1000, 1000);
}

static void
errno_line (const char *what, long r)
{
  printf ("%s: %s\n", what, r < 0 ? strerrorname_np (errno) : "OK");
  fflush (stdout);
}

/* Drops to uid/gid 1000 with no group and no capability, opens, then
 * tries each way into a user namespace of its own (where it would hold
 * every capability) and opens from there. */
static int
userns (void)
{
  int st;
  syscall (SYS_setgroups, 0, NULL);
  if (syscall (SYS_setresgid, 1000, 1000, 1000) < 0 || drop_uid () < 0)
    return printf ("drop: %s\n", strerrorname_np (errno)), 1;
  show ();
  long r = syscall (SYS_unshare, CLONE_NEWUSER);
  errno_line ("unshare", r);
  show ();
  pid_t p = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL,
                             NULL, 0);
  if (p == 0)
    {
      show ();
      _exit (0);
    }
  errno_line ("clone", p);
  if (p > 0)
    waitpid (p, &st, 0);
  struct clone_args ca = { .flags = CLONE_NEWUSER,
                           .exit_signal = SIGCHLD };
  p = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
  if (p == 0)
    {
      show ();
      _exit (0);
    }
  errno_line ("clone3", p);
  if (p > 0)
    waitpid (p, &st, 0);
  return 0;
}

static void *
setresuid_thread (void *arg)
{
  show ();
  if (drop_uid () < 0)
    printf ("setresuid: %s\n", strerrorname_np (errno));
  show ();
  return NULL;
}

static int
dac_override (bool on)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  if (syscall (SYS_capget, &h, d) < 0)
    return -1;
  if (on)
    d[0].effective |= 1u << CAP_DAC_OVERRIDE;
  else
    d[0].effective &= ~(1u << CAP_DAC_OVERRIDE);
  return (int) syscall (SYS_capset, &h, d);
}

static void
run_self (void)
{
  char *argv[] = { self, "open", (char *) file, "w", NULL };
  execv (self, argv);
  printf ("exec: %s\n", strerrorname_np (errno));
  fflush (stdout);
  _exit (1);
}

static void *
exec_thread (void *arg)
{
  if (prctl (PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) < 0)
    printf ("bset: %s\n", strerrorname_np (errno));
  run_self ();
  return NULL;
}

/* 1 when |odd| (dropped to 1000) and the open worked, or root and it
 * failed. */
static int
wrong (bool odd)
{
  int bad = strcmp (try_open (), "OK") != 0;
  if (odd && drop_uid () < 0)
    return 1;
  return bad + (odd != (strcmp (try_open (), "OK") != 0));
}

static void *
storm_thread (void *arg)
{
  return (void *) (intptr_t) wrong (arg != NULL);
}

static int
storm (int n)
{
  int bad = 0;
  for (int i = 0; i < n; i++)
    {
      pthread_t t;
      void *r;
      if (pthread_create (&t, NULL, storm_thread, (void *) (intptr_t) (i & 1)) != 0)
        return printf ("pthread_create failed at %d\n", i), 1;
      pthread_join (t, &r);
      bad += (int) (intptr_t) r;
    }
  for (int i = 0; i < n; i++)
    {
      int st;
      pid_t p = fork ();
      if (p == 0)
        _exit (wrong (i & 1));
      if (p < 0 || waitpid (p, &st, 0) < 0)
        return printf ("fork failed at %d\n", i), 1;
      bad += !WIFEXITED (st) || WEXITSTATUS (st) != 0;
    }
  printf ("wrong=%d\n", bad);
  return 0;
}

static void *
tloop_thread (void *arg)
{
  struct stat st;
  for (int i = (int) (intptr_t) arg; i > 0; i--)
    if (stat (file, &st) < 0)
      return (void *) strerrorname_np (errno);
  return (void *) "OK";
}

static void *
umask_thread (void *arg)
{
  syscall (SYS_umask, 077);
  return NULL;
}

static int
umask_files (const char *dir)
{
  char a[4096], b[4096];
  struct stat sa, sb;
  pthread_t t;
  snprintf (a, sizeof a, "%s/a", dir);
  snprintf (b, sizeof b, "%s/b", dir);
  close (open (a, O_CREAT | O_WRONLY | O_CLOEXEC, 0666));
  pthread_create (&t, NULL, umask_thread, NULL);
  pthread_join (t, NULL);
  close (open (b, O_CREAT | O_WRONLY | O_CLOEXEC, 0666));
  if (stat (a, &sa) < 0 || stat (b, &sb) < 0)
    return printf ("stat: %s\n", strerrorname_np (errno)), 0;
  printf ("%o %o\n", sa.st_mode & 07777, sb.st_mode & 07777);
  return 0;
}

static void *
reuse_dropped (void *arg)
{
  FILE *f;
  const char *r;
  drop_uid ();
  r = try_open ();
  *(const char **) arg = r;
  f = fopen ("/tmp/credt.tid.new", "w");
  if (!f)
    return NULL;
  fprintf (f, "%ld\n", (long) syscall (SYS_gettid));
  fclose (f);
  rename ("/tmp/credt.tid.new", "/tmp/credt.tid");
  return NULL;
}

static void *
reuse_root (void *arg)
{
  printf ("tid=%ld was=%ld open=%s\n", (long) syscall (SYS_gettid),
          *(long *) arg, try_open ());
  fflush (stdout);
  return NULL;
}

static int
reuse (int rounds)
{
  for (int i = 0; i < rounds; i++)
    {
      pthread_t t;
      const char *dropped = "?";
      long was = 0;
      struct stat st;
      FILE *f;
      pthread_create (&t, NULL, reuse_dropped, &dropped);
      pthread_join (t, NULL);
      if ((f = fopen ("/tmp/credt.tid", "r")))
        {
          if (fscanf (f, "%ld", &was) != 1)
            was = 0;
          fclose (f);
        }
      printf ("dropped=%s\n", dropped);
      for (int w = 0; w < 1000 && stat ("/tmp/credt.go", &st) < 0; w++)
        usleep (10000);
      unlink ("/tmp/credt.go");
      unlink ("/tmp/credt.tid");
      pthread_create (&t, NULL, reuse_root, &was);
      pthread_join (t, NULL);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    return fprintf (stderr, "usage: credt CMD FILE [ARG]\n"), 2;
  file = argv[2];
  const char *cmd = argv[1], *arg = argc > 3 ? argv[3] : "";
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (strcmp (cmd, "open") == 0)
    {
      if (strcmp (arg, "w") == 0)
        wflag = O_WRONLY;
      show ();
      return 0;
    }
  if (strcmp (cmd, "thread-setresuid") == 0)
    {
      pthread_t t;
      show ();
      pthread_create (&t, NULL, setresuid_thread, NULL);
      pthread_join (t, NULL);
      show ();
      return 0;
    }
  if (strcmp (cmd, "setgroups") == 0)
    {
      gid_t g = (gid_t) atoi (arg);
      show ();
      syscall (SYS_setgroups, 1, &g);
      show ();
      syscall (SYS_setgroups, 0, NULL);
      show ();
      return 0;
    }
  if (strcmp (cmd, "setfsuid") == 0)
    {
      show ();
      syscall (SYS_setfsuid, atoi (arg));
      show ();
      syscall (SYS_setfsuid, 0);
      show ();
      return 0;
    }
  wflag = O_WRONLY;
  self = (char *) arg;
  if (strcmp (cmd, "capset") == 0)
    {
      show ();
      dac_override (false);
      show ();
      dac_override (true);
      show ();
      return 0;
    }
  if (strcmp (cmd, "bset-exec") == 0)
    {
      show ();
      if (prctl (PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) < 0)
        printf ("bset: %s\n", strerrorname_np (errno));
      show ();
      run_self ();
    }
  if (strcmp (cmd, "thread-exec") == 0)
    {
      pthread_t t;
      show ();
      pthread_create (&t, NULL, exec_thread, NULL);
      for (;;)                  /* killed by the exec */
        (void) try_open ();
    }
  wflag = O_RDONLY;
  if (strcmp (cmd, "storm") == 0)
    return storm (atoi (arg));
  if (strcmp (cmd, "tloop") == 0)
    {
      pthread_t t;
      void *r;
      pthread_create (&t, NULL, tloop_thread, (void *) (intptr_t) atoi (arg));
      pthread_join (t, &r);
      printf ("%s\n", (const char *) r);
      return 0;
    }
  if (strcmp (cmd, "umask-thread") == 0)
    return umask_files (file);
  if (strcmp (cmd, "reuse") == 0)
    return reuse (atoi (arg));
  if (strcmp (cmd, "userns") == 0)
    return userns ();
  return fprintf (stderr, "credt: unknown command %s\n", cmd), 2;
}
