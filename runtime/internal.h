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

struct rt_confine;              /* runtime/confine.h */
struct rt_caps_plan;            /* runtime/caps.h */

/* A namespace joined by path: opened (and type-checked) by the prepare
 * stage, not by the planner. */
struct rt_ns_join
{
  const char *path;             /* borrowed from the config */
  const char *type;             /* its linux.namespaces[].type */
  size_t index;                 /* in linux.namespaces */
  int flag;                     /* CLONE_NEW* */
};

/* The parent's decisions (runtime/plan.c): config + options -> plan, with
 * no side effect (no setns, no socket, no cache, no fd).  Immutable once
 * rt_plan_new() returned, except |confine|, which the prepare stage
 * completes (seccomp program, listener, pin record). */
struct rt_plan
{
  const struct rt_config *c;
  const struct rt_create_opts *o;
  struct rt_mount_plan *mounts;
  size_t mounts_len;
  size_t first_cgroup_mount;    /* index of the first cgroup mount, or
                                   mounts_len: the cgroup wait goes there */
  struct rt_rlimit_plan *rlimits;
  size_t rlimits_len;
  int clone_flags;              /* namespaces created by clone() */
  bool new_user, new_mount, new_pid, new_net, new_uts, new_ipc, new_cgroup,
      new_time;
  struct rt_ns_join joins[9];   /* by path, in linux.namespaces order */
  size_t joins_len;
  bool joins_user;              /* a user namespace is joined by path */
  unsigned long root_propagation;
  bool host_mount_ns;           /* no "mount" entry: chroot, no mount */
  bool dev_is_tmpfs;            /* a tmpfs on /dev: make the default nodes */
  bool has_devpts;
  bool proc_by_parent;          /* an unprivileged runtime writes the
                                   child's uid_map/oom_score_adj */
  bool child_hooks;             /* the child runs hooks: it needs the state */
  long personality;             /* PER_* or -1 */
  struct rt_confine *confine;
  struct rt_caps_plan *caps;
};

int rt_plan_new (const struct rt_create_opts *o, struct rt_plan *p,
                 struct cm_err **err);
/* Frees what the plan owns (not the prepared fds).  Accepts a zeroed plan. */
void rt_plan_free (struct rt_plan *p);
/* root.path must not be the host's own root (a bind or symlink of it
 * included): a container needs a root filesystem of its own.  Both modes
 * check it (runtime/mount.c). */
int rt_check_rootfs (const char *rootfs, struct cm_err **err);
int rt_plan_mounts (struct rt_plan *p, struct cm_err **err);
/* Advice for the user about the plan (malloc'd), or NULL. */
char *rt_plan_warning (const struct rt_plan *p);

/* Namespace fds the child joins with setns(), the user namespace first. */
struct rt_ns_fds
{
  int fds[8];
  int types[8];
  size_t len;
};

/* What the prepare stage opened for one create (runtime/prepare.c), every
 * fd above the preserved range; rt_prepare_undo() closes it all and puts
 * the runtime back in its own pid/time namespace for children. */
struct rt_prepared
{
  struct rt_ns_fds ns;
  int console_fd;               /* connected console socket or -1 */
  int fifo_fd;                  /* exec fifo, read by the parked init */
  int status_fd;                /* start_status fifo: failures after start */
  int sock[2];                  /* sync socketpair: [0] parent, [1] child */
  int saved_ns[2];              /* pid_for_children, time_for_children of
                                   the runtime before a join by path; -1 */
  int *mount_fds;               /* per plan mount: an overlay the runtime
                                   made (runtime/overlay-host.c), or -1;
                                   NULL when there is none */
  size_t mount_fds_len;
};

#define RT_PREPARED_INIT                                               \
  {                                                                     \
    .console_fd = -1, .fifo_fd = -1, .status_fd = -1, .sock = { -1, -1 }, \
    .saved_ns = { -1, -1 }                                              \
  }

/* |pp| starts as RT_PREPARED_INIT; on failure rt_prepare_undo() it. */
int rt_prepare (struct rt_plan *p, struct rt_prepared *pp,
                struct cm_err **err);
void rt_prepare_undo (struct rt_plan *p, struct rt_prepared *pp);

/* The child's state (runtime/child.c): what it receives and builds while
 * it executes the plan's steps. */
struct rt_child
{
  const struct rt_plan *p;
  struct rt_prepared *pp;
  int sync_fd;                  /* its end of the sync socket */
  int rootfd;                   /* the rootfs, between the mount steps */
  bool in_cgroup;               /* CGROUP_DONE received */
  char *cgroup_path;            /* received with GO */
  char *state_json;
  char *exec_path;              /* resolved process.args[0] */
  char **argv;
  char **envp;                  /* rt_proc_envp, before Landlock */
  int timens_fd, timens_errno;  /* its /proc/self/timens_offsets */
  const struct rt_seal *seal;   /* RT_PAYLOAD_FN_SEAL: runtime/seal.c */
};

/* The payload (runtime/payload.c): a setup step that resolves what to
 * execve (before Landlock); after `start`, the failure report to the
 * start-status fifo and the payload itself.  Neither of the last two
 * returns. */
int rt_payload_prepare (struct rt_child *ch, struct cm_err **err);
void rt_payload_fail (struct rt_child *ch, const char *msg)
    __attribute__ ((noreturn));
void rt_payload_run (struct rt_child *ch) __attribute__ ((noreturn));

/* The container init: runs the steps, parks, then the payload.  Never
 * returns.  runtime/child.c */
void rt_child_main (struct rt_child *ch) __attribute__ ((noreturn));

/* The parent's side of one create (runtime/parent.c): cgroup, clone, id
 * maps, sync, hooks, cgroup placement and progress. */
struct rt_cgroup;
struct rt_parent
{
  struct rt_cgroup *cg;
  pid_t pid;                    /* -1: no child */
  uint64_t start_time;
  bool born_in_cgroup;          /* clone3(CLONE_INTO_CGROUP) placed it */
};
int rt_parent_cgroup (const struct rt_plan *p, struct rt_parent *pa,
                      struct cm_err **err);
/* clone(): returns 0 in the child, the pid in the parent, -1 with *err. */
pid_t rt_parent_clone (const struct rt_plan *p, struct rt_parent *pa,
                       struct cm_err **err);
int rt_parent_run (const struct rt_plan *p, struct rt_prepared *pp,
                   struct rt_parent *pa, struct rt_created *out,
                   struct cm_err **err);
/* Kills a half-made child and removes its cgroup (|failed|), frees. */
void rt_parent_end (struct rt_parent *pa, bool failed);

/* Whether the namespace |st| (a stat of a namespace file or fd) is the one
 * /proc/|pid|/ns/|name| names ("self": the runtime's own; "1": init's):
 * 1 yes, 0 no, -1 with errno when /proc cannot tell.  runtime/ns.c */
struct stat;
int rt_ns_is (const struct stat *st, const char *pid, const char *name);
/* The fd of the namespace of |flag| (CLONE_NEW*) joined by path, or -1
 * when none is. */
int rt_ns_joined_fd (const struct rt_ns_fds *ns, int flag);

/* linux.sysctl (runtime/sysctl.c): only namespaced keys, and only with the
 * container's own namespace of that kind; written through a checked
 * /proc/sys. */
int rt_plan_sysctl (const struct rt_plan *p, const struct rt_ns_fds *ns,
                    struct cm_err **err);
int rt_child_sysctl (const struct rt_plan *p, struct cm_err **err);

/* linux.personality (runtime/personality.c): validated into a PER_* value
 * (-1: none) before clone, set in the new process before Landlock.  Shared
 * by create and exec. */
int rt_personality_plan (const struct rt_config *c, long *out,
                         struct cm_err **err);
int rt_personality_apply (long per, struct cm_err **err);

/* Child steps (runtime/mount.c): the rootfs made a mount point (a bind of
 * root.path, or an overlay: runtime/rootfs-overlay.c) and opened; the
 * config's mounts before the first cgroup mount, then the rest; the
 * default and configured devices; pivot_root. */
int rt_child_rootfs (struct rt_child *ch, struct cm_err **err);
int rt_child_mounts_head (struct rt_child *ch, struct cm_err **err);
int rt_child_mounts_tail (struct rt_child *ch, struct cm_err **err);
int rt_child_devices (struct rt_child *ch, struct cm_err **err);
int rt_child_pivot (struct rt_child *ch, struct cm_err **err);
/* Mounts the overlay of |src| on |rootfs| (runtime/rootfs-overlay.c);
 * |userns|: the process is in a user namespace of its own. */
int rt_rootfs_overlay (const struct rt_rootfs_source *src, const char *rootfs,
                       bool userns, struct cm_err **err);
int rt_plan_overlay (const struct rt_plan *p, struct cm_err **err);
/* Prepare stage (runtime/overlay-host.c): for a container with a user
 * namespace and a runtime that is root of the initial one, makes every
 * `overlay` mount of the plan as a detached mount with the runtime's
 * rights (pp->mount_fds, fds at or above |floor_|), which the init moves
 * into place.  (The overlay rootfs is made ahead by oci/ through
 * rt_overlay_prepare, asked with rt_overlay_in_userns.) */
int rt_prepare_host_overlays (const struct rt_plan *p, struct rt_prepared *pp,
                              int floor_, struct cm_err **err);
void rt_prepare_host_overlays_undo (struct rt_prepared *pp);
/* Child: moves the detached mount *mntfd onto |dest| beneath |destfd|
 * ("" : destfd itself) and closes it; -1 with errno. */
int rt_child_move_mount (int *mntfd, int destfd, const char *dest);
/* Prepare stage: whether this kernel can mount it (rt_kfeat). */
int rt_prepare_overlay (const struct rt_plan *p, struct cm_err **err);
/* Without a mount namespace of its own (runtime/rootfs-chroot.c): refuses
 * what would mount on the host's tree; chroot(2) into |rootfs|. */
int rt_plan_host_mount_ns (const struct rt_plan *p, struct cm_err **err);
int rt_child_chroot (const char *rootfs, struct cm_err **err);
/* Brings up `lo` in the current (new) network namespace.  runtime/net.c */
int rt_child_loopback_up (struct cm_err **err);
/* Makes the mount holding |rootfs| private (only it, in the container's
 * mount namespace).  runtime/rootfs-prop.c */
int rt_rootfs_parent_private (const char *rootfs, struct cm_err **err);
int rt_child_finish_rootfs (struct rt_child *ch, struct cm_err **err);

/* openat2(RESOLVE_IN_ROOT) of |path| under |rootfd|, creating missing
 * directories (and the last component as a file when |file|). */
int rt_open_in_root (int rootfd, const char *path, bool create, bool file,
                     struct cm_err **err);

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
int rt_sync_child_error (int fd, struct cm_err **err);
/* After a send to the child failed (errno set): the child usually failed
 * first and exited, and its queued SYNC_ERROR is the real cause.  Sets
 * *err to that message, else to |what| with the send's errno; returns -1. */
int rt_sync_fail (int fd, const char *what, struct cm_err **err);
int rt_sync_send_str (int fd, const char *s);
char *rt_sync_recv_str (int fd);

/* Per-process steps (runtime/process.c), shared by create and exec. */
int rt_proc_plan_rlimits (const struct rt_process *pr,
                          struct rt_rlimit_plan **out, size_t *out_len,
                          struct cm_err **err);
int rt_proc_apply_rlimits (const struct rt_rlimit_plan *rl, size_t n,
                           struct cm_err **err);
/* "RLIMIT_NOFILE" for RLIMIT_NOFILE; NULL for a number it does not know. */
const char *rt_proc_rlimit_name (int resource);
/* Whether this process may set |rl|: a hard limit above its own needs
 * CAP_SYS_RESOURCE (the namespace-less exec, whose handler has the
 * container's limits and capabilities).  Refused naming
 * process.rlimits[i]. */
int rt_proc_fit_rlimits (const struct rt_rlimit_plan *rl, size_t n,
                         struct cm_err **err);
/* The last steps before the program, in their one order (create, exec,
 * the namespace-less create): Landlock while the process still holds its
 * capabilities (it needs CAP_SYS_ADMIN or no_new_privs); the rlimits once
 * the setup has opened its last fd (a low RLIMIT_NOFILE must not fail the
 * ruleset) and before the capability drop (a raise needs
 * CAP_SYS_RESOURCE); the user and capabilities, unless |keep_user| (an
 * ordinary caller has none to give or drop); the umask.  |cf| NULL: the
 * process already is in its domain (the namespace-less exec). */
struct rt_confine;
struct rt_caps_plan;
int rt_proc_confine (const struct rt_confine *cf,
                     const struct rt_rlimit_plan *rl, size_t n,
                     const struct rt_caps_plan *caps,
                     const struct rt_process *pr, bool keep_user,
                     struct cm_err **err);
int rt_proc_sched (const struct rt_process *pr, struct cm_err **err);
/* pty from the current /dev/ptmx; master sent over |console_fd| (if >= 0),
 * slave made stdio and controlling terminal. */
int rt_proc_terminal (const struct rt_process *pr, int console_fd,
                      struct cm_err **err);
/* rt_proc_terminal's two halves: a pty from the current /dev/ptmx sized
 * by process.consoleSize (both fds O_CLOEXEC), and the master sent over
 * |console_fd| (if >= 0), the slave made stdio and controlling terminal
 * (the fds borrowed).  The namespace-less init has the runtime's pty. */
int rt_proc_pty (const struct rt_process *pr, int *master, int *slave,
                 struct cm_err **err);
int rt_proc_pty_attach (int master, int slave, int console_fd,
                        struct cm_err **err);
/* args[0] looked up in PATH from pr->env, inside the current root. */
int rt_proc_resolve_exec (const struct rt_process *pr, char **out,
                          struct cm_err **err);
/* process.env plus HOME when it has none: the home of process.user.uid in
 * the current root's /etc/passwd, else "/" (runc).  NULL-terminated; the
 * strings are borrowed from |pr| except the added one.  runtime/procenv.c */
char **rt_proc_envp (const struct rt_process *pr);
/* The same from |passwd_fd|, an fd of the passwd file to read (-1: none;
 * borrowed): the namespace-less mode opens the view's. */
char **rt_proc_envp_fd (const struct rt_process *pr, int passwd_fd);
/* mkdir -p of process.cwd (mode 0755) in the current root, as runc does
 * for the init before it switches user. */
int rt_proc_make_cwd (const char *cwd, struct cm_err **err);
/* chdir to pr->cwd and check that it is inside the current root. */
int rt_proc_chdir (const struct rt_process *pr, struct cm_err **err);
int rt_connect_console (const char *path, struct cm_err **err);
/* Closes every fd >= |from| except those in |keep| (sorted in place; -1
 * entries ignored).  The container must not inherit the runtime's fds, above
 * all the flock()ed state directory. */
void rt_close_fds_except (int from, int *keep, size_t n);

/* The live descendants of |root| (not |root| itself), found in /proc;
 * *out is malloc'd.  runtime/proc-tree.c */
size_t rt_proc_descendants (pid_t root, pid_t **out);
/* Signals |root|'s descendants (not |root|), each through a pidfd taken
 * and checked to be a child of one already taken, so a pid reused by a
 * host process since the scan is never signalled; nothing when |root| is
 * not the process of |start_time|. */
void rt_proc_signal_tree (pid_t root, uint64_t start_time, int sig);
/* The check alone, on a given snapshot (|pid|[i]'s parent |par|[i]):
 * pidfds of the descendants of |root| (pidfd |rootfd|) it confirms, in
 * *out (malloc'd, the caller closes them); their count. */
size_t rt_proc_tree_pidfds (pid_t root, int rootfd, const pid_t *pid,
                            const pid_t *par, size_t n, int **out);

#endif
