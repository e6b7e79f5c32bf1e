/* The prepare stage: after the pure planner (runtime/plan.c), before the
 * cgroup and clone(), it opens what the create needs — the namespaces
 * joined by path (checked against their type), whether the kernel can
 * mount an overlay rootfs (rt_kfeat), the console socket, the
 * exec and start-status fifos, the sync socketpair, the seccomp program
 * (compiled-profile cache) and its listenerPath connection, the Landlock
 * pin record — every fd above the preserved range.  rt_prepare_undo()
 * takes it all back, including the pid/time namespace joined for the
 * runtime's children. */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "vroot-run.h"

/* Moves |fd| above the preserved range so it cannot clobber a passed fd. */
static int
fd_above (int fd, int floor_)
{
  int n;
  if (fd < 0 || fd >= floor_)
    return fd;
  n = fcntl (fd, F_DUPFD_CLOEXEC, floor_);
  close (fd);
  return n;
}

static int
floor_of (const struct rt_plan *p)
{
  return 3 + (p->o->preserve_fds > 0 ? p->o->preserve_fds : 0);
}

/* pid and time namespaces are joined by the runtime itself: they only
 * affect its children, the container.  The one it had is kept to undo. */
static int
join_for_children (struct rt_prepared *pp, const struct rt_ns_join *j, int fd,
                   struct cm_err **err)
{
  int k = j->flag == CLONE_NEWPID ? 0 : 1;
  if (pp->saved_ns[k] < 0)
    pp->saved_ns[k] = open (k == 0 ? "/proc/self/ns/pid_for_children"
                                   : "/proc/self/ns/time_for_children",
                            O_RDONLY | O_CLOEXEC);
  if (setns (fd, j->flag) < 0)
    return cm_err_set (err, errno, "linux.namespaces[%zu]: join `%s`",
                       j->index, j->path);
  return 0;
}

static int
open_join (const struct rt_plan *p, struct rt_prepared *pp,
           const struct rt_ns_join *j, struct cm_err **err)
{
  _cleanup_fd_ int fd = open (j->path, O_RDONLY | O_CLOEXEC);
  struct rt_ns_fds *ns = &pp->ns;
  if (fd < 0)
    return cm_err_set (err, errno, "linux.namespaces[%zu].path `%s`",
                       j->index, j->path);
  /* Checked here, naming the field, rather than as a bare EINVAL from
   * setns in the child. */
  if (ioctl (fd, NS_GET_NSTYPE) != j->flag)
    return cm_err_set (err, 0, "linux.namespaces[%zu].path `%s`: not a "
                       "\"%s\" namespace", j->index, j->path, j->type);
  if (j->flag == CLONE_NEWPID || j->flag == CLONE_NEWTIME)
    return join_for_children (pp, j, fd, err);
  fd = fd_above (fd, floor_of (p));
  /* The user namespace is joined first: the others are owned by it. */
  if (j->flag == CLONE_NEWUSER)
    {
      memmove (&ns->fds[1], &ns->fds[0], ns->len * sizeof (int));
      memmove (&ns->types[1], &ns->types[0], ns->len * sizeof (int));
      ns->fds[0] = cm_steal_fd (&fd);
      ns->types[0] = CLONE_NEWUSER;
    }
  else
    {
      ns->fds[ns->len] = cm_steal_fd (&fd);
      ns->types[ns->len] = j->flag;
    }
  ns->len++;
  return 0;
}

/* Whether |fd| is the namespace the runtime itself is in (/proc/self/ns/
 * |name|): joining it changes nothing, and setting its state (hostname)
 * would change the host's. */
static bool
is_own_ns (int fd, const char *name)
{
  struct stat a;
  return fstat (fd, &a) == 0 && rt_ns_is (&a, "self", name) == 1;
}

/* hostname/domainname need a UTS namespace of the container's own: a new
 * one, or one joined by path (runc) that is not the runtime's. */
static int
check_uts (const struct rt_plan *p, const struct rt_ns_fds *ns,
           struct cm_err **err)
{
  const struct rt_config *c = p->c;
  const char *key = c->hostname && *c->hostname ? "hostname"
                    : c->domainname && *c->domainname ? "domainname" : NULL;
  int fd = rt_ns_joined_fd (ns, CLONE_NEWUTS);
  /* Namespace-less: nothing is set, uname draws them (vroot-uname.c). */
  if (key == NULL || p->new_uts || rt_vroot_mode (p))
    return 0;
  if (fd < 0)
    return cm_err_set (err, 0, "%s: needs a new \"uts\" namespace (or one "
                       "joined by path)", key);
  if (is_own_ns (fd, "uts"))
    return cm_err_set (err, 0, "%s: the \"uts\" namespace path is the "
                       "runtime's own UTS namespace: setting it would change "
                       "the host's %s", key, key);
  return 0;
}

static int
prepare_confine (struct rt_plan *p, struct cm_err **err)
{
  if (rt_confine_open (p->confine, p->c, err) < 0)
    return -1;
  rt_confine_set_container (p->confine, p->o->id, p->o->bundle);
  return rt_confine_record_pins (p->confine, err);
}

static int
open_console (const struct rt_plan *p, struct rt_prepared *pp,
              struct cm_err **err)
{
  const struct rt_create_opts *o = p->o;
  if (!p->c->process->terminal)
    return 0;
  if (o->console_fd_set)
    {
      pp->console_fd = fcntl (o->console_fd, F_DUPFD_CLOEXEC, floor_of (p));
      if (pp->console_fd < 0)
        return cm_err_set (err, errno, "console socket");
      return 0;
    }
  if (o->console_socket == NULL)
    return 0;
  pp->console_fd = rt_connect_console (o->console_socket, err);
  if (pp->console_fd < 0)
    return -1;
  pp->console_fd = fd_above (pp->console_fd, floor_of (p));
  return 0;
}

static int
open_fifos (const struct rt_plan *p, struct rt_prepared *pp,
            struct cm_err **err)
{
  const struct rt_create_opts *o = p->o;
  pp->fifo_fd = fd_above (open (o->exec_fifo, O_RDWR | O_CLOEXEC),
                          floor_of (p));
  if (pp->fifo_fd < 0)
    return cm_err_set (err, errno, "open exec fifo `%s`", o->exec_fifo);
  if (o->start_status == NULL)
    return 0;
  pp->status_fd = fd_above (open (o->start_status, O_RDWR | O_CLOEXEC),
                            floor_of (p));
  if (pp->status_fd < 0)
    return cm_err_set (err, errno, "open start status fifo `%s`",
                       o->start_status);
  return 0;
}

int
rt_prepare (struct rt_plan *p, struct rt_prepared *pp, struct cm_err **err)
{
  for (size_t i = 0; i < p->joins_len; i++)
    if (open_join (p, pp, &p->joins[i], err) < 0)
      return -1;
  if (check_uts (p, &pp->ns, err) < 0 || rt_plan_sysctl (p, &pp->ns, err) < 0
      || rt_prepare_overlay (p, err) < 0 || prepare_confine (p, err) < 0 || open_console (p, pp, err) < 0
      || open_fifos (p, pp, err) < 0
      || rt_prepare_host_overlays (p, pp, floor_of (p), err) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pp->sock) < 0)
    return cm_err_set (err, errno, "socketpair");
  pp->sock[0] = fd_above (pp->sock[0], floor_of (p));
  pp->sock[1] = fd_above (pp->sock[1], floor_of (p));
  return 0;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

void
rt_prepare_undo (struct rt_plan *p, struct rt_prepared *pp)
{
  static const int kinds[2] = { CLONE_NEWPID, CLONE_NEWTIME };
  for (size_t i = 0; i < pp->ns.len; i++)
    close_fd (&pp->ns.fds[i]);
  pp->ns.len = 0;
  close_fd (&pp->console_fd);
  close_fd (&pp->fifo_fd);
  close_fd (&pp->status_fd);
  close_fd (&pp->sock[0]);
  close_fd (&pp->sock[1]);
  rt_prepare_host_overlays_undo (pp);
  for (size_t k = 0; k < 2; k++)
    if (pp->saved_ns[k] >= 0)
      {
        /* Back to the runtime's own: a library caller's next child must
         * not be born in this container's namespace. */
        (void) setns (pp->saved_ns[k], kinds[k]);
        close_fd (&pp->saved_ns[k]);
      }
  rt_confine_close (p->confine);
}
