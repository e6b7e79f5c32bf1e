/* criu-lite: checkpoint and restore of x86_64 processes without CRIU
 * (docs/checkpoint.md).  Knows nothing of containers or OCI: it is given a
 * pid to capture and an image directory, or an image directory to become.
 *
 * Capture stops every thread of the process with ptrace (SEIZE+INTERRUPT),
 * reads registers, xstate, signal mask, mappings and the pages that hold
 * data, the mm layout, cwd, umask, rlimits and file descriptors, and writes
 * core.img + pages.img (0600, sha256 per section and file, XXH64 of the
 * page data).
 *
 * Restore runs in the process that is to become the saved one: it verifies
 * the image, reopens files, then jumps to a position-independent stub that
 * unmaps everything else, maps the saved layout, reads the pages in, moves
 * the vDSO to its saved place and returns to the saved registers through
 * rt_sigreturn.  x86_64 only. */
#ifndef SANDLOCK_CRIU_LITE_CRIU_H
#define SANDLOCK_CRIU_LITE_CRIU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* A file the caller gave the tree as its stdio (CRIU's inherit-fd): an
 * fd of any process of the tree, at any number, that refers to it is
 * restored as a dup of the restoring process's fd of that stdio number;
 * any other fd is an ordinary one (a file by path and offset, a pipe, …). */
struct criu_stdio
{
  uint64_t dev, ino;      /* st_dev, st_ino; ino 0: none (it was closed) */
  uint64_t mnt_id;        /* the mount it was opened through (fdinfo
                             mnt_id); 0: any (a terminal, however reopened) */
};

struct criu_dump_opts
{
  pid_t pid;              /* the process (thread group) to capture */
  const char *image_dir;  /* created if missing (0700); files are 0600 */
  bool leave_running;     /* false: the process is SIGKILLed once saved */
  bool skip_unsupported;  /* record fds that cannot be restored instead of
                             failing; restore lists them */
  bool target_root;       /* record file paths as the process sees them
                             (from its own root, /proc/PID/root): for a
                             process in another mount namespace or chroot */
  /* With target_root: tmpfs mount points (as the process sees them)
   * whose contents are saved, as they vanish with the process; restore
   * writes them into the same mounts, which must be tmpfs there.  One
   * that is not a tmpfs mount of the process's namespace is skipped. */
  const char *const *tmpfs;
  size_t ntmpfs;
  /* May be NULL.  Freezes (true) and thaws (false) every process of the
   * tree, e.g. with its cgroup freezer; called in the calling process.
   * The tree is frozen while it is listed and its threads are seized, so
   * that nothing forks, exits or runs meanwhile, and thawed once every
   * thread is seized: from then on ptrace holds it while it is read. */
  int (*freeze) (void *arg, bool frozen, struct cm_err **err);
  void *freeze_arg;
  /* With |freeze|: the tree was frozen (a paused container) and stays
   * so: when it goes on (leave_running, or a failure), it is frozen again
   * right after it is let go (a traced task that is frozen cannot be
   * detached, so it may run for that moment). */
  bool leave_frozen;
  /* The tree's stdio, fds 0-2, as the caller gave it (recorded when the
   * root was started); NULL: the root's own fds 0-2 when the capture
   * starts, through any mount. */
  const struct criu_stdio *stdio;
};

/* Captures opts->pid and every descendant into opts->image_dir.  On
 * failure the processes are left running exactly as they were and no image
 * is left behind. */
int criu_dump (const struct criu_dump_opts *opts, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));

/* Reads and verifies the image in |image_dir| (tree.img and every
 * process's header, sections and pages.img: sha256/XXH64, kernel
 * release, CPU xstate features; or one process's directory) without
 * touching the calling process.  Returns 0 when a restore from it may proceed. */
int criu_image_check (const char *image_dir, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));

/* A system call the restore makes on the caller's behalf (struct
 * criu_seal).  Arguments are taken as they are, except those whose bit is
 * set in |ptr_args|: an offset into the seal's data, passed as its
 * address. */
struct criu_call
{
  long nr;
  long arg[6];
  unsigned ptr_args;
  int ok_errno;                 /* this errno counts as success; 0: none */
};

/* Calls the caller needs made at a fixed point of the restore, in order;
 * any failure fails the restore.  |data| is copied (8-byte aligned
 * offsets); |relocs| lists offsets in |data| of 64-bit words that hold an
 * offset into |data| and are turned into its address (a struct that
 * points at another part of the data, such as a sock_fprog). */
struct criu_seal
{
  const struct criu_call *calls;
  size_t ncalls;
  const void *data;
  size_t data_len;
  const size_t *relocs;
  size_t nrelocs;
};

struct criu_restore_opts
{
  const char *image_dir;
  /* Both may be NULL.  |narrow|: made by every restoring process once it
   * has forked its children (with their pids) and before it opens
   * anything the image names.  |seal|: made by the stub in every thread
   * of every process once the whole tree and its threads exist, right
   * before the saved context resumes; no thread resumes before every
   * thread of its process made it (docs/checkpoint.md, "Sealing"). */
  const struct criu_seal *narrow, *seal;
  int report_fd;          /* >= 0: receives 4 bytes, 0 once the saved
                             context is about to resume, else the stub's
                             failure code (docs/checkpoint.md); closed */
  void (*skipped) (void *arg, const char *what); /* fds the image could not
                                                    carry; may be NULL */
  void *skipped_arg;
};

/* Turns the calling process into the saved root process, after forking
 * one restorer per saved descendant (with the saved pids when the caller
 * has the saved root's pid, as in a fresh pid namespace).  Must be called
 * in a single-threaded process whose pid the caller is prepared to give
 * up: on success it does not return; it returns < 0 only while nothing of
 * the caller has been destroyed yet (bad image, unopenable file, a
 * descendant that failed).  Past that point a failure ends the process
 * with exit code 120 + the stub's phase.  Paths in the image are opened
 * as the caller sees them. */
int criu_restore (const struct criu_restore_opts *opts, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));

/* A verified image held open: every process's core.img in memory and its
 * pages.img as an fd, so that a process that can no longer open the image
 * directory (confined, in another mount namespace) can still restore it.
 * NULL with *err set on failure. */
struct criu_image;
struct criu_image *criu_image_open (const char *image_dir, struct cm_err **err)
    __attribute__ ((nonnull (1, 2)));
void criu_image_free (struct criu_image *img);
/* How many fds the image holds (one per process, and tmpfs.img's). */
size_t criu_image_nfds (const struct criu_image *img) __attribute__ ((nonnull));
/* Moves them to |first|.., replacing what the caller had there, e.g. to
 * preserve them through a runtime that closes every other fd. */
int criu_image_place_fds (struct criu_image *img, int first,
                          struct cm_err **err) __attribute__ ((nonnull (1, 3)));
/* criu_restore from an open image (opts->image_dir unused); on failure
 * the image stays the caller's to free. */
int criu_restore_image (struct criu_image *img,
                        const struct criu_restore_opts *opts,
                        struct cm_err **err) __attribute__ ((nonnull (1, 2, 3)));

#endif
