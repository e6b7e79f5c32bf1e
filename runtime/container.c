/* Creating the container process (docs/architecture.md "Process model").
 *
 * Parent (the `create` process)            Child (the container init)
 * validate config -> plan                   .
 * cgroup created; clone3 into it  --------> waits for GO
 * uid/gid maps, oom_score_adj               .
 * GO + cgroup path + state JSON ---------->  setns, mounts, devices...
 * attach to the v1 hierarchies              (in parallel)
 * CGROUP_DONE ---------------------------->  (awaited before the first cgroup
 *                                            mount): unshare cgroup ns
 *                     <--------- HOOKS       (only if prestart/createRuntime)
 * prestart, createRuntime hooks              .
 * HOOKS_DONE ----------------------------->  createContainer hooks, pivot_root,
 *                                            masked/ro paths, sysctl, hostname,
 *                                            rlimits, tty, Landlock, user, caps
 *                     <--------- READY       parks: read(exec fifo)
 * writes pid file, exits                     `start` writes the fifo ->
 *                                            startContainer hooks, seccomp, execve
 *
 * Any child failure is sent as {kind, errno, text} and the child exits; the
 * parent kills and reaps it and removes the cgroup, so a failed create
 * leaves nothing behind.  Nothing here sleeps or polls.
 *
 * The stages, one file each: plan (runtime/plan.c: pure) -> prepare
 * (runtime/prepare.c: opens fds, joins pid/time namespaces; undone on
 * failure) -> parent (runtime/parent.c) and child (runtime/child.c: a
 * table of steps) -> payload (runtime/payload.c). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/util.h"
#include "internal.h"
#include "notify.h"
#include "vroot-run.h"

/* In the new process: the parent's copy of the sync socket is not its. */
static void __attribute__ ((noreturn))
become_child (const struct rt_plan *p, struct rt_prepared *pp)
{
  struct rt_child ch = { .p = p, .pp = pp, .sync_fd = pp->sock[1],
                         .rootfd = -1, .timens_fd = -1 };
  close (pp->sock[0]);
  pp->sock[0] = -1;
  rt_child_main (&ch);
}

struct spawn
{
  const struct rt_plan *p;
  struct rt_prepared *pp;
  struct rt_parent *pa;
  const struct rt_create_opts *o;
  pid_t pid;
};

/* The notify supervisor is forked before the init, never its parent. */
static int
spawn (void *ud, struct cm_err **err)
{
  struct spawn *s = ud;
  if (rt_notify_spawn (s->o, err) < 0)
    return -1;
  s->pid = rt_parent_clone (s->p, s->pa, err);
  if (s->pid == 0)
    become_child (s->p, s->pp);
  return s->pid < 0 ? -1 : 0;
}

int
rt_container_create (const struct rt_create_opts *o, struct rt_created *out,
                     struct cm_err **err)
{
  struct rt_plan p;
  struct rt_prepared pp = RT_PREPARED_INIT;
  struct rt_parent pa = { .pid = -1 };
  struct rt_create_opts vo;     /* RT_ROOTFS_VIRTUAL: |o| with its notify */
  const struct rt_create_opts *so = o;
  bool planned = false;
  int ret = -1;
  pid_t pid;

  if (rt_plan_new (o, &p, err) < 0)
    goto out;
  planned = true;
  if (rt_prepare (&p, &pp, err) < 0 || rt_parent_cgroup (&p, &pa, err) < 0)
    goto out;
  if (rt_vroot_mode (&p))
    {
      vo = *o;
      if (rt_vroot_prepare (&p, &vo, err) < 0)
        goto out;
      so = &vo;
    }
  struct spawn sp = { .p = &p, .pp = &pp, .pa = &pa, .o = so, .pid = -1 };
  if ((rt_vroot_mode (&p)
           ? rt_vroot_spawn (spawn, &sp, pa.cg, err)
           : spawn (&sp, err)) < 0)
    goto out;
  pid = sp.pid;
  close (pp.sock[1]);
  pp.sock[1] = -1;
  if (rt_notify_parent (pid, pa.cg ? rt_cgroup_path (pa.cg) : NULL, err) < 0
      || rt_parent_run (&p, &pp, &pa, out, err) < 0
      || rt_notify_watched (err) < 0)
    goto out;
  out->warning = rt_plan_warning (&p);
  out->supervisor_pid = rt_notify_pid (&out->supervisor_start_time);
  ret = 0;
out:
  rt_parent_end (&pa, ret < 0);
  rt_notify_end (ret == 0);
  rt_vroot_end ();
  if (planned)
    rt_prepare_undo (&p, &pp);   /* on success: the parent's copies */
  rt_plan_free (&p);
  return ret;
}

/* Reads the status fifo to EOF: empty when the container's write end went
 * away with execve, its message when it failed first. */
static int
wait_started (int sfd, struct cm_err **err)
{
  char msg[1024];
  size_t n = 0;
  ssize_t r;

  if (fcntl (sfd, F_SETFL, 0) < 0)
    return cm_err_set (err, errno, "start status fifo");
  for (;;)
    {
      r = read (sfd, msg + n, sizeof msg - 1 - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0 || (n += (size_t) r) == sizeof msg - 1)
        break;
    }
  if (r < 0)
    return cm_err_set (err, errno, "read start status fifo");
  if (n == 0)
    return 0;
  msg[n] = '\0';
  return cm_err_set (err, 0, "%s", msg);
}

int
rt_container_start (const char *exec_fifo, const char *start_status,
                    struct cm_err **err)
{
  _cleanup_fd_ int sfd = -1, fd = -1;

  /* Opened before the fifo is written: a message written by a process
   * that then exits would be lost with the last open reference. */
  if (start_status)
    {
      sfd = open (start_status, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (sfd < 0 && errno != ENOENT)   /* ENOENT: made by an older runtime */
        return cm_err_set (err, errno, "open start status fifo");
    }
  fd = open (exec_fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENXIO)
        return cm_err_set (err, ENXIO, "container process is not waiting to "
                           "start");
      return cm_err_set (err, errno, "open exec fifo");
    }
  if (write (fd, "0", 1) != 1)
    return cm_err_set (err, errno, "write exec fifo");
  return sfd >= 0 ? wait_started (sfd, err) : 0;
}

