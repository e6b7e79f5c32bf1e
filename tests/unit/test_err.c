/* The error contract's debug assertion: a second cm_err_set over an error
 * already set aborts (these tests build with -DSANDLOCK_DEBUG), naming
 * both messages; cm_err_wrap and a set after a free do not. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "tests/unit/tap.h"

int
main (void)
{
  struct cm_err *e = NULL;
  int p[2], status = 0;
  char buf[512] = "";
  ssize_t n;
  pid_t pid;

  ok (cm_err_set (&e, 0, "first") == -1 && e && strcmp (e->msg, "first") == 0,
      "set once");
  ok (cm_err_wrap (&e, "ctx") == -1 && strcmp (e->msg, "ctx: first") == 0,
      "wrapped");
  cm_err_free (&e);
  ok (cm_err_set (&e, 0, "again") == -1 && strcmp (e->msg, "again") == 0,
      "set again after a free");
#ifndef SANDLOCK_DEBUG
  skip ("built without SANDLOCK_DEBUG: a second set replaces the first");
#else
  if (pipe (p) < 0)
    return 77;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      dup2 (p[1], 2);
      cm_err_set (&e, 0, "second");
      _exit (0);
    }
  close (p[1]);
  n = read (p[0], buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  waitpid (pid, &status, 0);
  ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT,
      "a second set aborts (status %#x)", status);
  ok (strstr (buf, "\"again\"") && strstr (buf, "\"second\""),
      "naming both: %s", buf);
#endif
  cm_err_free (&e);
  return tap_done ();
}
