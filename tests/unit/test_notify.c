/* runtime/notify-filter.c: which trap lists are refused (and how), and what
 * the built filter does once loaded: a trapped call with no supervisor left
 * fails with ENOSYS (closed), an untrapped one runs. */
#include <errno.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/notify.h"
#include "runtime/runtime.h"
#include "tap.h"

static int
handle (void *ud, int lfd, const struct seccomp_notif *req,
        struct seccomp_notif_resp *resp)
{
  return 0;
}

/* The error text of building a filter for |nr|[0..n), or NULL. */
static char *
refusal (const int *nr, size_t n)
{
  struct rt_notify_ops ops = { .syscalls = nr, .syscalls_len = n,
                               .handle = handle, .log_fd = -1 };
  struct sock_filter *f = NULL;
  struct cm_err *err = NULL;
  size_t len = 0;
  char *msg = NULL;
  if (rt_notify_filter (&ops, &f, &len, &err) < 0)
    msg = xstrdup (err->msg);
  cm_err_free (&err);
  free (f);
  return msg;
}

static void
test_refused (void)
{
  int many[251], one = SYS_getppid, neg = -1, sm[] = { SYS_getpid,
                                                       SYS_sendmsg };
  for (size_t i = 0; i < ARRAY_SIZE (many); i++)
    many[i] = 300 + (int) i;
  char *m;

  m = refusal (&one, 0);
  ok (m && strstr (m, "0 system calls to trap"), "no syscall is refused: %s",
      m);
  free (m);
  m = refusal (many, 251);
  ok (m && strstr (m, "251 system calls"), "251 are refused: %s", m);
  free (m);
  m = refusal (many, 250);
  ok (m == NULL, "250 are taken");
  free (m);
  m = refusal (&neg, 1);
  ok (m && strstr (m, "syscalls[0]: -1"), "a negative number: %s", m);
  free (m);
  m = refusal (sm, 2);
  ok (m == NULL, "sendmsg may be trapped (the listener is handed over "
      "with write and read)");
  free (m);
}

/* In a child: load the filter trapping |nr| (getppid among them), drop
 * the listener. */
static int
child_without_listener (const int *nr, size_t n)
{
  struct rt_notify_ops ops = { .syscalls = nr, .syscalls_len = n,
                               .handle = handle, .log_fd = -1 };
  struct sock_filter *f = NULL;
  struct cm_err *err = NULL;
  size_t len;
  if (rt_notify_filter (&ops, &f, &len, &err) < 0)
    return 10;
  struct sock_fprog prog = { .len = (unsigned short) len, .filter = f };
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  long fd = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (fd < 0)
    return 11;
  close ((int) fd);
  errno = 0;
  long r = syscall (SYS_getppid);
  if (r != -1 || errno != ENOSYS)
    return 12;
  if (syscall (SYS_getpid) <= 0)
    return 13;
  return 0;
}

static void
test_loaded (const int *nr, size_t n)
{
  int st;
  pid_t p = fork ();
  if (p == 0)
    _exit (child_without_listener (nr, n));
  waitpid (p, &st, 0);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "loaded, %zu trapped: a trapped call without a listener fails with "
      "ENOSYS, an untrapped one runs (child status %d)", n, WIFEXITED (st)
      ? WEXITSTATUS (st) : -WTERMSIG (st));
}

/* Builds the filter of |ops| and installs it (no listener) in this
 * process: 0, or 10/11 when either fails. */
static int
install (const struct rt_notify_ops *ops)
{
  struct sock_filter *f = NULL;
  struct cm_err *err = NULL;
  size_t len;
  if (rt_notify_filter (ops, &f, &len, &err) < 0)
    return 10;
  struct sock_fprog prog = { .len = (unsigned short) len, .filter = f };
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? 11 : 0;
}

/* |ops| is refused with a message naming |field|. */
static void
refused_naming (const struct rt_notify_ops *ops, const char *field,
                const char *what)
{
  struct sock_filter *f = NULL;
  struct cm_err *err = NULL;
  size_t len;
  ok (rt_notify_filter (ops, &f, &len, &err) < 0 && err
      && strstr (err->msg, field), "%s is refused: %s", what,
      err ? err->msg : "(taken)");
  cm_err_free (&err);
  free (f);
}

/* |fn| in a child exits 0. */
static void
child_ok (int (*fn) (void), const char *what)
{
  int st;
  pid_t p = fork ();
  if (p == 0)
    _exit (fn ());
  waitpid (p, &st, 0);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0, "%s (child status %d)", what,
      WIFEXITED (st) ? WEXITSTATUS (st) : -WTERMSIG (st));
}

/* In a child: getppid trapped, unshare with CLONE_NEWUSER and every
 * getpid denied; each one's answer in turn. */
static int
child_with_deny (void)
{
  static const struct rt_notify_deny deny[] = {
    { SYS_unshare, CLONE_NEWUSER, EPERM }, { SYS_getpid, 0, EACCES },
  };
  int one = SYS_getppid, r;
  struct rt_notify_ops ops = { .syscalls = &one, .syscalls_len = 1,
                               .deny = deny, .deny_len = 2,
                               .handle = handle, .log_fd = -1 };
  if ((r = install (&ops)) != 0)
    return r;
  errno = 0;
  if (syscall (SYS_unshare, CLONE_NEWUSER | CLONE_FS) != -1 || errno != EPERM)
    return 12;
  if (syscall (SYS_unshare, CLONE_FS) != 0)
    return 13;                  /* no CLONE_NEWUSER bit: through */
  if (syscall (SYS_getpid) != -1 || errno != EACCES)
    return 14;
  if (syscall (SYS_gettid) <= 0)
    return 15;
  return 0;
}

static void
test_deny (void)
{
  static const struct rt_notify_deny bad = { SYS_getpid, 0, 0 };
  int one = SYS_getppid;
  struct rt_notify_ops ops = { .syscalls = &one, .syscalls_len = 1,
                               .deny = &bad, .deny_len = 1,
                               .handle = handle, .log_fd = -1 };
  refused_naming (&ops, "deny[0]", "a deny entry without an errno");
  child_ok (child_with_deny, "loaded: a denied call fails with its errno, "
            "by its first argument's bits or always; the rest runs");
}

/* In a child: getpriority denied unless its second argument (who) is 0;
 * prlimit64 denied unless its first (pid) is 0. */
static int
child_with_deny_ne (void)
{
  static const struct rt_notify_deny_ne ne[] = {
    { SYS_getpriority, 1, 0, EACCES }, { SYS_prlimit64, 0, 0, EPERM },
  };
  int one = SYS_getppid, r;
  struct rt_notify_ops ops = { .syscalls = &one, .syscalls_len = 1,
                               .deny_ne = ne, .deny_ne_len = 2,
                               .handle = handle, .log_fd = -1 };
  struct rlimit rl;
  pid_t self = getpid ();
  if ((r = install (&ops)) != 0)
    return r;
  errno = 0;
  if (syscall (SYS_getpriority, 0, 0) < 0)
    return 12;
  if (syscall (SYS_getpriority, 0, self) != -1 || errno != EACCES)
    return 13;
  if (syscall (SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0)
    return 14;
  if (syscall (SYS_prlimit64, self, RLIMIT_NOFILE, NULL, &rl) != -1
      || errno != EPERM)
    return 15;
  return 0;
}

/* In a child: getpriority trapped (errno 0) unless its second argument
 * is 0: with no listener a trapped call fails with ENOSYS. */
static int
child_with_trap_ne (void)
{
  static const struct rt_notify_deny_ne ne[] = {
    { SYS_setpriority, 0, 0, EPERM }, { SYS_getpriority, 1, 0, 0 },
  };
  int one = SYS_getppid, r;
  struct rt_notify_ops ops = { .syscalls = &one, .syscalls_len = 1,
                               .deny_ne = ne, .deny_ne_len = 2,
                               .handle = handle, .log_fd = -1 };
  if ((r = install (&ops)) != 0)
    return r;
  if (syscall (SYS_getpriority, 0, 0) <= 0)
    return 12;
  errno = 0;
  if (syscall (SYS_getpriority, 0, getpid ()) != -1 || errno != ENOSYS)
    return 13;
  return 0;
}

static void
test_deny_ne (void)
{
  static const struct rt_notify_deny_ne bad = { SYS_getpid, 6, 0, EPERM };
  int one = SYS_getppid;
  struct rt_notify_ops ops = { .syscalls = &one, .syscalls_len = 1,
                               .deny_ne = &bad, .deny_ne_len = 1,
                               .handle = handle, .log_fd = -1 };
  refused_naming (&ops, "deny_ne[0]", "a deny_ne entry on argument 6");
  child_ok (child_with_deny_ne, "loaded: a call whose argument is not the "
            "value fails with its errno, with the value it runs");
  child_ok (child_with_trap_ne, "loaded: a deny_ne entry with errno 0 "
            "traps the call to the supervisor, with the value it runs");
}

int
main (void)
{
  test_refused ();
  /* The longest list, getppid last: the 8-bit jumps still land. */
  int one = SYS_getppid, many[250];
  for (size_t i = 0; i < 249; i++)
    many[i] = 300 + (int) i;
  many[249] = SYS_getppid;
  if (rt_kfeat (RT_KF_SECCOMP)->seccomp_notify)
    {
      test_loaded (&one, 1);
      test_loaded (many, 250);
      test_deny ();
      test_deny_ne ();
    }
  else
    skip ("the kernel has no seccomp user notification");
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
