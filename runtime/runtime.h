/* runtime/: building the container process.  The one public header of the
 * folder; oci/ calls only what is declared here (and the policy types of
 * config.h). */
#ifndef SANDLOCK_RUNTIME_H
#define SANDLOCK_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/seccomp.h>

#include "common/err.h"
#include "config.h"

/* Called by the runtime when a hook point is reached; builds the state JSON
 * the hooks read on stdin (status and pid filled by the caller's code).
 * Returns a malloc'd string. */
typedef char *(*rt_state_json_fn) (void *ud, pid_t pid, const char *status);

/* What a runtime killed during create would leave behind, reported as it
 * comes to exist so that the caller records it durably first (oci/ writes
 * state.json): the cgroup path before any directory is made (pid 0), then
 * the pid right after clone(), before the child may do anything, then
 * |ready| once the child is parked, with what exec needs of it — the child
 * keeps PR_SET_PDEATHSIG until that call has returned.  A failure aborts the create. */
struct rt_progress
{
  const char *cgroup_path;      /* NULL: no cgroup */
  pid_t pid;                    /* 0: not cloned yet */
  uint64_t start_time;
  bool ready;
  const char *landlock_pins;    /* |ready|: rt_created.landlock_pins */
  size_t landlock_pins_len;
  pid_t supervisor_pid;         /* with rt_create_opts.notify, from |pid| on */
  uint64_t supervisor_start_time;
};
typedef int (*rt_progress_fn) (void *ud, const struct rt_progress *pr,
                               struct cm_err **err);

/* System calls of the container answered by a supervisor process
 * (seccomp user notification; docs/architecture.md "Notify supervisor").
 * The supervisor is forked by rt_container_create before the init is
 * cloned and is never its parent; the init installs a filter trapping
 * |syscalls| right before the config's own filter, after `start`, and
 * hands the listener over.  The supervisor exits when the listener hangs
 * up (no process of the container is left); if it dies first, the
 * container is killed.  Every callback runs in the supervisor. */
/* A call the trap filter fails by itself, before any notification (the
 * kernel reads its arguments from registers: nothing to race): number |nr|
 * whose first argument has a bit of |arg0_any| set (0: whatever it is)
 * fails with |errno_|. */
struct rt_notify_deny
{
  int nr;
  uint32_t arg0_any;
  int errno_;
};

/* The same, for number |nr| whose argument |arg| (0 .. 5; its low 32
 * bits) is not |value| — e.g. a pid other than the caller's own, 0.
 * |errno_| 0: trapped to the supervisor (its handler answers) instead;
 * entries are tried in order, the first that matches decides. */
struct rt_notify_deny_ne
{
  int nr;
  uint8_t arg;
  uint32_t value;
  int errno_;
};

struct rt_notify_ops
{
  const int *syscalls;          /* native-arch numbers; borrowed */
  size_t syscalls_len;          /* 1 .. 250 */
  const struct rt_notify_deny *deny;    /* borrowed; may be NULL */
  size_t deny_len;              /* 0 .. 16 */
  const struct rt_notify_deny_ne *deny_ne;      /* borrowed; may be NULL */
  size_t deny_ne_len;           /* 0 .. 24 */
  void *ud;
  /* Before the init exists, with the runtime's privileges (pin root fds,
   * open what the handler needs).  A failure fails the create with its
   * message.  NULL: nothing to prepare. */
  int (*init) (void *ud, struct cm_err **err);
  /* One notification.  |resp| comes with .id set and the rest zero: set
   * .val/.error, or .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE.  Return 0
   * to send it, 1 when already answered (rt_notify_addfd_send); < 0 is
   * fatal: the container is killed (fail closed). */
  int (*handle) (void *ud, int listener_fd, const struct seccomp_notif *req,
                 struct seccomp_notif_resp *resp);
  void (*fini) (void *ud);      /* on the supervisor's exit; may be NULL */
  /* Before the supervisor acts on its own between notifications (kills
   * the container, ends): the handler gives back what it keeps across
   * calls, e.g. a caller's credentials.  May be NULL. */
  void (*idle) (void *ud);
  /* The runtime's fds the supervisor keeps (it is forked: they are the
   * same numbers there, e.g. what |init| would otherwise open again); every
   * other fd is closed before |init|.  Borrowed. */
  const int *keep_fds;
  size_t keep_fds_len;
  int log_fd;                   /* the supervisor's errors go here (dup'd);
                                   -1: the runtime's stderr */
  /* The handler acts in its callers' fs credentials (setfsuid, setgroups
   * per call): CAP_SETUID/CAP_SETGID stay permitted, not effective. */
  bool switch_creds;
  /* With |switch_creds|: the container's capabilities (a mask of bits),
   * kept permitted but not effective, so that a caller's effective set is
   * taken whole (CAP_CHOWN, CAP_FOWNER… act on-behalf as they would for the
   * caller) and the caller's permitted set is a subset of the handler's
   * (reading its memory needs no CAP_SYS_PTRACE then). */
  uint64_t keep_permitted;
};

/* For handlers: true while the notification |id| is pending (its caller
 * has not died or been interrupted).  Check it after reading the caller's
 * memory and before acting on what was read. */
bool rt_notify_id_valid (int listener_fd, uint64_t id);

/* Reads |len| bytes at |addr| of the caller of |req| through
 * /proc/PID/mem; the id is re-checked after the read, so the bytes are the
 * caller's and not those of a process that reused the pid.  Returns the
 * bytes read, or -1 with errno (ESRCH: the notification is gone). */
ssize_t rt_notify_read_mem (int listener_fd, const struct seccomp_notif *req,
                            uint64_t addr, void *buf, size_t len);

/* Installs |fd| in the caller of notification |id| and makes its number
 * the system call's result (SECCOMP_ADDFD_FLAG_SEND): that answers the
 * notification, so the handler then returns 1.  Returns
 * the caller's fd number, or -1 with errno. */
int rt_notify_addfd_send (int listener_fd, uint64_t id, int fd,
                          unsigned newfd_flags);

/* Where the container's / comes from.  The enum stays open: more kinds
 * (a virtual root for the namespace-less mode) come later. */
enum rt_rootfs_kind
{
  RT_ROOTFS_BIND = 0,           /* bind of the host directory |rootfs| */
  RT_ROOTFS_OVERLAY,            /* overlayfs of |lowers| + |upper| on |rootfs| */
  RT_ROOTFS_VIRTUAL,            /* no namespace: |rootfs| and the mounts are
                                   a view drawn by a notify supervisor
                                   (docs/nsless.md); sets its own notify */
};

struct rt_rootfs_source
{
  enum rt_rootfs_kind kind;
  /* RT_ROOTFS_OVERLAY: read-only lower directories, top first, and the
   * writable upper and its work directory (same filesystem), all absolute
   * host paths, borrowed.  Mounted by the init in its own mount namespace,
   * before the config's mounts. */
  const char *const *lowers;
  size_t lowers_len;
  const char *upper, *work;
  bool nodev;                   /* no device node of the layers opens */
  /* The overlay made ahead (rt_overlay_prepare): a detached mount the
   * init attaches on |rootfs| instead of mounting; borrowed. */
  bool premade;
  int mount_fd;
};

/* Whether the kernel takes an overlay of |src| (RT_ROOTFS_OVERLAY; its
 * directories exist) as the init would mount it: in a user namespace,
 * with "userxattr", when |userns| (tried in a forked child; nothing stays
 * mounted).  Outside one (no fork) the overlay is made here, as a detached
 * mount: src->premade, src->mount_fd, which the caller closes once
 * rt_container_create returned.  1 when the kernel takes it; 0 when it
 * refuses, with *why (owned) the kernel's reason (runtime/overlay-try.c). */
int rt_overlay_prepare (struct rt_rootfs_source *src, bool userns,
                        char **why, struct cm_err **err);

/* What the init becomes once confined and started. */
enum rt_payload_kind
{
  RT_PAYLOAD_EXEC = 0,          /* execve process.args (process.env) */
  RT_PAYLOAD_FN,                /* call |fn|(|arg|); the init exits with its
                                   return value */
  RT_PAYLOAD_FN_SEAL,           /* call |fn_seal|(|arg|, seal) before the
                                   capability drop and seccomp */
};

/* A system call as data: arguments as they are, except those whose bit is
 * set in |ptr_args|, which are offsets into rt_seal.data to be passed as
 * addresses.  A failure with |ok_errno| counts as success. */
struct rt_seal_call
{
  long nr;
  long arg[6];
  unsigned ptr_args;
  int ok_errno;
};

/* What RT_PAYLOAD_FN_SEAL is handed (runtime/seal.c): the container's
 * confinement still to be applied, as raw system calls that work in any
 * thread with no libc.  |narrow| sets the fs ids, groups and effective
 * capabilities to the container's (keeping CAP_SYS_ADMIN effective for
 * clone3's set_tid, and the permitted set to raise it): for a process
 * that opens files for the container before it is sealed.  |seal| is the
 * rest: bounding set, securebits, uid/gid, capabilities, ambient,
 * no_new_privs and the seccomp filter, in the order a normal start
 * applies them.  |data| is 8-byte aligned; |relocs| are offsets in it of
 * 64-bit words that hold an offset into |data| to be made an address. */
struct rt_seal_list
{
  const struct rt_seal_call *calls;
  size_t ncalls;
};
struct rt_seal
{
  struct rt_seal_list narrow, seal;
  const void *data;
  size_t data_len;
  const size_t *relocs;
  size_t nrelocs;
};

struct rt_payload
{
  enum rt_payload_kind kind;
  /* RT_PAYLOAD_FN: runs in the init after `start`, the startContainer
   * hooks and seccomp, with every confinement in place; `start` sees it as
   * a successful execve.  It must not return to the runtime: the init
   * _exit()s with its value (0..255). */
  int (*fn) (void *arg);
  /* RT_PAYLOAD_FN_SEAL: runs in the init after `start` and the
   * startContainer hooks, with the namespaces, mounts, cgroup, rlimits and
   * Landlock rules in place, but still with the capabilities of the
   * container's setup and no seccomp filter: for a payload that needs
   * what the filter or the drop would forbid (criu-lite's clone3 with
   * set_tid).  It must apply |seal| (narrow, then seal) in every thread
   * of every process it makes before that thread runs code the payload
   * did not vet; the init _exit()s with its value.  Refused with a
   * seccomp listener and in the namespace-less mode. */
  int (*fn_seal) (void *arg, const struct rt_seal *seal);
  void *arg;
};

struct rt_create_opts
{
  const struct rt_config *config;       /* borrowed */
  const char *id;
  const char *bundle;           /* absolute */
  const char *rootfs;           /* absolute host path of root.path: the
                                   container's / (a mount point for
                                   RT_ROOTFS_OVERLAY) */
  struct rt_rootfs_source rootfs_source;        /* zeroed: RT_ROOTFS_BIND */
  struct rt_payload payload;    /* zeroed: RT_PAYLOAD_EXEC */
  const char *exec_fifo;        /* absolute path of the start fifo */
  const char *start_status;     /* fifo `start` reads the outcome from */
  const char *console_socket;   /* NULL unless process.terminal */
  int console_fd;               /* or an already connected socket (borrowed) */
  bool console_fd_set;          /* console_fd is meaningful */
  int preserve_fds;             /* fds 3 .. 3+n-1 stay open */
  bool no_pivot;
  bool no_new_keyring;
  bool systemd_cgroup;
  bool no_cgroup;               /* make no cgroup (--cgroup-manager disabled) */
  bool detach;                  /* false: `run` in the foreground */
  rt_state_json_fn state_json;
  void *state_json_ud;
  rt_progress_fn progress;      /* may be NULL */
  void *progress_ud;
  const struct rt_notify_ops *notify;   /* NULL: no supervisor; borrowed */
  struct cm_err **hook_err;     /* unused by callers; reserved */
};

struct rt_created
{
  pid_t pid;                    /* host pid of the container init */
  uint64_t start_time;          /* /proc/PID/stat starttime, for reuse checks */
  char *cgroup_path;            /* NULL when no cgroup was made; owned */
  char *warning;                /* advice for the user, or NULL; owned */
  /* The inodes of the init's Landlock rules, to store with the state and
   * give back to rt_exec (opaque; owned). */
  char *landlock_pins;
  size_t landlock_pins_len;
  pid_t supervisor_pid;         /* 0: no rt_create_opts.notify */
  uint64_t supervisor_start_time;
};

/* Creates the container process: namespaces, cgroup, mounts, devices,
 * pivot_root, rlimits, Landlock, user and capabilities — everything but
 * seccomp, which is loaded after `start`, just before execve.  Returns once
 * the process is parked on the exec fifo.  Runs prestart and createRuntime
 * hooks in this process, createContainer hooks in the container.  On
 * failure no process and no cgroup is left. */
int rt_container_create (const struct rt_create_opts *o, struct rt_created *out,
                         struct cm_err **err) __attribute__ ((nonnull (1, 2)));

/* Releases a parked container: opens the fifo without blocking and writes
 * one byte.  Fails with ENXIO when no container process waits on it.  With
 * |start_status| (the create's start_status fifo; NULL or missing: do not
 * wait), returns only once the process has exec'd its program, and fails
 * with the container's message when a startContainer hook, seccomp or
 * execve failed (the process has then exited). */
int rt_container_start (const char *exec_fifo, const char *start_status,
                        struct cm_err **err);

struct rt_exec_opts
{
  const struct rt_config *config;       /* the container's, borrowed */
  const struct rt_process *process;     /* what to run, borrowed */
  const char *id, *bundle;
  pid_t init_pid;
  uint64_t init_start_time;
  const char *cgroup_path;      /* NULL: the container has no cgroup */
  const char *console_socket;   /* with process->terminal */
  int preserve_fds;
  /* rt_created.landlock_pins of this container (NULL: none stored) */
  const char *landlock_pins;
  size_t landlock_pins_len;
  /* Namespace-less (rt_exec_vroot): <state>/vroot, where the container's
   * exec server listens. */
  const char *vroot_dir;
};

/* Starts a process inside a running container: the init's namespaces
 * (setns on its pidfd), its cgroup, a Landlock domain with the container's
 * rules, its seccomp filter, and the process's own user, capabilities,
 * rlimits, cwd and env.  Returns once execve succeeded (or with the error
 * from inside, e.g. `exec: "x": executable file not found in $PATH`).  The
 * new process is a child of the caller, which may waitpid() for it. */
int rt_exec (const struct rt_exec_opts *o, pid_t *pid, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));

/* exec into a namespace-less container (docs/nsless.md "exec"): the
 * process is forked by the container's exec server, which the init forked
 * with its Landlock domain and filters in place, so it has the very same
 * ones, is served by the supervisor and lives under the init; its
 * process.user, capabilities and rlimits are applied by the server within
 * the container's own credentials, and refused by field beyond them.
 * With process.terminal its stdio
 * is a pty of the host's devpts whose master goes to
 * o->console_socket.  Returns once execve succeeded, or with the error
 * from inside; *status_fd then gets the fd rt_exec_vroot_status reads the
 * exit status from (close it to let the server reap the process: until
 * then |*pid| stays the process's). */
int rt_exec_vroot (const struct rt_exec_opts *o, pid_t *pid, int *status_fd,
                   struct cm_err **err) __attribute__ ((nonnull (1, 2, 3)));

/* Blocks until the process of rt_exec_vroot exits: its exit status, or
 * 128+N when signal N killed it; -1 when the server went away. */
int rt_exec_vroot_status (int status_fd);

/* /proc/PID/stat field 22, 0 when the process does not exist. */
uint64_t rt_proc_start_time (pid_t pid);

/* True when |pid| exists, is not a zombie, and started at |start_time|. */
bool rt_proc_alive (pid_t pid, uint64_t start_time);

/* Sends |sig| through a pidfd opened before rt_proc_alive() is asked, so
 * it cannot reach a process that merely inherited the pid.  0, or -1 with
 * errno: ESRCH when that process is gone (or cannot be pinned). */
int rt_proc_signal (pid_t pid, uint64_t start_time, int sig);

/* A handle on an existing container (runtime/handle.c): its init, pinned
 * by pid and start time, and its cgroup when it has one.  Every operation
 * on a created container goes through it. */
struct rt_handle;

/* |pid| 0: no init; |cgroup_path| (the path rt_progress reported) NULL: no
 * cgroup.  Fails only when the cgroup cannot be opened. */
int rt_handle_open (pid_t pid, uint64_t start_time, const char *cgroup_path,
                    struct rt_handle **out, struct cm_err **err)
    __attribute__ ((nonnull (4)));
void rt_handle_free (struct rt_handle *h);
bool rt_handle_has_cgroup (const struct rt_handle *h);

/* The cgroup path rt_container_create would report for linux.cgroupsPath
 * |cgroups_path| (NULL: the default from |id|), touching nothing.  *path
 * is NULL when the host has no cgroup hierarchy; caller frees it. */
int rt_handle_cgroup_path (const char *cgroups_path, const char *id,
                           bool systemd, char **path, struct cm_err **err);

/* Sends |sig| to every process of the cgroup (|all|, when there is one),
 * else to the init through a pidfd (errno_ ESRCH: it is gone). */
int rt_handle_kill (struct rt_handle *h, int sig, bool all,
                    struct cm_err **err);

/* Freeze, thaw and the freezer's state (1 frozen, 0 not); these, stats and
 * update fail with ENOENT when there is no cgroup. */
int rt_handle_freeze (struct rt_handle *h, bool frozen, struct cm_err **err);
int rt_handle_is_frozen (struct rt_handle *h, struct cm_err **err);

/* The container's processes: the cgroup's, else the init while it lives;
 * *pids is malloc'd (NULL when none). */
int rt_handle_pids (struct rt_handle *h, pid_t **pids, size_t *n,
                    struct cm_err **err);

struct rt_cgroup_stats
{
  uint64_t memory_usage, memory_limit, memory_max_usage, memory_swap_usage;
  uint64_t oom_kill_count;
  uint64_t pids_current, pids_limit;
  uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns;
  uint64_t cpu_throttled_periods, cpu_throttled_ns;
};
int rt_handle_stats (struct rt_handle *h, struct rt_cgroup_stats *st,
                     struct cm_err **err);

/* Applies new resource values (update). */
int rt_handle_update (struct rt_handle *h, const struct rt_resources *r,
                      struct cm_err **err);

/* Waits, at most |timeout_ms| in all, for the init to exit (pidfd) and
 * then for the cgroup to empty (cgroup.events); no polling.  ETIMEDOUT
 * names what is left. */
int rt_handle_wait (struct rt_handle *h, int timeout_ms, struct cm_err **err);

/* SIGKILLs every process (thawing the container's own freezer first),
 * waits as rt_handle_wait, then removes the cgroup (an rmdir that finds a
 * straggler kills and waits again).  On failure nothing is removed and a
 * later call may retry. */
int rt_handle_destroy (struct rt_handle *h, int timeout_ms,
                       struct cm_err **err);

/* Runs each hook of |l| in order with |state_json| on stdin; honours each
 * hook's timeout (pidfd + poll: no sleeps).  The first failure stops the
 * list and is returned naming the hook kind, index and path. */
int rt_hooks_run (const struct rt_hook_list *l, const char *kind,
                  const char *state_json, struct cm_err **err);

/* Runs every hook of |l| even when some fail (poststart and poststop up
 * to runtime-spec 1.2: "log a warning ... the remaining hooks continue");
 * each failure goes to |warn|.  Returns the number of hooks that failed. */
typedef void (*rt_hook_warn_fn) (const void *ud, const char *msg);
int rt_hooks_run_all (const struct rt_hook_list *l, const char *kind,
                      const char *state_json, rt_hook_warn_fn warn,
                      const void *ud);

/* What the namespace-less mode ignores in |c| (namespaces listed without
 * a path, linux.timeOffsets, linux.rootfsPropagation, the mounts it
 * leaves out, mount options it does not honour): one message per field,
 * naming it, to |warn|.  What it refuses is rt_container_create's error.
 * runtime/vroot-ignored.c */
void rt_vroot_ignored (const struct rt_config *c, rt_hook_warn_fn warn,
                       const void *ud);

/* Parses a signal name ("KILL", "SIGKILL", "sigterm", "RTMIN+3") or number.
 * Returns the signal, or -1. */
int rt_signal_parse (const char *s);

/* For `features` (runtime-spec features.json): the names validation
 * accepts, read from the very tables it uses so the two cannot drift.
 * Each returns the i-th name, or NULL past the end. */
const char *rt_feature_mount_option (size_t i);         /* mount.c */
const char *rt_feature_namespace (size_t i);            /* container.c */
const char *rt_feature_seccomp_action (size_t i);       /* seccomp.c */
const char *rt_feature_seccomp_operator (size_t i);
/* Also stores the flag's SECCOMP_FILTER_FLAG_* value in *flag. */
const char *rt_feature_seccomp_flag (size_t i, unsigned *flag);

/* ---- what this kernel offers (runtime/kfeat.c) ------------------------ */

/* Groups of facts; each is probed the first time it is asked for and kept
 * for the life of the process, so a container start pays only for what it
 * branches on, and `check` for everything once. */
enum
{
  RT_KF_LANDLOCK = 1u << 0,     /* landlock_abi */
  RT_KF_SECCOMP = 1u << 1,      /* seccomp_* */
  RT_KF_SYSCALLS = 1u << 2,     /* openat2 .. idmapped_mounts */
  RT_KF_NAMESPACES = 1u << 3,   /* userns, timens */
  RT_KF_CGROUP = 1u << 4,       /* cgroup_layout, cgroup_*_controllers */
  RT_KF_OVERLAY = 1u << 5,      /* overlay, overlay_userxattr */
  RT_KF_BPF_DEVICE = 1u << 6,   /* bpf_device */
  RT_KF_NOTIFY_SYNC = 1u << 7,  /* seccomp_notify_sync */
  RT_KF_ALL = (1u << 8) - 1,
};

/* A fact the probe could not establish (it needs a privilege this process
 * lacks), as opposed to 0 = absent and 1 = present. */
#define RT_KF_UNKNOWN (-1)

struct rt_kfeat
{
  unsigned probed;              /* RT_KF_* groups filled in */
  int landlock_abi;             /* 0: no Landlock */
  bool seccomp_filter;          /* SECCOMP_RET_KILL_PROCESS available */
  bool seccomp_notify;          /* user notification (GET_NOTIF_SIZES) */
  unsigned seccomp_flags;       /* SECCOMP_FILTER_FLAG_* the kernel takes */
  /* SECCOMP_IOCTL_NOTIF_SET_FLAGS takes SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
   * (6.6): a trapped call wakes its supervisor on the same CPU.  Probed by
   * a child (it needs a listener); a supervisor asks its own listener. */
  bool seccomp_notify_sync;
  bool openat2, pidfd, close_range, clone3, clone_into_cgroup;
  bool fsopen, mount_setattr;
  int idmapped_mounts;          /* MOUNT_ATTR_IDMAP; may be RT_KF_UNKNOWN */
  bool userns;                  /* this user can make a user namespace */
  bool timens;
  const char *cgroup_layout;    /* "v2", "v1", "hybrid" or "none" */
  char *cgroup_v1_controllers;  /* "cpu memory ..." (empty: none) */
  char *cgroup_v2_controllers;  /* the v2 root's cgroup.controllers */
  bool overlay;                 /* listed in /proc/filesystems */
  int overlay_userxattr;        /* may be RT_KF_UNKNOWN */
  int bpf_device;               /* 0: the device program loads, else errno */
};

/* The facts of the groups in |what| (and of any probed before).  Probes
 * make no lasting change: nothing is mounted, attached or left open.  Not
 * thread-safe: first call it from one thread. */
const struct rt_kfeat *rt_kfeat (unsigned what);

/* Whether the overlay mounts of |c| are made inside the container's user
 * namespace (they then need "userxattr"): |c| has a user namespace and
 * this runtime is not root of the initial one.  A root runtime makes them
 * itself, from the host (runtime/overlay-host.c). */
bool rt_overlay_in_userns (const struct rt_config *c);

/* ---- process-wide settings from the CLI --------------------------------- */

/* Process-wide defaults of run.oci.sandlock.disable (|disable|) or
 * .degrade, from the runtime's config file (|rank| 1) or a global flag
 * (|rank| 2): a higher rank replaces a lower one, and a container's own
 * annotation replaces both.  |value| is a protection list, validated now;
 * |origin| names where it came from in errors ("--sandlock-disable"). */
int rt_confine_set_default (bool disable, const char *value,
                            const char *origin, int rank,
                            struct cm_err **err);

/* From the runtime's config file ("lockAnnotations": true): a container's
 * annotations may only narrow its confinement; disable, degrade and
 * fs_writable are refused with an error naming |origin|. */
void rt_confine_lock_annotations (const char *origin);

/* Where compiled seccomp programs of config-supplied profiles are cached
 * (a directory only the runtime's user can write; NULL: no cache). */
void rt_confine_set_cache_dir (const char *dir);

/* Human-readable status of each protection on this kernel (for `check`),
 * one "name: status" line each, into a malloc'd string. */
char *rt_confine_describe_host (void);

/* How device access is restricted on this host, one line (for `check` and
 * `features`); malloc'd. */
char *rt_cgroup_devices_describe (void);

#endif
