/* criu-lite internals: the image records (docs/checkpoint.md "Image
 * format") and the plan the restore stub executes.  Everything here is
 * fixed-size little-endian x86_64 layout; the image is untrusted input and
 * image.c validates every field before restore uses it. */
#ifndef SANDLOCK_CRIU_LITE_INTERNAL_H
#define SANDLOCK_CRIU_LITE_INTERNAL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "common/err.h"

#define CL_MAGIC "CRIULITE"
#define CL_VERSION 4

/* XXH64, seed 0, of pages.img (criu-lite/xxhash.c: libxxhash0 through
 * dlopen), one-shot or streamed.  load fails, naming the package, when the
 * library is missing; init loads it too; update and digest only follow a
 * successful init; fini frees the state (safe after a failed init). */
struct cl_xxh64
{
  void *state;                 /* XXH64_state_t of the library's */
};
int cl_xxh64_load (struct cm_err **err);
int cl_xxh64_init (struct cl_xxh64 *s, struct cm_err **err);
void cl_xxh64_update (struct cl_xxh64 *s, const void *p, size_t n);
uint64_t cl_xxh64_digest (const struct cl_xxh64 *s);
void cl_xxh64_fini (struct cl_xxh64 *s);
int cl_xxh64 (const void *p, size_t n, uint64_t *out, struct cm_err **err);

#define CL_PAGE 4096ull
#define CL_TASK_TOP 0x7ffffffff000ull   /* 47-bit user address space */
#define CL_XSTATE_MAX 65536u
#define CL_MAX_THREADS 1024u
#define CL_MAX_FD 65536

enum cl_sect
{
  CL_S_PROC = 1,
  CL_S_THREADS,
  CL_S_VMAS,
  CL_S_PAGES,     /* runs of pages.img: where each lands */
  CL_S_FDS,
  CL_S_STRINGS,
  CL_S_PIPES,     /* what each pipe held: struct cl_pipe + its bytes */
  CL_S_FDX,       /* state of eventfd/timerfd/signalfd/epoll/listening
                     socket fds: struct cl_fdx + its payload */
  CL_S_SIGNALS,   /* pending signals: struct cl_sigpend */
  CL_S_SHMEM,     /* shared memory objects: struct cl_shm */
  CL_S_COUNT = CL_S_SHMEM
};

struct cl_sect_desc
{
  uint32_t type;
  uint32_t pad;
  uint64_t offset, length;     /* within core.img */
  uint8_t sha256[32];
};

struct cl_header
{
  char magic[8];
  uint32_t version;
  uint32_t nsect;
  char kernel[72];             /* uname -r of the capturing host */
  uint64_t xcr0;               /* XSAVE features enabled where captured */
  uint32_t xstate_size;        /* NT_X86_XSTATE size per thread */
  uint32_t pad;
  uint64_t pages_len;          /* size of pages.img */
  uint64_t pages_xxh64;         /* XXH64 of pages.img (docs/checkpoint.md) */
  uint8_t pad2[24];
  struct cl_sect_desc sect[CL_S_COUNT];
  uint8_t header_sha256[32];   /* over everything above */
};

/* The mm layout handed back to prctl(PR_SET_MM_MAP). */
struct cl_mm
{
  uint64_t start_code, end_code, start_data, end_data;
  uint64_t start_brk, brk, start_stack;
  uint64_t arg_start, arg_end, env_start, env_end;
};

struct cl_proc
{
  struct cl_mm mm;
  uint64_t vdso, vdso_len, vvar, vvar_len, vclock, vclock_len;
  uint64_t auxv[64];
  uint32_t auxv_len;           /* bytes used in auxv */
  uint32_t umask;
  uint32_t nthreads;
  uint32_t cwd;                /* string offset */
  uint64_t rlim[16][2];        /* RLIMIT_* soft, hard */
  uint32_t personality;
  uint32_t pad;
  char comm[16];
  uint64_t sigaction[64][4];   /* kernel struct sigaction: handler, flags,
                                  restorer, mask; index signo - 1 */
  uint64_t itimer[3][4];       /* ITIMER_REAL/VIRTUAL/PROF, struct itimerval */
};

struct cl_thread
{
  uint32_t tid;
  uint32_t xstate_len;
  uint64_t sigmask;
  struct user_regs_struct regs;
  uint64_t rseq_addr;          /* 0: none registered */
  uint32_t rseq_len, rseq_sig;
  uint64_t tid_address;        /* clear_child_tid (PR_GET_TID_ADDRESS) */
  uint64_t altstack_sp, altstack_size;
  int32_t altstack_flags;
  uint32_t pad2;
  /* followed by xstate_len bytes, then padding to 64 */
};

enum cl_vma_kind
{
  CL_VMA_ANON = 1,            /* private anonymous (heap, stack, malloc) */
  CL_VMA_ANON_SHARED,         /* shared anonymous, memfd, deleted files */
  CL_VMA_FILE,                /* private file mapping (dirty pages saved) */
  CL_VMA_FILE_SHARED,         /* shared file mapping (the file holds it) */
};

#define CL_VMA_GROWSDOWN 1u

struct cl_vma
{
  uint64_t start, end, pgoff;
  uint32_t prot, kind;
  uint32_t path;               /* string offset; 0 for anonymous */
  uint32_t flags;              /* CL_VMA_* */
  uint64_t fsize, fmtime_ns;   /* the mapped file when captured */
};

struct cl_run
{
  uint64_t addr, len, off;     /* off: page-aligned offset in pages.img */
};

enum cl_fd_kind
{
  CL_FD_FILE = 1,              /* regular file: reopened, offset restored */
  CL_FD_DIR,
  CL_FD_DEV,                   /* character device reopened by path */
  CL_FD_INHERIT,               /* the root's stdio: a dup of the restorer's
                                  fd |pos| (0-2) */
  CL_FD_SKIPPED,               /* --skip-unsupported: listed, not restored */
  CL_FD_PIPE,                  /* one end of pipe |pos| (its inode) */
  CL_FD_FIFO,                  /* named FIFO |path|, bytes in pipe |pos| */
  CL_FD_EVENTFD,               /* these five: state in section fdx */
  CL_FD_TIMERFD,
  CL_FD_SIGNALFD,
  CL_FD_EPOLL,
  CL_FD_LISTEN,                /* a listening TCP or unix stream socket */
};
/* EVENTFD..LISTEN: |pos| is the object's id, (tree index + 1) << 32 | fd
 * of the fd that holds its fdx record; other fds holding the same open
 * file (fork, dup) carry the same id and no record. */
#define CL_FD_KIND_MAX CL_FD_LISTEN
/* The status flags a restored pipe, FIFO or fdx fd gets back (F_SETFL). */
#define CL_FD_STATUS (O_NONBLOCK | O_APPEND | O_DIRECT)

/* Section fdx: one record per fd of kinds EVENTFD..LISTEN, in fd order,
 * |len| bytes of payload after it, padded to 8. */
struct cl_fdx
{
  int32_t fd;
  uint32_t kind;               /* CL_FD_* */
  uint32_t len;
  uint32_t pad;
};

struct cl_fdx_eventfd
{
  uint64_t count;
  uint32_t semaphore, pad;
};

struct cl_fdx_timerfd
{
  int32_t clockid;
  uint32_t settime_flags;      /* TFD_TIMER_ABSTIME... as set */
  uint64_t ticks;              /* expirations not read yet */
  uint64_t value_ns, interval_ns; /* it_value is what was left */
};

struct cl_fdx_signalfd
{
  uint64_t sigmask;
};

/* Payload of an epoll: |len| / sizeof of these, one per watched fd. */
struct cl_fdx_epoll
{
  int32_t tfd;
  uint32_t events;
  uint64_t data;
};
#define CL_EPOLL_MAX 4096u

#define CL_SOCK_REUSEADDR 1u
#define CL_SOCK_REUSEPORT 2u
#define CL_SOCK_V6ONLY 4u
struct cl_fdx_listen
{
  uint32_t family, type, protocol;
  uint32_t opts;               /* CL_SOCK_* */
  uint32_t backlog;            /* 0: not known (listen with SOMAXCONN) */
  uint32_t addrlen;
  uint8_t addr[128];           /* getsockname */
  uint32_t fmode, fuid, fgid;  /* a unix socket's file (fmode 0: none) */
  uint32_t queued;             /* connections in its accept queue at the
                                  checkpoint: not carried, listed by
                                  restore (at most CL_LISTEN_QUEUE_MAX) */
};
#define CL_LISTEN_QUEUE_MAX 65536u

/* A pipe's buffered bytes, as every process holding it saw them; |len|
 * bytes follow, then padding to 8. */
struct cl_pipe
{
  uint64_t id;                 /* the pipe's inode where captured */
  uint32_t len, cap;           /* bytes held; F_GETPIPE_SZ */
};
#define CL_PIPE_MAX (1u << 20) /* /proc/sys/fs/pipe-max-size's default */

/* A pending signal: queued to thread |tid| (its ns tid), or to the
 * process (tid 0), with the siginfo PTRACE_PEEKSIGINFO gave. */
struct cl_sigpend
{
  int32_t tid;
  uint32_t pad;
  uint8_t info[128];           /* siginfo_t: si_signo first */
};
#define CL_SIGPEND_MAX 65536u

/* A MAP_SHARED mapping of shared memory (shared anonymous, memfd, SysV
 * shm): the object it maps, identified by the device and inode that
 * /proc/PID/maps shows, so that processes mapping the same object map one
 * object again.  Its content is in the pages.img of process |owner| (its
 * ns pid; this process's own when it saved it), at that process's mapping
 * of the same object. */
struct cl_shm
{
  uint64_t start;              /* the mapping (a CL_VMA_ANON_SHARED) */
  uint64_t dev, ino;
  int32_t owner;
  uint32_t pad;
};

/* Objects seen so far in one dump of a tree (dump-mm.c). */
struct cl_shm_seen
{
  uint64_t dev, ino, pgoff, len;
  int32_t owner;
};
struct cl_shm_tab
{
  struct cl_shm_seen *v;
  size_t n;
};

struct cl_fd
{
  int32_t fd;
  uint32_t kind;
  uint32_t flags;              /* open(2) flags from fdinfo */
  uint32_t path;               /* string offset (kind text when SKIPPED) */
  uint64_t pos;
};

/* A loaded, verified image (image.c). */
struct cl_image
{
  struct cl_header hdr;
  char *core;                  /* whole core.img */
  size_t core_len;
  const struct cl_proc *proc;
  const char *threads;         /* nthreads variable-size records */
  size_t threads_len;
  const struct cl_vma *vmas;
  size_t nvmas;
  const struct cl_run *runs;
  size_t nruns;
  const struct cl_fd *fds;
  size_t nfds;
  const char *pipes;           /* section pipes, checked */
  size_t pipes_len;
  const char *fdx;             /* section fdx, checked */
  size_t fdx_len;
  const char *strings;
  size_t strings_len;
  const struct cl_sigpend *sigs;
  size_t nsigs;
  const struct cl_shm *shms;
  size_t nshms;
  int pages_fd;
};

/* The image being written (dump*.c) */
struct cl_buf
{
  char *p;
  size_t len, cap;
};

void cl_buf_add (struct cl_buf *b, const void *p, size_t n);
void cl_buf_pad (struct cl_buf *b, size_t align);
uint32_t cl_str_add (struct cl_buf *strings, const char *s);

struct cl_tracee
{
  struct user_regs_struct orig;  /* as seized */
  bool touched;                  /* registers changed by an injection */
  int held_signal;               /* caught while injecting: re-sent */
};

struct cl_dump
{
  pid_t pid;
  /* the objects the caller gave the tree as its stdio, fds 0-2 (dev,
   * ino, mount id: ino 0 none, mount id 0 any; criu_dump_opts.stdio): a
   * process's fd naming one of them is restored by inheritance */
  uint64_t stdio[3][3];
  struct cl_tracee *tr;          /* per tid, same order */
  uint64_t syscall_ip;           /* a `syscall` instruction in the vDSO */
  uint64_t scratch;              /* a page mapped in the tracee for
                                    injected syscalls' results */
  struct cl_proc proc;
  struct cl_buf threads, vmas, runs, fds, strings, pipes, fdx, sigs, shms;
  struct cl_shm_tab *shm_seen;   /* the whole tree's */
  int pages_fd;                /* pages.img being written */
  uint64_t pages_len;
  struct cl_xxh64 pages_hash;  /* over what was written so far */
  uint32_t xstate_size;
  pid_t *tids;
  size_t ntids;
  /* the processes of the tree captured before this one, in tree order
   * (dump-fdx.c: an eventfd, epoll, … shared with one of them is
   * recorded as that one's) */
  const struct cl_dump *prev;
  size_t nprev;
};

size_t cl_thread_rec_size (uint32_t xstate_len);

struct stat;
/* An fd that is a pipe or (|named|) a FIFO: its record and buffered
 * bytes (dump-pipe.c). */
int cl_dump_pipe (struct cl_dump *d, int fd, const struct stat *st,
                  struct cl_fd *f, bool named, struct cm_err **err);

/* An fd that is an eventfd, timerfd, signalfd, epoll or socket: its
 * record and its state in section fdx (dump-fdx.c); 1 when it is none
 * of the kinds restore re-creates (|*why| then says what it is, when
 * known: a socket that is not listening). */
int cl_dump_fdx (struct cl_dump *d, int fd, const char *link,
                 const struct stat *st, struct cl_fd *f, const char **why,
                 struct cm_err **err);
/* Section fdx's records checked (bounds, sizes, clock ids, addresses),
 * then every epoll's watched fds against the fds section (image-fdx.c). */
int cl_check_fdx (const struct cl_image *img, struct cm_err **err);
int cl_check_epolls (const struct cl_image *img, struct cm_err **err);
/* The backlog of the listening socket of inode |ino| of family
 * |family| in |pid|'s network namespace, from sock_diag; 0 when not
 * knowable (dump-sockdiag.c).  |*queued|: the connections waiting in its
 * accept queue (0 when not knowable). */
uint32_t cl_listen_backlog (pid_t pid, int family, uint64_t ino,
                            uint32_t *queued);
/* Whether fd |fd| of the image is one it could not carry (skipped). */
bool cl_image_fd_skipped (const struct cl_image *img, int32_t fd);
/* The fdx record of fd |fd|, or NULL (image-fdx.c). */
const struct cl_fdx *cl_image_fdx (const struct cl_image *img, int32_t fd);
/* Every fdx object of the tree made from its record, in the root
 * restorer before the others fork (restore-fdx.c), as the pipes are;
 * the fd of |f|'s object, or -1; all of them closed. */
int cl_fdx_make (const struct cl_image *imgs, size_t n, struct cm_err **err);
int cl_fdx_fd (const struct cl_fd *f);
void cl_fdx_close (void);
/* Registers what each epoll of |img| watched, the fds at their numbers:
 * 0, or an errno. */
int cl_fdx_epoll_fill (const struct cl_image *img);

/* The pipes of a whole tree, made before any restorer forks so that every
 * process inherits them (restore-pipe.c); an fd of |f|'s end, or -1. */
const struct cl_pipe *cl_image_pipe (const struct cl_image *img, uint64_t id);
int cl_pipes_make (const struct cl_image *imgs, size_t n, struct cm_err **err);
int cl_pipes_end (const struct cl_fd *f);
void cl_pipes_close (void);

/* The /proc every capture reads, as a directory fd: opened before the
 * capture chroots into the target's root so that paths read from it are
 * the target's own (criu_dump_opts.target_root). */
int cl_proc_dir_open (struct cm_err **err);
void cl_proc_dir_close (void);
int cl_proc_dir (void);
pid_t cl_ns_tid (pid_t pid, pid_t tid);
DIR *cl_opendir (const char *rel);

int cl_image_write (int dirfd, struct cl_dump *d, struct cm_err **err);
int cl_image_load (const char *dir, struct cl_image *img, struct cm_err **err);
void cl_image_free (struct cl_image *img);
const char *cl_image_str (const struct cl_image *img, uint32_t off);
uint64_t cl_xcr0 (void);

int cl_dump_threads (struct cl_dump *d, struct cm_err **err);
int cl_dump_signals (struct cl_dump *d, struct cm_err **err);
int cl_dump_mm (struct cl_dump *d, struct cm_err **err);
int cl_dump_files (struct cl_dump *d, bool skip_unsupported,
                   struct cm_err **err);
int cl_dump_misc (struct cl_dump *d, struct cm_err **err);
int cl_dump_pending (struct cl_dump *d, struct cm_err **err);
/* A shared memory mapping of |d|: recorded in its section shmem; true
 * when a process dumped before holds its content already (dump-shm.c). */
bool cl_shm_note (struct cl_dump *d, const struct cl_vma *v, uint64_t dev,
                  uint64_t ino);
/* Fails naming the first fd of d->fds through which a file lock is held,
 * or else a mapping of d through which one is (dump-locks.c). */
int cl_dump_locks (struct cl_dump *d, struct cm_err **err);
void cl_stdio_of_root (struct cl_dump *d);
int cl_seize (struct cl_dump *d, struct cm_err **err);
/* While the tree is frozen: seize and interrupt every thread, no wait;
 * once thawed, wait for every stop and seize whatever is new. */
int cl_seize_frozen (struct cl_dump *d, struct cm_err **err);
int cl_seize_finish (struct cl_dump *d, struct cm_err **err);
void cl_normalize_restart (struct user_regs_struct *r);
int cl_inject_prepare (struct cl_dump *d, struct cm_err **err);
int cl_inject (struct cl_dump *d, size_t t, long nr, const long a[6], long *ret,
               struct cm_err **err);
int cl_peek (struct cl_dump *d, uint64_t addr, void *out, size_t n,
             struct cm_err **err);
void cl_inject_finish (struct cl_dump *d);
void cl_release (struct cl_dump *d, bool kill_it);

/* Past the point of no return, outside the stub (phases 1-10 are the
 * stub's, docs/checkpoint.md): the epoll registrations. */
#define CL_PHASE_EPOLL 11

/* tmpfs.img: the contents of the tree's tmpfs mounts (dump-tmpfs.c,
 * restore-tmpfs.c; docs/checkpoint.md).  A header, |count| mount
 * records, then each mount's entries at its |off|: struct cl_tmpfs_ent,
 * the name (relative to the mount, no NUL), the data (a file's bytes, a
 * symlink's target), padding to 8.  Directories come before what they
 * hold. */
#define CL_TMPFS_MAGIC "CLTMPFS\0"
#define CL_TMPFS_MOUNTS 64u
#define CL_TMPFS_NAME 4096u
struct cl_tmpfs_hdr
{
  char magic[8];
  uint32_t version, count;
  uint64_t len;                /* of the whole file */
  uint8_t sha256[32];          /* over everything after the header */
};

struct cl_tmpfs_mount
{
  char path[256];              /* where it is mounted, as the tree saw it */
  uint64_t off, len;           /* its entries in the file */
};

enum cl_tmpfs_type
{
  CL_T_DIR = 1,
  CL_T_REG,
  CL_T_LNK,
  CL_T_FIFO,
};

struct cl_tmpfs_ent
{
  uint32_t type, mode, uid, gid;
  int64_t mtime_sec;
  uint32_t mtime_nsec, name_len;
  uint64_t data_len;
};

/* Writes |dirfd|/tmpfs.img: the contents of those of the |n| mount
 * points |paths| that are tmpfs mounts of process |pid|'s namespace,
 * read from the caller's root, which must be the process's
 * (criu_dump_opts.target_root). */
int cl_tmpfs_dump (int dirfd, pid_t pid, const char *const *paths, size_t n,
                   struct cm_err **err);
/* Verifies tmpfs.img held open as |fd| (checksum, every record and
 * name), then (restore) writes its contents into the caller's tmpfs
 * mounts, which must be there and be tmpfs. */
int cl_tmpfs_check (int fd, struct cm_err **err);
/* The directory |path| (absolute), opened from / one component at a
 * time with O_NOFOLLOW (dump-tmpfs.c): the fd, or -1 and errno. */
int cl_open_dir_path (const char *path);
int cl_tmpfs_restore (int fd, struct cm_err **err);

/* ---- the restore stub (stub.c) ------------------------------------- */

struct cl_stub_vma
{
  uint64_t start, len, pgoff;
  int32_t prot, mflags;        /* final prot; mmap flags without MAP_FIXED */
  int32_t fd;                  /* -1: anonymous */
  int32_t has_pages;
};

/* A call of the seal (criu.h), its pointers resolved. */
struct cl_stub_call
{
  int64_t nr;
  int64_t arg[6];
  int32_t ok_errno;
  int32_t pad;
};

/* A pending signal to queue again: to thread |thread| (an index into
 * the plan's threads) or, -1, to the process. */
struct cl_stub_sig
{
  int32_t thread;
  int32_t signo;
  uint8_t info[128];
};

struct cl_stub_move
{
  uint64_t from, len, spare, to;
};

struct cl_stub_thread
{
  uint64_t frame;              /* the rt_sigframe's uc: rsp for sigreturn */
  uint64_t fs_base, gs_base, tid_address;
  uint64_t stack_lo, stack_len; /* stub stack of this thread */
  uint64_t rseq_addr;
  uint32_t rseq_len, rseq_sig;
  int32_t tid;
  int32_t pad;
};

/* Kernel ABI mirrors (x86_64): struct sigcontext, ucontext, rt_sigframe
 * (arch/x86/include/asm/sigframe.h), prctl_mm_map, clone_args. */
struct cl_sigcontext
{
  uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx;
  uint64_t rax, rcx, rsp, rip, eflags;
  uint16_t cs, gs, fs, ss;
  uint64_t err, trapno, oldmask, cr2, fpstate, reserved1[8];
};

struct cl_ucontext
{
  uint64_t uc_flags, uc_link;
  uint64_t ss_sp;
  int32_t ss_flags, ss_pad;
  uint64_t ss_size;
  struct cl_sigcontext mc;
  uint64_t sigmask;
};

struct cl_sigframe
{
  uint64_t pretcode;
  struct cl_ucontext uc;
  uint8_t info[128];
};

struct cl_mm_map
{
  struct cl_mm mm;
  uint64_t auxv;
  uint32_t auxv_size, exe_fd;
};

struct cl_clone_args
{
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size;
  uint64_t tls, set_tid, set_tid_size, cgroup;
};

struct cl_plan
{
  uint64_t self_start, self_end;
  uint32_t nvma, nrun, nmove, nthread;
  uint64_t vma_off, run_off, move_off, thread_off;  /* from the plan */
  struct cl_mm_map mm_map;
  int32_t pages_fd, report_fd, close_from;
  int32_t use_set_tid;
  int32_t no_clone3;           /* clone3 answered ENOSYS: use clone */
  struct cl_clone_args clone;  /* scratch for the threads' clone3 */
  int64_t tid_scratch;
  uint64_t seal_off;           /* nseal struct cl_stub_call, then data */
  uint32_t nseal;
  int32_t unsealed;            /* threads yet to make the seal (a futex) */
  uint64_t sig_off;            /* nsig struct cl_stub_sig */
  uint32_t nsig;
  int32_t pad_sig;
};

/* The stub code lives in section "cl_stub"; restore.c copies it. */
extern char __start_cl_stub[], __stop_cl_stub[];
void cl_stub_entry (struct cl_plan *plan);

#endif
