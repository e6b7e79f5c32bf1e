/* cow/: copy-on-write branches over a lower directory tree (docs/cow.md).
 *
 * A branch is a lower tree (a host directory, or a cached image rootfs) and
 * a storage directory holding upper/ and work/ (the kernel overlayfs layers
 * a container writes into) and `meta` (lower path, creation time, state,
 * quota).  This module builds and decides branches and knows nothing of
 * OCI.  The only mount it makes is a branch's own quota tmpfs (upper/ and
 * work/ then live in STORAGE/quota: docs/cow.md "Quota"); the caller
 * mounts lowerdir=lower,upperdir=upper,workdir=work (cow_overlay_data) and
 * decides commit / abort / keep / defer when the writer is gone.
 *
 * Every function follows common/err.h: < 0 with *err set, >= 0 on success.
 */
#ifndef SANDLOCK_COW_COW_H
#define SANDLOCK_COW_COW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../common/err.h"

enum cow_state
{
  COW_PENDING,    /* a writer may still be running */
  COW_KEPT,       /* decided: keep the layer, decide later */
  COW_DEFERRED,   /* no decision yet: commit or abort by hand */
  COW_COMMITTING, /* journal written: only commit may run */
  COW_COMMITTED   /* merged; only the storage cleanup may be left */
};

struct cow_branch
{
  char *storage;           /* absolute, owned */
  char *lower;             /* absolute, canonical, owned */
  char *upper;             /* storage/upper */
  char *work;              /* storage/work */
  struct timespec created; /* CLOCK_REALTIME_COARSE at create */
  enum cow_state state;
  uint64_t max_disk; /* bytes; 0: no quota */
  bool in_tmpfs;     /* upper and work are on the quota tmpfs */
  bool lost;         /* in_tmpfs, but that tmpfs is not mounted (the host
                        restarted): the branch's writes are gone */
  bool strip_privs;  /* the writer had no privilege on the host: commit
                        strips set-id bits and security.* xattrs */
};

struct cow_create_opts
{
  /* > 0: upper and work go on a tmpfs of this many bytes (and one inode
   * per KiB, at least 4096) mounted at STORAGE/quota, so that the write
   * that would cross it fails with ENOSPC.  Needs CAP_SYS_ADMIN over the
   * caller's mount namespace. */
  uint64_t max_disk;
  bool nosync; /* a layer that is never committed: meta not fsync'd */
  /* The quota tmpfs's mount source (NULL: "tmpfs"), as /proc/self/mountinfo
   * shows it: a caller's mark by which cow_quota_reclaim knows the mount
   * for its own after a crash. */
  const char *tag;
  /* The writer (a container in a user namespace) has no privilege on the
   * host: its uid 0, its file capabilities and its set-id bits mean
   * something only in its namespace.  cow_commit then writes no file with
   * S_ISUID/S_ISGID and no security.* xattr into the lower (docs/cow.md
   * "Commit"). */
  bool strip_privs;
};

/* Creates |storage| (must not exist, or be an empty directory) with upper/,
 * work/ and meta over the existing directory |lower|.  Both paths absolute;
 * neither may lie inside the other.  Nothing is left behind on failure. */
int cow_branch_create (const char *lower, const char *storage,
                       struct cow_branch **out, struct cm_err **err)
    __attribute__ ((nonnull (1, 2, 3)));

/* The same for a layer that is never committed (an image rootfs's upper):
 * meta is written without fsync, which a commit's crash recovery needs
 * and a throw-away layer does not (two fsyncs off every container start). */
int cow_layer_create (const char *lower, const char *storage,
                      struct cow_branch **out, struct cm_err **err)
    __attribute__ ((nonnull (1, 2, 3)));

/* cow_branch_create / cow_layer_create with options (|o| may be NULL). */
int cow_branch_create_opts (const char *lower, const char *storage,
                            const struct cow_create_opts *o,
                            struct cow_branch **out, struct cm_err **err)
    __attribute__ ((nonnull (1, 2, 4)));

/* A quota'd branch whose writer is gone moves off its tmpfs: the upper is
 * copied to STORAGE/upper (whiteouts, opaque marks, owners, modes, times,
 * xattrs, hardlinks), made durable, meta switched, the tmpfs unmounted.
 * Nothing to do for a branch on disk (a leftover tmpfs of a persist that
 * died after the switch is unmounted).  Refused while pending (the writer
 * may run), committing, or lost. */
int cow_branch_persist (struct cow_branch *b, struct cm_err **err)
    __attribute__ ((nonnull (1)));

/* What a caller killed inside cow_branch_create_opts (tag |tag|) left at
 * |storage|: the quota tmpfs is unmounted only when STORAGE/quota is a
 * mount point of a tmpfs whose source is |tag|, and then the storage is
 * removed; otherwise only empty directories go (a storage made but not yet
 * mounted).  Anything else is not provably the caller's and stays.
 * Returns true when |storage| is gone. */
bool cow_quota_reclaim (const char *storage, const char *tag)
    __attribute__ ((nonnull));

/* Unmounts the quota tmpfs of the storage |rel| beneath |dirfd|, if one is
 * mounted there (before removing the storage some other way). */
void cow_quota_release_at (int dirfd, const char *rel)
    __attribute__ ((nonnull (2)));

/* Opens the branch stored at |storage| (reads meta). */
int cow_branch_open (const char *storage, struct cow_branch **out,
                     struct cm_err **err) __attribute__ ((nonnull (1, 2)));

void cow_branch_free (struct cow_branch *b);
/* For _cleanup_ (common/util.h). */
static inline void
cow_branch_freep (struct cow_branch **b)
{
  cow_branch_free (*b);
}

/* Records a decision that leaves the branch in place (KEPT, DEFERRED) or
 * PENDING again.  Refused while a commit is in progress. */
int cow_branch_set_state (struct cow_branch *b, enum cow_state s,
                          struct cm_err **err);

/* "pending", "kept", … ; NULL for an unknown value. */
const char *cow_state_name (enum cow_state s);
/* Parses a cow_state_name; < 0 when unknown. */
int cow_state_parse (const char *s);

/* The overlayfs mount data for this branch (owned by the caller):
 * lowerdir, upperdir, workdir, and the options that keep the upper in the
 * plain form cow_changes and cow_commit read (no redirects, no metacopy,
 * no index); |userxattr| for a mount made inside a user namespace. */
char *cow_overlay_data (const struct cow_branch *b, bool userxattr);

/* Drops the branch: removes its storage (unmounting its quota tmpfs).
 * Refused once a commit started (that commit must be finished, or the
 * lower would stay half-merged), unless the branch is lost: nothing can
 * finish that commit any more. */
int cow_abort (struct cow_branch *b, struct cm_err **err);

/* ---- what changed ---- */

enum cow_kind
{
  COW_K_FILE,
  COW_K_DIR,
  COW_K_SYMLINK,
  COW_K_FIFO,
  COW_K_SOCK,
  COW_K_CHR,
  COW_K_BLK
};

enum cow_op
{
  COW_ADDED,
  COW_MODIFIED,
  COW_DELETED,
  COW_RENAMED
};

struct cow_meta
{
  bool present;
  enum cow_kind kind;
  mode_t mode; /* permission bits only (07777) */
  uid_t uid;
  gid_t gid;
  off_t size;
  char *target;    /* symlinks */
  char sha256[65]; /* regular files; "" otherwise */
};

struct cow_change
{
  enum cow_op op;
  char *path; /* relative to the lower, no leading / */
  char *from; /* COW_RENAMED: the old path */
  struct cow_meta before, after;
};

struct cow_changes
{
  struct cow_change *v;
  size_t n;
};

/* Lists every added, modified and deleted path (sorted by path; a delete
 * and an add of the same content become one COW_RENAMED entry). */
int cow_changes (const struct cow_branch *b, struct cow_changes *out,
                 struct cm_err **err) __attribute__ ((nonnull (1, 2)));
void cow_changes_free (struct cow_changes *c);
const char *cow_kind_name (enum cow_kind k);
const char *cow_op_name (enum cow_op o);

/* ---- commit ---- */

struct cow_commit_opts
{
  bool force; /* commit over conflicts */
  /* Called after every destructive step, numbered from 1 (tests kill the
   * process here to prove the journal). */
  void (*step_hook) (unsigned step, void *arg);
  void *hook_arg;
};

/* Paths of the branch's change set that changed in the lower since the
 * branch was created (ctime >= created: docs/cow.md "Conflicts"). */
int cow_conflicts (const struct cow_branch *b, char ***out,
                   struct cm_err **err) __attribute__ ((nonnull (1, 2)));

/* Merges the upper into the lower and removes the storage.  Without
 * |force|, refuses when cow_conflicts finds any (*conflicts gets them, a
 * NULL-terminated list the caller frees; may be NULL).  A commit killed at
 * any point is finished by calling cow_commit again (journal). */
int cow_commit (struct cow_branch *b, const struct cow_commit_opts *o,
                char ***conflicts, struct cm_err **err)
    __attribute__ ((nonnull (1)));

#endif
