/* rt-notify: a test supervisor for the notify seam (rt_create_opts.notify),
 * driving rt_container_create / rt_container_start directly.  It traps
 * getppid in the container and answers |answer|; the container prints it
 * (busybox sh's $PPID).  It also traps mkdir/mkdirat, reads the path from
 * the caller's memory and answers 0 for "/notify-ok" (which the read-only
 * root would refuse); other paths go on to the kernel (CONTINUE).
 * Output, one fact a line, on stdout:
 *   supervisor=PID, the container's own lines, exit=N | signal=N for the
 *   init, supervisor_exit=N | supervisor_signal=N, reaped=all
 * The process is a child subreaper and waits for every child before it
 * ends, so "reaped=all" means no supervisor, watcher or container process
 * is left.
 *
 *   rt-notify BUNDLE STATEDIR MODE [ANSWER]
 *     run           create, start, wait for the container's exit
 *     kill          as run, but SIGKILL the supervisor once the container
 *                   printed its first line (the container must then die)
 *     kill-created  SIGKILL the supervisor before start
 *     inspect       as run, and once the container printed its first line,
 *                   the supervisor's fds (sup_fd=N:target), its effective
 *                   and bounding capabilities and no_new_privs from /proc
 *     delete        create, then kill the init as `delete -f` does
 *     trap-bad      notify ops trapping no native call (4096): the create
 *                   must fail
 *     init-fail     the ops' init fails: so must the create
 * With RT_NOTIFY_CGROUP set, the container gets a cgroup (its cgroupsPath),
 * removed at the end.  STATEDIR/pids names the init and the supervisor,
 * for a test's teardown when this process is killed by its timeout. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/spec.h"
#include "runtime/cgroup.h"
#include "runtime/runtime.h"

static long answer = 4242;
static FILE *out;

static int
handle_mkdir (int lfd, const struct seccomp_notif *req,
              struct seccomp_notif_resp *resp)
{
  char path[64] = "";
  uint64_t addr = req->data.args[req->data.nr == SYS_mkdirat ? 1 : 0];
  ssize_t n = rt_notify_read_mem (lfd, req, addr, path, sizeof path - 1);
  if (n < 0)
    {
      resp->error = -EFAULT;
      return 0;
    }
  path[n] = '\0';
  if (strcmp (path, "/notify-ok") == 0)
    resp->val = 0;
  else
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return 0;
}

static int
handle (void *ud, int lfd, const struct seccomp_notif *req,
        struct seccomp_notif_resp *resp)
{
  (void) ud;
  if (req->data.nr == SYS_mkdir || req->data.nr == SYS_mkdirat)
    return handle_mkdir (lfd, req, resp);
  if (req->data.nr != SYS_getppid)
    return -1;
  resp->val = answer;
  return 0;
}

static int
init_fail (void *ud, struct cm_err **err)
{
  (void) ud;
  return cm_err_set (err, 0, "test init refuses");
}

static void
destroy_cgroup (const char *path)
{
  struct rt_cgroup *cg = NULL;
  struct cm_err *err = NULL;
  if (path == NULL)
    return;
  if (rt_cgroup_open (path, &cg, &err) < 0 || rt_cgroup_destroy (cg, &err) < 0)
    fprintf (out, "error=cgroup: %s\n", err->msg);
  cm_err_free (&err);
  rt_cgroup_free (cg);
}

static int
fail (const char *what, struct cm_err *err)
{
  fprintf (out, "error=%s: %s\n", what, err && err->msg ? err->msg : "?");
  fflush (out);
  return 1;
}

static void
report (const char *who, int st)
{
  if (WIFEXITED (st))
    fprintf (out, "%sexit=%d\n", who, WEXITSTATUS (st));
  else
    fprintf (out, "%ssignal=%d\n", who, WTERMSIG (st));
  fflush (out);
}

/* What the supervisor holds: its fds, capabilities, no_new_privs. */
static void
inspect (pid_t sup)
{
  char path[64], target[256], line[256];
  snprintf (path, sizeof path, "/proc/%d/fd", (int) sup);
  for (int fd = 0; fd < 64; fd++)
    {
      snprintf (path, sizeof path, "/proc/%d/fd/%d", (int) sup, fd);
      ssize_t n = readlink (path, target, sizeof target - 1);
      if (n < 0)
        continue;
      target[n] = '\0';
      fprintf (out, "sup_fd=%d:%s\n", fd, target);
    }
  snprintf (path, sizeof path, "/proc/%d/status", (int) sup);
  FILE *f = fopen (path, "r");
  while (f && fgets (line, sizeof line, f))
    if (strncmp (line, "CapEff:", 7) == 0 || strncmp (line, "CapBnd:", 7) == 0
        || strncmp (line, "NoNewPrivs:", 11) == 0)
      fprintf (out, "sup_%s", line);
  if (f)
    fclose (f);
  fflush (out);
}

/* Copies the container's output; after the first line, kills the
 * supervisor or inspects it, then closes the container's stdin (|stdin_w|):
 * a container reading it runs until then. */
static void
relay (FILE *in, pid_t sup, const char *mode, int stdin_w)
{
  bool kill_after_first = strcmp (mode, "kill") == 0;
  char line[256];
  bool first = true;
  while (fgets (line, sizeof line, in))
    {
      fputs (line, out);
      fflush (out);
      if (first && kill_after_first)
        kill (sup, SIGKILL);
      if (first && strcmp (mode, "inspect") == 0)
        inspect (sup);
      if (first)
        close (stdin_w);
      first = false;
    }
}

/* The init's parent as the kernel sees it (/proc/PID/stat field 4). */
static long
parent_of (pid_t pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  FILE *f = fopen (path, "r");
  size_t n = f ? fread (buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose (f);
  buf[n] = '\0';
  char *e = strrchr (buf, ')');
  long ppid = -1;
  if (e == NULL || sscanf (e + 1, " %*c %ld", &ppid) != 1)
    return -1;
  return ppid;
}

/* Waits for every child; reports the supervisor's status. */
static void
reap_all (pid_t sup)
{
  int st;
  pid_t p;
  while ((p = wait (&st)) > 0 || errno == EINTR)
    if (p == sup)
      report ("supervisor_", st);
  fprintf (out, "reaped=%s\n", errno == ECHILD ? "all" : strerror (errno));
  fflush (out);
}

int
main (int argc, char **argv)
{
  struct rt_config *cfg = NULL;
  struct cm_err *err = NULL;
  struct rt_created cr = { 0 };
  char path[PATH_MAX], rootfs[PATH_MAX], fifo[PATH_MAX], status[PATH_MAX];
  int trapped[] = { SYS_getppid, SYS_mkdir, SYS_mkdirat };
  int sys_bad = 4096, pfd[2], ifd[2], st;

  if (argc < 4)
    return fprintf (stderr, "usage: rt-notify BUNDLE STATEDIR MODE [N]\n"), 2;
  const char *mode = argv[3];
  if (argc > 4)
    answer = atol (argv[4]);
  out = fdopen (dup (1), "w");
  snprintf (path, sizeof path, "%s/config.json", argv[1]);
  snprintf (fifo, sizeof fifo, "%s/exec.fifo", argv[2]);
  snprintf (status, sizeof status, "%s/start.status", argv[2]);
  snprintf (rootfs, sizeof rootfs, "%s/rootfs", argv[1]);
  if (oci_spec_load (path, &cfg, &err) < 0)
    return fail ("config", err);
  if (mkfifo (fifo, 0600) < 0 || mkfifo (status, 0600) < 0)
    return perror ("mkfifo"), 1;
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  /* The container's stdout is a pipe read here; nobody else holds it. */
  if (pipe (pfd) < 0 || dup2 (pfd[1], 1) < 0)
    return perror ("pipe"), 1;
  close (pfd[1]);
  fcntl (pfd[0], F_SETFD, FD_CLOEXEC);
  if (pipe (ifd) < 0 || dup2 (ifd[0], 0) < 0)
    return perror ("pipe"), 1;
  close (ifd[0]);
  fcntl (ifd[1], F_SETFD, FD_CLOEXEC);

  struct rt_notify_ops ops = { .syscalls = trapped, .syscalls_len = 3,
                               .handle = handle, .log_fd = 2 };
  if (strcmp (mode, "trap-bad") == 0)
    ops.syscalls = &sys_bad, ops.syscalls_len = 1;
  if (strcmp (mode, "init-fail") == 0)
    ops.init = init_fail;
  struct rt_create_opts o = {
    .config = cfg, .id = "rt-notify", .bundle = argv[1], .rootfs = rootfs,
    .exec_fifo = fifo, .start_status = status, .no_cgroup = getenv ("RT_NOTIFY_CGROUP") == NULL,
    .detach = true, .notify = &ops,
  };
  int r = rt_container_create (&o, &cr, &err);
  /* Only the container writes to the pipe now. */
  dup2 (2, 1);
  if (r < 0)
    {
      fail ("create", err);
      reap_all (0);
      return 1;
    }
  snprintf (path, sizeof path, "%s/pids", argv[2]);
  FILE *pf = fopen (path, "w");
  if (pf)
    fprintf (pf, "%d %d\n", (int) cr.pid, (int) cr.supervisor_pid), fclose (pf);
  fprintf (out, "supervisor=%d\nself=%d\ninit_parent=%ld\n",
           (int) cr.supervisor_pid, (int) getpid (), parent_of (cr.pid));
  fflush (out);
  if (strcmp (mode, "delete") == 0)
    kill (cr.pid, SIGKILL);
  else if (strcmp (mode, "kill-created") == 0)
    kill (cr.supervisor_pid, SIGKILL);
  else if (rt_container_start (fifo, status, &err) < 0)
    fail ("start", err);
  relay (fdopen (pfd[0], "r"), cr.supervisor_pid, mode, ifd[1]);
  while (waitpid (cr.pid, &st, 0) < 0 && errno == EINTR)
    ;
  report ("", st);
  reap_all (cr.supervisor_pid);
  destroy_cgroup (cr.cgroup_path);
  rt_config_free (cfg);
  return 0;
}
