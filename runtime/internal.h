/* Shared between the runtime folder only: the validated plan that the container
 * process executes, and the child-side steps. */
#ifndef SANDLOCK_RUNTIME_INTERNAL_H
#define SANDLOCK_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "config.h"
#include "runtime.h"

/* One mount, its options decoded (parent side, so errors name the path). */
struct rt_mount_plan
{
  const struct rt_mount *m;
  unsigned long flags;          /* MS_* to set */
  unsigned long propagation;    /* MS_SHARED|MS_SLAVE|... (| MS_REC) or 0 */
  uint64_t attr_set, attr_clr;  /* MOUNT_ATTR_* for recursive r* options */
  char *data;                   /* fs-specific options, comma-joined */
  bool bind, rec, is_cgroup;
  bool tmpcopyup;               /* tmpfs: copy the directory's content up */
};

struct rt_rlimit_plan
{
  int resource;
  uint64_t soft, hard;
  const char *name;
};

/* Everything the container process needs, decided before clone(). */
struct rt_plan
{
  const struct rt_config *c;
  const struct rt_create_opts *o;
  struct rt_mount_plan *mounts;
  size_t mounts_len;
  struct rt_rlimit_plan *rlimits;
  size_t rlimits_len;
  int clone_flags;              /* namespaces created by clone() */
  bool new_user, new_mount, new_pid, new_net, new_uts, new_ipc, new_cgroup,
      new_time;
  int ns_fds[8];                /* setns targets opened in the parent */
  int ns_types[8];
  size_t ns_len;
  unsigned long root_propagation;
  bool host_mount_ns;           /* no "mount" entry: chroot, no mount */
  bool born_in_cgroup;          /* clone3(CLONE_INTO_CGROUP) placed it */
  bool in_cgroup;               /* child: CGROUP_DONE received */
  int sync_fd;                  /* child: its end of the sync socket */
  bool dev_is_tmpfs;            /* a tmpfs on /dev: make the default nodes */
  bool has_devpts;
  void *confine;                /* struct rt_confine * */
  void *caps;                   /* struct rt_caps_plan * */
  /* Set in the child after GO: */
  char *cgroup_path;
  char *state_json;
  int console_fd;               /* connected console socket or -1 */
  int fifo_fd;
  int status_fd;                /* start_status fifo: failures after start */
  long personality;             /* PER_* or -1 */
  char *exec_path;              /* resolved process.args[0] */
  char **envp;                  /* rt_proc_envp, before Landlock */
  bool proc_by_parent;          /* an unprivileged runtime writes the
                                   child's uid_map/oom_score_adj */
  int timens_fd, timens_errno;  /* child: its /proc/self/timens_offsets */
};

int rt_plan_mounts (struct rt_plan *p, struct rt_err **err);
void rt_plan_free (struct rt_plan *p);

/* Whether the namespace |st| (a stat of a namespace file or fd) is the one
 * /proc/|pid|/ns/|name| names ("self": the runtime's own; "1": init's):
 * 1 yes, 0 no, -1 with errno when /proc cannot tell.  runtime/ns.c */
struct stat;
int rt_ns_is (const struct stat *st, const char *pid, const char *name);
/* The fd of the namespace of |flag| (CLONE_NEW*) the plan joins by path,
 * or -1 when it joins none. */
int rt_plan_joined_fd (const struct rt_plan *p, int flag);

/* linux.sysctl (runtime/sysctl.c): only namespaced keys, and only with the
 * container's own namespace of that kind; written through a checked
 * /proc/sys. */
int rt_plan_sysctl (const struct rt_plan *p, struct rt_err **err);
int rt_child_sysctl (const struct rt_plan *p, struct rt_err **err);

/* linux.personality (runtime/personality.c): validated into a PER_* value
 * (-1: none) before clone, set in the new process before Landlock.  Shared
 * by create and exec. */
int rt_personality_plan (const struct rt_config *c, long *out,
                         struct rt_err **err);
int rt_personality_apply (long per, struct rt_err **err);

/* Child: waits (once) until the runtime has put it in its cgroup, then
 * unshares the cgroup namespace when one is asked for (runtime/container.c).
 * Called before the first cgroup mount and after the last mount. */
int rt_child_cgroup_ready (struct rt_plan *p, struct rt_err **err);

/* Child side (runtime/mount.c). */
int rt_child_rootfs (struct rt_plan *p, struct rt_err **err);
int rt_child_pivot (struct rt_plan *p, struct rt_err **err);
/* Without a mount namespace of its own (runtime/rootfs-chroot.c): refuses
 * what would mount on the host's tree; chroot(2) into |rootfs|. */
int rt_plan_host_mount_ns (const struct rt_plan *p, struct rt_err **err);
int rt_child_chroot (const char *rootfs, struct rt_err **err);
/* Brings up `lo` in the current (new) network namespace.  runtime/net.c */
int rt_child_loopback_up (struct rt_err **err);
/* Makes the mount holding |rootfs| private (only it, in the container's
 * mount namespace).  runtime/rootfs-prop.c */
int rt_rootfs_parent_private (const char *rootfs, struct rt_err **err);
int rt_child_finish_rootfs (struct rt_plan *p, struct rt_err **err);

/* openat2(RESOLVE_IN_ROOT) of |path| under |rootfd|, creating missing
 * directories (and the last component as a file when |file|). */
int rt_open_in_root (int rootfd, const char *path, bool create, bool file,
                     struct rt_err **err);

/* Parent <-> child sync messages (runtime/sync.c): fixed size, one per
 * SOCK_SEQPACKET datagram. */
enum sync_kind
{
  SYNC_GO = 1,
  SYNC_HOOKS,
  SYNC_HOOKS_DONE,
  SYNC_READY,
  SYNC_ERROR,
  SYNC_PID,
  SYNC_CGROUP_DONE,
  SYNC_RELEASE,                 /* READY is recorded: drop PDEATHSIG */
  SYNC_RELEASED,                /* dropped: the runtime may exit */
};

struct sync_msg
{
  int kind;
  int errno_;
  int pid;                      /* GO: the container's pid on the host */
  char msg[1024];
};


int rt_sync_send (int fd, int kind, int errno_, const char *msg);
int rt_sync_send_go (int fd, pid_t pid);
/* 1: a message, 0: EOF, -1: error */
int rt_sync_recv (int fd, struct sync_msg *m);
/* If the child's SYNC_ERROR is queued on |fd|, replaces *err with it and
 * returns -1; else returns 0 (never blocks). */
int rt_sync_child_error (int fd, struct rt_err **err);
/* After a send to the child failed (errno set): the child usually failed
 * first and exited, and its queued SYNC_ERROR is the real cause.  Sets
 * *err to that message, else to |what| with the send's errno; returns -1. */
int rt_sync_fail (int fd, const char *what, struct rt_err **err);
int rt_sync_send_str (int fd, const char *s);
char *rt_sync_recv_str (int fd);

/* Per-process steps (runtime/process.c), shared by create and exec. */
int rt_proc_plan_rlimits (const struct rt_process *pr,
                          struct rt_rlimit_plan **out, size_t *out_len,
                          struct rt_err **err);
int rt_proc_apply_rlimits (const struct rt_rlimit_plan *rl, size_t n,
                           struct rt_err **err);
int rt_proc_sched (const struct rt_process *pr, struct rt_err **err);
/* pty from the current /dev/ptmx; master sent over |console_fd| (if >= 0),
 * slave made stdio and controlling terminal. */
int rt_proc_terminal (const struct rt_process *pr, int console_fd,
                      struct rt_err **err);
/* args[0] looked up in PATH from pr->env, inside the current root. */
int rt_proc_resolve_exec (const struct rt_process *pr, char **out,
                          struct rt_err **err);
/* process.env plus HOME when it has none: the home of process.user.uid in
 * the current root's /etc/passwd, else "/" (runc).  NULL-terminated; the
 * strings are borrowed from |pr| except the added one.  runtime/procenv.c */
char **rt_proc_envp (const struct rt_process *pr);
/* mkdir -p of process.cwd (mode 0755) in the current root, as runc does
 * for the init before it switches user. */
int rt_proc_make_cwd (const char *cwd, struct rt_err **err);
/* chdir to pr->cwd and check that it is inside the current root. */
int rt_proc_chdir (const struct rt_process *pr, struct rt_err **err);
int rt_connect_console (const char *path, struct rt_err **err);
/* Closes every fd >= |from| except those in |keep| (sorted in place; -1
 * entries ignored).  The container must not inherit the runtime's fds, above
 * all the flock()ed state directory. */
void rt_close_fds_except (int from, int *keep, size_t n);

#endif
