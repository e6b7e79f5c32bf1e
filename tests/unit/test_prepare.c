/* runtime/prepare.c: what a create opens or joins before clone is taken
 * back when the create fails.  A library caller (a test program, a
 * supervisor making several containers) stays in its own pid namespace
 * for its next child after a failed create that joined one by path.
 * The planner alone opens, joins and connects nothing (test_pure_plan).
 * Root only (exit 77 otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/internal.h"
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

/* The planner alone: a config that joins a pid namespace by path and
 * whose seccomp profile notifies a listening listenerPath.  Planning opens
 * no fd, joins nothing and connects to nobody; the prepare stage does, and
 * its undo takes it back. */
static void
test_pure_plan (pid_t holder, const char *dir)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  char *json;
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  struct rt_plan p;
  struct rt_prepared pp = RT_PREPARED_INIT;
  int ls = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int fds, conn;

  snprintf (sa.sun_path, sizeof sa.sun_path, "%s/listener.sock", dir);
  if (ls < 0 || bind (ls, (struct sockaddr *) &sa, sizeof sa) < 0
      || listen (ls, 4) < 0)
    printf ("# listener: %s\n", strerror (errno));
  json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\",\"user\":{\"uid\":0,"
      "\"gid\":0}},\"linux\":{\"namespaces\":[{\"type\":\"mount\"},"
      "{\"type\":\"pid\",\"path\":\"/proc/%d/ns/pid\"}],\"seccomp\":{"
      "\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"%s\","
      "\"syscalls\":[{\"names\":[\"getppid\"],\"action\":"
      "\"SCMP_ACT_NOTIFY\"}]}}}", (int) holder, sa.sun_path);
  if (oci_spec_parse (json, strlen (json), &c, &err) < 0)
    printf ("# parse: %s\n", err->msg);
  struct rt_create_opts o = { .config = c, .id = "test-plan", .bundle = dir,
                              .rootfs = dir, .exec_fifo = "/nonexistent" };
  fds = count_fds ();
  ok (rt_plan_new (&o, &p, &err) == 0, "plan: accepted");
  ok (count_fds () == fds, "plan: no fd opened (%d before, %d after)", fds,
      count_fds ());
  ok (same_file ("/proc/self/ns/pid_for_children", "/proc/self/ns/pid"),
      "plan: no pid namespace joined");
  conn = accept (ls, NULL, NULL);
  ok (conn < 0 && errno == EAGAIN, "plan: listenerPath not connected");
  ok (rt_prepare (&p, &pp, &err) < 0 && strstr (err->msg, "exec fifo"),
      "prepare: fails at the exec fifo");
  cm_err_free (&err);
  conn = accept (ls, NULL, NULL);
  ok (conn >= 0, "prepare: listenerPath connected before that");
  ok (!same_file ("/proc/self/ns/pid_for_children", "/proc/self/ns/pid"),
      "prepare: the pid namespace joined for children");
  rt_prepare_undo (&p, &pp);
  ok (same_file ("/proc/self/ns/pid_for_children", "/proc/self/ns/pid")
          && count_fds () == fds + (conn >= 0),
      "prepare_undo: own pid namespace, no fd left (but the test's own)");
  if (conn >= 0)
    close (conn);
  close (ls);
  unlink (sa.sun_path);
  rt_plan_free (&p);
  rt_config_free (c);
  free (json);
}

int
main (void)
{
  char *json, rootfs[] = "/tmp/test-prepare.XXXXXX";
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
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
    cm_err_free (&err);
  }
  ok (same_file ("/proc/self/ns/pid_for_children", "/proc/self/ns/pid"),
      "after the failed create, children are born in the caller's own pid "
      "namespace again");
  ok (count_fds () == fds_before, "no fd of the failed create is left open "
      "(%d before, %d after)", fds_before, count_fds ());
  test_pure_plan (holder, rootfs);
  kill (holder, SIGKILL);
  waitpid (holder, NULL, 0);
  rmdir (rootfs);
  rt_config_free (c);
  free (json);
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
