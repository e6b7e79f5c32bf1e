/* Conflicts: paths of the change set that changed in the lower since the
 * branch was created.  Rule (docs/cow.md "Conflicts"): the lower entry's
 * ctime is >= the branch's creation time, taken from the coarse realtime
 * clock the kernel stamps inodes from, so a later change can never carry
 * an older ctime (a change in the same clock tick before the branch counts
 * too: false positives, never a missed conflict).  ctime cannot be set by
 * utimensat, so a writer cannot hide a change. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

struct conflicts
{
  const struct cow_branch *b;
  int lowerfd;
  struct cow_dircache parent;
  char **v;
  size_t n;
};

static bool
newer (const struct conflicts *c, const struct stat *st)
{
  const struct timespec *t = &st->st_ctim, *ref = &c->b->created;
  return t->tv_sec > ref->tv_sec
         || (t->tv_sec == ref->tv_sec && t->tv_nsec >= ref->tv_nsec);
}

static void
add (struct conflicts *c, const char *path)
{
  c->v = xrealloc (c->v, (c->n + 2) * sizeof *c->v);
  c->v[c->n++] = xstrdup (path);
  c->v[c->n] = NULL;
}

/* Any entry below the lower directory |rel| changed since the branch:
 * listed, and not descended into. */
static int
subtree_one (const struct cow_lower_entry *e, void *arg, struct cm_err **err)
{
  struct conflicts *c = arg;
  if (!newer (c, &e->st))
    return 1;
  add (c, e->rel);
  return 0;
}

static int
subtree (struct conflicts *c, const char *rel, struct cm_err **err)
{
  return cow_walk_lower (c->lowerfd, rel, subtree_one, c, err);
}

/* overlayfs's origin of a copy-up: struct ovl_fb, a 21-byte header
 * (version, magic 0xfb, length, flags, handle type, the layer's uuid) and
 * the lower inode's file handle (fs/overlayfs/overlayfs.h). */
#define OVL_FB_MAGIC 0xfb
#define OVL_FB_HEADER 21

/* True when the directory |e| was copied up from another inode than the
 * lower's |leaf| in |dfd| now is: their file handles differ.  An origin
 * without a handle (a lower that cannot encode one) proves nothing. */
static bool
replaced (const struct cow_entry *e, int dfd, const char *leaf)
{
  unsigned char fb[OVL_FB_HEADER + MAX_HANDLE_SZ];
  ssize_t n = cow_entry_origin (e, fb, sizeof fb);
  union
  {
    struct file_handle fh;
    unsigned char raw[sizeof (struct file_handle) + MAX_HANDLE_SZ];
  } h = { .fh.handle_bytes = MAX_HANDLE_SZ };
  int mnt;
  if (n <= OVL_FB_HEADER || fb[1] != OVL_FB_MAGIC || fb[2] != n)
    return false;
  if (name_to_handle_at (dfd, leaf, &h.fh, &mnt, 0) < 0)
    return false;
  return h.fh.handle_type != fb[4]
         || h.fh.handle_bytes != (unsigned) (n - OVL_FB_HEADER)
         || memcmp (h.fh.f_handle, fb + OVL_FB_HEADER, h.fh.handle_bytes)
                != 0;
}

/* The upper entry |e| has no lower path.  An addition, unless the lower
 * had it when the branch was made and the host removed it since: a
 * whiteout says the lower had it (overlayfs whites out only what a lower
 * holds), and so does a copy-up (overlay.origin: the branch modified it),
 * while the lower parent's ctime says whether its entries changed since
 * the branch (a copy-up renamed in the branch has no lower path either,
 * in a parent the host left alone).  |pfd|: the lower parent, or < 0
 * when it is gone too (the entry that was that parent is the conflict). */
static int
absent (struct conflicts *c, const struct cow_entry *e, int pfd,
        struct cm_err **err)
{
  struct stat pst;
  if (pfd < 0)
    return 0;
  if (fstat (pfd, &pst) < 0)
    return cm_err_set (err, errno, "lower parent of `%s`", e->rel);
  if (e->whiteout || (newer (c, &pst) && cow_entry_copied_up (e)))
    add (c, e->rel);
  return 0;
}

static int
check_one (const struct cow_entry *e, void *arg, struct cm_err **err)
{
  struct conflicts *c = arg;
  const char *leaf;
  struct stat st;
  if (e->post)
    return 0;
  int dfd
      = cow_dircache_parent (&c->parent, c->lowerfd, e->rel, O_PATH, &leaf);
  if (dfd < 0 || fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP
          && errno != EXDEV)
        return cm_err_set (err, errno, "lower `%s`", e->rel);
      return absent (c, e, dfd, err);
    }
  bool both_dirs = S_ISDIR (st.st_mode) && S_ISDIR (e->st.st_mode);
  /* A directory kept as a directory merges: its own ctime moves with every
   * entry added or removed in it, so only its changed children count,
   * unless the lower one is another directory than the branch copied up
   * (the host deleted it and made it again). */
  if (both_dirs && !e->opaque)
    {
      if (replaced (e, dfd, leaf))
        add (c, e->rel);
      return 0;
    }
  if (newer (c, &st))
    {
      add (c, e->rel);
      return 0;
    }
  if (S_ISDIR (st.st_mode))
    return subtree (c, e->rel, err);
  return 0;
}

int
cow_conflicts (const struct cow_branch *b, char ***out, struct cm_err **err)
{
  _cleanup_fd_ int lfd = open (b->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct conflicts c = { .b = b, .lowerfd = lfd, .parent = { .fd = -1 } };
  if (lfd < 0)
    return cm_err_set (err, errno, "cow lower `%s`", b->lower);
  int r = cow_walk_upper (b, check_one, &c, err);
  cow_dircache_free (&c.parent);
  if (r < 0)
    {
      cm_strv_free (c.v);
      return -1;
    }
  *out = c.v ? c.v : xcalloc (1, sizeof (char *));
  return (int) c.n;
}
