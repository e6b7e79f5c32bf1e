/* The namespace-less exec's checks: which child of the init is the exec
 * server (vr_xs_is_server: exit signal 0 in /proc/<pid>/stat, whatever
 * the name says), and what a process of the container can still give an
 * exec'd one (rt_caps_fit, rt_caps_fit_user, rt_proc_fit_rlimits), each
 * refusal naming its field.  The capability checks run in a child that
 * first narrows its own sets, as a container's process has them. */
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/caps.h"
#include "runtime/internal.h"
#include "runtime/vroot-xs.h"
#include "tests/unit/tap.h"

#define BIT(c) (1ULL << (c))

/* A child named |name| that waits for SIGKILL; |exit_signal| 0 makes it
 * a clone child, as the exec server is. */
static pid_t
child (int exit_signal, const char *name)
{
  int p[2];
  char c;
  if (pipe (p) < 0)
    return -1;
  pid_t pid = (pid_t) syscall (SYS_clone, exit_signal, 0, 0, 0, 0);
  if (pid == 0)
    {
      prctl (PR_SET_NAME, name);
      close (p[0]);
      close (p[1]);
      for (;;)
        pause ();
    }
  close (p[1]);
  /* EOF once the child has named itself and closed its end */
  while (read (p[0], &c, 1) > 0)
    ;
  close (p[0]);
  return pid;
}

static void
test_is_server (void)
{
  /* a name that reads like stat fields must not shift the count */
  pid_t s = child (0, "x) 0 0 (y");
  pid_t f = child (SIGCHLD, "x) 0 0 (y");
  ok (s > 0 && vr_xs_is_server (s), "a clone child (exit signal 0) is "
      "taken for the exec server");
  ok (f > 0 && !vr_xs_is_server (f), "a fork child is not");
  ok (!vr_xs_is_server (getpid ()), "nor this process");
  kill (s, SIGKILL);
  kill (f, SIGKILL);
  waitpid (s, NULL, __WALL);
  waitpid (f, NULL, 0);
  ok (!vr_xs_is_server (s), "nor a pid that is gone");
}

/* Runs |fn| in a child, numbering on from here; how many checks it made
 * (+100 when one failed) comes back as its exit status. */
static void
in_child (void (*fn) (void))
{
  int before = tap_n, failed = tap_failed;
  fflush (stdout);
  pid_t c = fork ();
  if (c == 0)
    {
      fn ();
      fflush (stdout);
      _exit ((tap_failed > failed ? 100 : 0) + tap_n - before);
    }
  int st = 0;
  waitpid (c, &st, 0);
  int n = WIFEXITED (st) ? WEXITSTATUS (st) : 0;
  if (n >= 100)
    {
      tap_failed++;
      n -= 100;
    }
  tap_n += n;
}

static bool
refused (struct rt_caps_plan *p, uint32_t uid, const char *want)
{
  struct cm_err *err = NULL;
  bool r = rt_caps_fit (p, uid, &err) < 0 && strstr (err->msg, want);
  if (err && !r)
    printf ("#   got: %s\n", err->msg);
  cm_err_free (&err);
  rt_caps_free (p);
  return r;
}

/* As a root container's process with CAP_KILL and CAP_CHOWN only, in
 * its bounding and permitted sets. */
static void
narrowed (void)
{
  uint64_t mine = BIT (CAP_KILL) | BIT (CAP_CHOWN);
  struct cm_err *err = NULL;
  for (int c = 0; c <= 63; c++)
    if (!(mine & BIT (c)))
      prctl (PR_CAPBSET_DROP, c, 0, 0, 0);
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2] = { { (uint32_t) mine, (uint32_t) mine, 0 } };
  if (syscall (SYS_capset, &h, d) < 0)
    {
      ok (0, "capset");
      return;
    }
  ok (refused (rt_caps_plan_new (mine | BIT (CAP_SYS_ADMIN), mine, mine, 0, 0,
                                 false), 0,
               "process.capabilities.bounding: CAP_SYS_ADMIN is not in the "
               "container's bounding set"),
      "a capability outside the bounding set is refused, named");
  ok (refused (rt_caps_plan_new (BIT (CAP_KILL), BIT (CAP_KILL),
                                 BIT (CAP_KILL), 0, 0, false), 0,
               "process.capabilities.bounding: CAP_CHOWN would be dropped, "
               "which needs CAP_SETPCAP"),
      "a smaller bounding set without CAP_SETPCAP is refused");
  ok (refused (rt_caps_plan_new (mine, mine, mine, BIT (CAP_SYS_ADMIN), 0,
                                 false), 0,
               "process.capabilities.inheritable: CAP_SYS_ADMIN"),
      "an inheritable capability the process cannot give is refused");
  struct rt_caps_plan *p = rt_caps_plan_new (mine, BIT (CAP_KILL), mine, 0, 0,
                                             false);
  ok (rt_caps_fit (p, 0, &err) == 0, "the container's own sets, a smaller "
      "effective set, fit");
  rt_caps_free (p);
  struct rt_user other = { .uid = 1000, .gid = 0 };
  ok (rt_caps_fit_user (&other, false, &err) < 0
          && strstr (err->msg, "process.user.uid: 1000, but the container "
                     "runs as 0 without CAP_SETUID"),
      "another uid without CAP_SETUID is refused, named");
  cm_err_free (&err);
  struct rt_user gids = { .additional_gids = (uint32_t[]){ 5 },
                          .additional_gids_len = 1 };
  ok (rt_caps_fit_user (&gids, false, &err) < 0
          && strstr (err->msg, "process.user.additionalGids"),
      "other groups without CAP_SETGID are refused, named");
  cm_err_free (&err);
}

static void
test_rlimits (void)
{
  struct rlimit cur;
  struct cm_err *err = NULL;
  getrlimit (RLIMIT_NOFILE, &cur);
  if (rt_caps_effective_has (CAP_SYS_RESOURCE) || cur.rlim_max == RLIM_INFINITY)
    {
      skip ("CAP_SYS_RESOURCE held or no hard RLIMIT_NOFILE: nothing to refuse");
      return;
    }
  struct rt_rlimit_plan rl[2] = {
    { RLIMIT_CORE, 0, 0, "RLIMIT_CORE" },
    { RLIMIT_NOFILE, cur.rlim_max, cur.rlim_max + 1, "RLIMIT_NOFILE" },
  };
  ok (rt_proc_fit_rlimits (rl, 1, &err) == 0, "a lowered limit fits");
  ok (rt_proc_fit_rlimits (rl, 2, &err) < 0
          && strstr (err->msg, "process.rlimits[1]: RLIMIT_NOFILE hard"),
      "a hard limit above this process's is refused, named by index");
  cm_err_free (&err);
  is_str (rt_proc_rlimit_name (RLIMIT_NOFILE), "RLIMIT_NOFILE",
          "a resource's name");
  ok (rt_proc_rlimit_name (999) == NULL, "no name for an unknown resource");
}

int
main (void)
{
  test_is_server ();
  test_rlimits ();
  if (geteuid () == 0 && rt_caps_effective_has (CAP_SETPCAP))
    in_child (narrowed);
  else
    skip ("needs root with CAP_SETPCAP to narrow a child's sets");
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
