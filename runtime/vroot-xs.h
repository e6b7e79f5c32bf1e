/* The exec server of a namespace-less container (docs/nsless.md "exec"):
 * a process forked by the init once its Landlock domain, the trap filter
 * and the config's seccomp filter are in place, right before it execs the
 * container's program, so it has them all — the very same domain and
 * filters, not copies — and every process it forks for `sandlock-oci
 * exec` has them too, under the init (so the supervisor serves it, and
 * ps, kill and delete find it).  It listens on <state>/vroot/exec.sock,
 * bound by the runtime at create.
 *
 * The protocol, one SOCK_SEQPACKET message each way:
 *   request:  struct vr_xs_req (version VR_XS_VERSION, nothing else is
 *             taken), then nrlimits struct vr_xs_rlimit, ngids uint32_t,
 *             then NUL-terminated cwd, args, env, the scheduler's policy
 *             and the I/O priority's class when present, ending the
 *             message; the
 *             process's stdio and preserved fds with SCM_RIGHTS.  The
 *             server takes it only from the container's owner (the peer's
 *             uid) and still checks every count, length and value.
 *   replies:  struct vr_xs_msg — STARTED (pid), or ERROR (text); then
 *             EXITED (code: the exit status, or 128+N for signal N).  The
 *             process is reaped only once the client hangs up, so its pid
 *             stays its own while the client may signal it.
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_XS_H
#define SANDLOCK_RUNTIME_VROOT_XS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "config.h"

#define VR_XS_SOCK "exec.sock"
#define VR_XS_MAGIC 0x73786c76u
#define VR_XS_MAX (128u << 10)  /* a request's bytes */
#define VR_XS_VERSION 2
#define VR_XS_MAXFDS 200        /* stdio + --preserve-fds */
#define VR_XS_MAXGIDS 1024      /* process.user.additionalGids */
#define VR_XS_MAXRLIMITS 64     /* process.rlimits */

/* The process's fields the handler applies (docs/nsless.md "exec"), in
 * the form the namespaced exec applies them: the rlimit and capability
 * plans the runtime made from process.rlimits and process.capabilities
 * (names already checked). */
struct vr_xs_req
{
  uint32_t magic, version;
  uint32_t nargs, nenv, nfds;
  uint32_t terminal;            /* fd 0 is a tty: make it the ctty */
  uint32_t uid, gid, umask;     /* process.user; umask 0..0777 */
  uint32_t ngids, nrlimits;
  uint32_t noroot;              /* the capability plan's SECBIT_NOROOT */
  uint64_t bounding, effective, permitted, inheritable, ambient;
  /* process.scheduler and process.ioPriority (1: present; their names
   * are strings after env, checked where they are applied) */
  uint32_t sched, ioprio;
  int32_t nice, sched_priority, io_priority;
  uint32_t zero;
  uint64_t runtime, deadline, period;
};

struct vr_xs_rlimit
{
  int32_t resource;             /* RLIMIT_* */
  uint32_t zero;
  uint64_t soft, hard;
};

enum
{
  VR_XS_STARTED = 1,
  VR_XS_ERROR,
  VR_XS_EXITED,
};

struct vr_xs_msg
{
  uint32_t kind;
  int32_t pid;
  int32_t code;                 /* EXITED: status; ERROR: errno */
  char text[512];
};

/* Runtime, at create: the listening socket at |dir|/exec.sock (mode 0600,
 * the path reached through |dir|'s fd, so its length does not matter),
 * at an fd >= |min_fd|, close-on-exec.  Returns the fd or -1. */
int vr_xs_listen (const char *dir, int min_fd, struct cm_err **err);

/* The init, after its seccomp filter: forks the server on |lfd| (and
 * closes |lfd| in the init).  0, or -1.  The server is a "clone child"
 * of the init (no exit signal): a wait for any child in the container's
 * program neither sees nor waits for it. */
int vr_xs_spawn (int lfd, struct cm_err **err);

/* Sends/receives one message with up to VR_XS_MAXFDS fds (received ones
 * close-on-exec).  recv: the byte count (0 at EOF) or -1. */
int vr_xs_send (int sock, const void *buf, size_t len, const int *fds,
                size_t nfds);
ssize_t vr_xs_recv (int sock, void *buf, size_t len, int *fds, size_t *nfds);

/* True when |pid| is the exec server (a child of the init with no exit
 * signal: /proc/<pid>/stat field 38 is 0). */
bool vr_xs_is_server (pid_t pid);

#endif
