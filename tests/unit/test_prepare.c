/* runtime/prepare.c: what a create opens or joins before clone is taken
 * back when the create fails.  A library caller (a test program, a
 * supervisor making several containers) stays in its own pid namespace
 * for its next child after a failed create that joined one by path.
 * Root only (exit 77 otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/runtime.h"

static bool
same_file (const char *a, const char *b)
{
  struct stat sa, sb;
  return stat (a, &sa) == 0 && stat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

static int
count_fds (void)
{
  int n = 0;
  char path[64];
  for (int fd = 0; fd < 1024; fd++)
    {
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      n += access (path, F_OK) == 0;
    }
  return n;
}

int
main (void)
{
  char *json, rootfs[] = "/tmp/test-prepare.XXXXXX";
  struct rt_config *c = NULL;
  struct rt_err *err = NULL;
  struct rt_created out = { 0 };
  pid_t holder;
  int fds_before;

  if (geteuid () != 0)
    {
      printf ("1..0 # skip needs root\n");
      return 77;
    }
  if (mkdtemp (rootfs) == NULL)
    return 1;
  /* A pid namespace to join by path: a child of its own, parked. */
  holder = (pid_t) syscall (SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
  if (holder == 0)
    {
      pause ();
      _exit (0);
    }
  json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\",\"user\":{\"uid\":0,"
      "\"gid\":0}},\"linux\":{\"namespaces\":[{\"type\":\"mount\"},"
      "{\"type\":\"pid\",\"path\":\"/proc/%d/ns/pid\"}]}}", (int) holder);
  if (oci_spec_parse (json, strlen (json), &c, &err) < 0)
    printf ("# parse: %s\n", err->msg);
  fds_before = count_fds ();
  {
    /* The exec fifo does not exist: the create fails after the pid
     * namespace was joined for the runtime's children. */
    struct rt_create_opts o = { .config = c, .id = "test-prepare",
                                .bundle = rootfs, .rootfs = rootfs,
                                .exec_fifo = "/nonexistent/exec.fifo",
                                .no_cgroup = true };
    ok (rt_container_create (&o, &out, &err) < 0 && err
            && strstr (err->msg, "open exec fifo"),
        "create fails opening the exec fifo");
    if (err)
      printf ("# %s\n", err->msg);
    rt_err_free (&err);
  }
  ok (same_file ("/proc/self/ns/pid_for_children", "/proc/self/ns/pid"),
      "after the failed create, children are born in the caller's own pid "
      "namespace again");
  ok (count_fds () == fds_before, "no fd of the failed create is left open "
      "(%d before, %d after)", fds_before, count_fds ());
  kill (holder, SIGKILL);
  waitpid (holder, NULL, 0);
  rmdir (rootfs);
  rt_config_free (c);
  free (json);
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
