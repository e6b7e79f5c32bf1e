/* The namespace-less supervisor's handlers (docs/nsless.md): each path
 * system call the container makes is read from the caller, validated
 * (SECCOMP_IOCTL_NOTIF_ID_VALID after every read of its memory), resolved
 * in the view (runtime/vroot.h) and done here, on pinned fds; the result
 * goes back as a value, an errno, bytes written into the caller, or an fd
 * injected with SECCOMP_ADDFD_FLAG_SEND.  A handler never answers CONTINUE
 * after it has looked at a path: the kernel would read the string again.
 *
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_SUP_H
#define SANDLOCK_RUNTIME_VROOT_SUP_H

#include <linux/seccomp.h>
#include <stdint.h>

#include "vroot.h"

struct vr_task
{
  pid_t tgid;
  char *cwd;                    /* canonical virtual cwd of the thread group */
  char *exe;                    /* virtual path of the last exec, or NULL */
};

struct vr_sup
{
  const struct vroot *v;        /* borrowed */
  pid_t init;                   /* the container's first process */
  struct vr_task *t;
  size_t nt;
  char *init_cwd;
  /* The container's kernel cwd, never moved (chdir is virtual): a
   * private directory of symlinks NAME -> /proc/self/fd/VR_EXEC_FD, so an
   * exec path rewritten in place to its own last name runs the file the
   * supervisor injected (runtime/vroot-exec.c).  Borrowed. */
  int exec_dir;
  /* config.json's hostname and domainname for uname (NULL: the host's).
   * Borrowed. */
  const char *hostname, *domainname;
  /* The fast path's pinned parents; cleared after every call of the
   * write family (runtime/vroot.h). */
  struct vr_dcache dcache;
  /* The host's network stays closed (runtime/vroot-inet.c). */
  bool inet_closed, tcp_connect_closed;
  /* config.json lists a network namespace: /proc/net's socket tables
   * show the container's own sockets (vroot-procnet.c). */
  bool netns;
  /* Unix sockets bound in the view: their names (vroot-sockname.c). */
  struct vr_sockname *names;
  size_t nnames;
};

/* The fd numbers exec injects at (ADDFD_FLAG_SETFD, O_CLOEXEC except the
 * script a shebang interpreter must read). */
#define VR_EXEC_FD 1023
#define VR_INTERP_FD 1022
#define VR_SCRIPT_FD 1021
/* The numbers one exec uses: those above, or, under a caller's soft
 * RLIMIT_NOFILE of 1023 or less, free ones below it (vroot-execfd.c);
 * -EMFILE when there are not three. */
struct vr_exec_fds
{
  int exec, interp, script;
};
struct vr_call;
int vr_exec_fds (struct vr_call *c, struct vr_exec_fds *x);
/* A name in the exec directory that leads to fd |num| and ends in |name|,
 * made if missing: |name| itself for VR_EXEC_FD, else "XX/name" (XX: two
 * bytes for |num|), into |rel|. */
int vr_exec_link (struct vr_call *c, const char *name, int num,
                  char rel[NAME_MAX + 4]);
/* The name of the memfd copy of a file the caller may execute and not
 * read (vroot-exec.c): vr_fd_writable refuses changing its metadata. */
#define VR_EXEC_ONLY_MEMFD "vroot-exec-only"

/* The system calls the supervisor services (libseccomp names), and the
 * ones refused with EPERM in namespace-less mode because they would
 * resolve a path against the host root and are not serviced yet. */
extern const char *const vr_serviced_syscalls[];
extern const char *const vr_refused_syscalls[];

/* |init|: the container's first process (0: the caller of the first
 * notification, which is the init: it installs the filter); |cwd|:
 * process.cwd (canonical virtual path); |exec_dir|: see above. */
void vr_sup_init (struct vr_sup *s, const struct vroot *v, pid_t init,
                  const char *cwd, int exec_dir);
void vr_sup_fini (struct vr_sup *s);

/* Services |req| the way rt_notify_ops.handle is called: fills |resp|
 * (.id set by the caller) and returns 0, or returns 1 when the call was
 * already answered (an fd injected with ADDFD_FLAG_SEND).  A trapped call
 * of vr_refused_syscalls gets EPERM. */
int vr_sup_answer (struct vr_sup *s, int listener,
                   const struct seccomp_notif *req,
                   struct seccomp_notif_resp *resp);

/* vr_sup_answer, then SECCOMP_IOCTL_NOTIF_SEND.  0 once answered (or the
 * caller is gone); -errno only when the listener itself failed. */
int vr_sup_handle (struct vr_sup *s, int listener,
                   const struct seccomp_notif *req);

/* The native numbers of every call to trap (serviced, refused, and the
 * credential calls of vroot-thread.h, answered CONTINUE: one filter, one
 * list, so the trap and the handlers cannot drift).  Returns
 * how many were written to |out| (at most |max|). */
size_t vr_trapped_syscalls (int *out, size_t max);

/* ---- shared by the handler files ---- */

struct vr_call
{
  struct vr_sup *s;
  int listener;
  const struct seccomp_notif *req;
  struct vr_task *task;
  struct vr_ctx ctx;
  pid_t tid;
};

/* An answer: a value (>= 0) or -errno, or VR_ANSWERED when an fd was
 * injected with ADDFD_FLAG_SEND (which answers the call itself). */
#define VR_ANSWERED INT64_MIN
/* Let the kernel run the call as issued (exec only: vroot-exec.c). */
#define VR_CONTINUE (INT64_MIN + 1)
/* A fast path's "not this one": the walk answers (vroot-fast.c). */
#define VR_SLOW (INT64_MIN + 2)

int64_t vr_do_open (struct vr_call *c);
int64_t vr_do_exec (struct vr_call *c);
int64_t vr_do_stat (struct vr_call *c);
int64_t vr_do_access (struct vr_call *c);
int64_t vr_do_readlink (struct vr_call *c);
int64_t vr_do_statfs (struct vr_call *c);
int64_t vr_do_cwd (struct vr_call *c);
int64_t vr_do_write (struct vr_call *c);
int64_t vr_do_sock (struct vr_call *c);
int64_t vr_do_getdents (struct vr_call *c);
int64_t vr_do_xattr (struct vr_call *c);
int64_t vr_do_uname (struct vr_call *c);
int64_t vr_do_fdmeta (struct vr_call *c);
int64_t vr_do_send (struct vr_call *c);

/* Closes the host's network when config.json asked for a private network
 * namespace and no net_allow_* (vroot-inet.c): sets |s|'s flags, and
 * |ll|'s handled TCP rights with no port. */
struct rt_ll_policy;
void vr_inet_close (struct vr_sup *s, struct rt_ll_policy *ll);
/* 0 when an on-behalf connect, bind or send may name an address of
 * |family| with |msg_flags|, else -EACCES. */
int vr_inet_check (const struct vr_sup *s, int family, int msg_flags);
/* listen(2): with the network closed, refused on an inet socket. */
int64_t vr_do_listen (struct vr_call *c);

/* vr_resolve_at under openat2's RESOLVE_BENEATH or RESOLVE_IN_ROOT
 * (|resolve|): the answer lies under |dirfd|'s directory, else -EXDEV
 * (vroot-beneath.c). */
int vr_resolve_scoped (struct vr_call *c, int dirfd, const char *path,
                       int flags, uint64_t resolve, struct vr_path *out);

/* 0 when |fd|, opened with |oflags| from entry |e| (NULL: the caller's
 * own fd), may be handed to the container: -EPERM for a host device node
 * met in the rootfs (vroot-devnode.c). */
int vr_devnode_check (const struct vr_entry *e, int fd, int oflags);
/* The same, and the S_IFMT of what |fd| is (0 when no fstat was made). */
int vr_devnode_type (const struct vr_entry *e, int fd, int oflags,
                     mode_t *type);

/* /proc/<pid>/maps, smaps, numa_maps opened read-only (vroot-procmaps.c):
 * served from a copy whose host paths are the view's.  vr_procmaps_wanted
 * says which kind (VR_MAPS_NO: not one); vr_procmaps_copy reads the
 * opened |fd| and returns a memfd of the copy, or -errno. */
enum { VR_MAPS_NO, VR_MAPS, VR_MAPS_NUMA };
int vr_procmaps_wanted (const struct vr_path *p, int oflags);
int vr_procmaps_copy (struct vr_call *c, int fd, int kind);
/* /proc/<pid>/mountinfo, mounts, mountstats opened read-only
 * (vroot-procmounts.c): |fd| (the host's file, opened in the caller's
 * rights) is closed and a memfd of the view's mount table returned in its
 * place; any other file: |fd| itself.  -errno on failure (|fd| closed). */
int vr_procmounts_serve (struct vr_call *c, const struct vr_path *p,
                         int oflags, int fd);
/* /proc/<pid>/net's socket tables (tcp, udp, unix, packet, …) opened
 * read-only where config.json lists a network namespace
 * (vroot-procnet.c): |fd| is closed and a memfd returned holding its
 * header and the lines of the container's own sockets; any other file:
 * |fd| itself.  -errno on failure (|fd| closed). */
int vr_procnet_serve (struct vr_call *c, const struct vr_path *p, int oflags,
                      int fd);

/* Unix sockets bound in the view (vroot-sockname.c): vr_sockname_bound
 * records that |sock| was bound on-behalf as |kname| (the name the
 * kernel keeps) for the container's |vpath|; vr_sockname_view gives the
 * view path of a kernel name — by socket inode |ino| (0: unknown), else
 * by the name alone — or NULL.  vr_do_sockname services getsockname
 * and getpeername with the view's names. */
void vr_sockname_bound (struct vr_sup *s, int sock, const char *kname,
                        const char *vpath);
const char *vr_sockname_view (const struct vr_sup *s, unsigned long ino,
                              const char *kname);
void vr_sockname_free (struct vr_sup *s);
int64_t vr_do_sockname (struct vr_call *c);

/* 0 when metadata may be changed through |dup| (a dup of a caller's fd):
 * -EROFS under a read-only entry or path of the view, -EPERM for a host
 * device node (vroot-fdmeta.c). */
int vr_fd_writable (struct vr_call *c, int dup);
/* 0 when the object of |dup| may be opened for writing: -EROFS under a
 * read-only entry or path of the view (a /proc/self/fd/N reopen). */
int vr_fd_readonly (struct vr_call *c, int dup);

/* Caller memory: strings are read page by page (an unmapped next page is
 * not an error), then the notification is re-validated.  -errno. */
int vr_read_path (struct vr_call *c, uint64_t addr, char out[PATH_MAX]);
int vr_read_mem (struct vr_call *c, uint64_t addr, void *buf, size_t len);
int vr_write_mem (struct vr_call *c, uint64_t addr, const void *buf,
                  size_t len);
/* Writes even into read-only pages (/proc/<tid>/mem, FOLL_FORCE): only
 * for the exec path rewrite, whose string is often a .rodata literal. */
int vr_poke_mem (struct vr_call *c, uint64_t addr, const void *buf,
                 size_t len);
/* SECCOMP_IOCTL_NOTIF_ID_VALID: -ENOENT when the caller is gone. */
/* A field of /proc/<tid>/status ("PPid:", "Umask:"); -1 if none. */
long vr_status_field (pid_t tid, const char *key, int base);
int vr_valid (struct vr_call *c);

/* A dup of the caller's fd |fd| (pidfd_getfd), O_CLOEXEC here. */
int vr_caller_fd (struct vr_call *c, pid_t pid, int fd);

/* The host path of our fd |fd| (readlink of /proc/self/fd/N) into
 * |host| (PATH_MAX): 0, or -errno. */
int vr_fd_host_path (int fd, char *host);

/* The virtual path of the caller's directory fd |dirfd| into |vpath|
 * (PATH_MAX): 0, -ENOTDIR, -EACCES outside the view, or -errno. */
int vr_caller_dir (struct vr_call *c, int dirfd, char *vpath);

/* Runs |fn| (|arg|) on a detached thread that answers the notification
 * itself: VR_ANSWERED, or -errno when no thread could be started. */
int64_t vr_answer_later (void *(*fn) (void *), void *arg);

/* FIFOs (vroot-fifo.c).  Whether an open with |oflags| may wait for the
 * other end of a FIFO (no O_NONBLOCK, O_RDWR, O_PATH, O_DIRECTORY). */
bool vr_fifo_may_wait (int oflags);
/* The caller's blocking open of the FIFO |src| names (O_PATH or an open
 * fd; consumed), done on a thread of its own that answers with its fd;
 * |held| (consumed, or -1): a reader of it the supervisor opened, kept
 * until that open counts.  VR_ANSWERED, or -errno (ENFILE: too many
 * waits). */
int64_t vr_fifo_wait (struct vr_call *c, int src, int flags, int held);

/* Resolves |path| at |dirfd| (AT_FDCWD: the virtual cwd) for the caller. */
int vr_resolve_at (struct vr_call *c, int dirfd, const char *path, int flags,
                   struct vr_path *out);

/* The resolved object as (fd, name) for the *at() calls: its parent and
 * last name, or — for a mount point — the entry's fd and "" (use
 * AT_EMPTY_PATH then: *empty is set). */
int vr_at (struct vr_call *c, const struct vr_path *p, char name[NAME_MAX + 1],
           int *empty);

/* What to inject for an open(O_PATH) whose O_PATH fd here is |pfd|
 * (ADDFD cannot inject an O_PATH file): a new fd of the same object,
 * O_RDONLY (|O_DIRECTORY), opened in the current credentials; -ELOOP for
 * a symlink, -EACCES for a device, FIFO or socket, or -errno
 * (vroot-opath.c). */
int vr_opath_fd (int pfd);

/* /dev/tty (vroot-devtty.c): 1 when the resolved object is char 5:0 (an
 * open of it is the caller's controlling terminal), 0 if not, or -errno;
 * and the answer to an open of it with |flags|: the caller's controlling
 * terminal, reopened from an fd it holds, injected; or -ENXIO. */
int vr_devtty_is (const struct vr_path *p);
int64_t vr_devtty_open (struct vr_call *c, int flags);

/* Injects |fd| as the call's result (ADDFD_FLAG_SEND); fails closed. */
int64_t vr_inject (struct vr_call *c, int fd, bool cloexec);

/* Whose rights (vroot-cred.c): the handlers act in the calling thread's
 * fs credentials.  vr_cred_enter sets them on this thread (|real|: the
 * real ids, as access(2) checks) — 1 when the thread has them (switched,
 * or equal to the supervisor's own: no system call then), 0 when the
 * supervisor has no capability and so already has them, -errno; vr_cred_leave
 * restores the supervisor's own.  vr_cred_out steps out to the
 * supervisor's own for one of its own actions (the caller's memory and
 * fds, the exec directory) and returns what vr_cred_back needs to step
 * back in. */
int vr_cred_enter (pid_t tid, bool real);
void vr_cred_leave (void);
/* The credentials this thread acts in, as a number: 0 for the
 * supervisor's own, else one that equal credentials (fsuid, fsgid,
 * groups, effective capabilities) share and no other ever gets.  The
 * pinned parents are keyed by it (runtime/vroot.h). */
uint64_t vr_cred_tag (void);
bool vr_cred_out (void);
void vr_cred_back (bool was);
/* The same for process_vm_readv/writev alone: CAP_SYS_PTRACE raised in
 * the caller's credentials (their ptrace check reads the real ids, which
 * the switch leaves the supervisor's). */
bool vr_cred_mem_out (void);
void vr_cred_mem_back (bool was);

/* The caller's real, effective, saved and fs uid and gid, for a thread
 * that makes one on-behalf socket call and ends (vroot-ids.c): a unix
 * socket records the sending thread's ids.  vr_ids_of reads them (|same|:
 * this thread has those real/effective/saved ids already); vr_ids_become
 * sets them on this thread for good.  0 or -errno. */
struct vr_ids
{
  unsigned u[4], g[4];
  bool same;
};
int vr_ids_of (pid_t tid, struct vr_ids *out);
int vr_ids_become (const struct vr_ids *ids);

/* The caller's umask (from /proc/<tid>/status; kept with its credentials
 * by a root runtime's supervisor: vroot-thread.c). */
mode_t vr_umask (struct vr_call *c);

#endif
