/* Commit: merge the upper into the lower (cow/cow.h; docs/cow.md "Commit"
 * and "Crash recovery").
 *
 * Every step is idempotent and the upper loses only what is merged, so
 * the journal is the decision itself: meta says `committing` (written
 * durably before the first change to the lower) and a commit run again
 * replays the walk.  Hence no fsync per file: whatever a power loss
 * leaves half-written is rewritten by the replay, and one syncfs of the
 * lower before meta says `committed` (and the upper goes) makes it all
 * durable at once.  Every destination is opened beneath the lower with no
 * symlink followed and no mount crossed (cow_open_beneath); leaves are
 * replaced by rename from a temp name in the same directory, or moved
 * from the upper when it shares the lower's filesystem: a moved file is
 * gone from the upper, so a replay does not see it, and an opaque
 * directory loses its mark once the lower one is emptied (apply_dir_pre)
 * so a replay does not empty it again. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

#define TMP_NAME ".sandlock-cow~"

struct link_seen
{
  dev_t dev;
  ino_t ino;
  char *rel;
};

struct commit
{
  const struct cow_commit_opts *o;
  int lowerfd;
  struct cow_dircache parent; /* of the entry being applied */
  unsigned step;
  struct link_seen *links;
  size_t nlinks;
  bool no_move; /* the upper is on another filesystem: copy */
  bool strip;   /* b->strip_privs: no set-id bit, no security.* xattr */
};

/* What a writer without privilege on the host may not carry into it
 * (docs/cow.md "Commit", docs/security.md): a file capability or an LSM
 * label it set in its user namespace, a set-id bit on a file its
 * namespace's uid 0 owns.  Directories keep set-id bits (S_ISGID there
 * only passes a group on), as a chown keeps them. */
static bool
xattr_dropped (bool strip, const char *name)
{
  return cow_xattr_private (name)
         || (strip && cm_startswith (name, "security."));
}

static mode_t
mode_for (bool strip, const struct stat *st)
{
  mode_t m = st->st_mode & 07777;
  return strip && !S_ISDIR (st->st_mode) ? m & ~(mode_t) (S_ISUID | S_ISGID)
                                         : m;
}

static void
stepped (struct commit *c)
{
  c->step++;
  if (c->o && c->o->step_hook)
    c->o->step_hook (c->step, c->o->hook_arg);
}

/* The directory holding |rel| in the lower. */
static int
lower_parent (struct commit *c, const char *rel, const char **leaf)
{
  const char *slash = strrchr (rel, '/');
  *leaf = slash ? slash + 1 : rel;
  _cleanup_free_ char *dir
      = slash ? strndup (rel, (size_t) (slash - rel)) : xstrdup ("");
  return cow_open_beneath (c->lowerfd, dir, O_RDONLY | O_DIRECTORY);
}

/* Clears the way for a non-directory at |leaf|: a directory there goes
 * (the branch replaced it), and so does a stale temp. */
static int
clear_for_leaf (int pfd, const char *leaf, struct cm_err **err)
{
  struct stat st;
  if (cm_rm_rf_at (pfd, TMP_NAME, err) < 0)
    return -1;
  if (fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0
      && S_ISDIR (st.st_mode))
    return cm_rm_rf_at (pfd, leaf, err);
  return 0;
}

static int
copy_xattrs (int src, int dst, bool strip)
{
  char names[65536], val[65536];
  ssize_t n = flistxattr (src, names, sizeof names);
  if (n < 0)
    return errno == ENOTSUP ? 0 : -1;
  for (char *p = names; p < names + n; p += strlen (p) + 1)
    {
      if (xattr_dropped (strip, p))
        continue;
      ssize_t v = fgetxattr (src, p, val, sizeof val);
      if (v < 0
          || (fsetxattr (dst, p, val, (size_t) v, 0) < 0 && errno != ENOTSUP))
        return -1;
    }
  return 0;
}

/* Owner, mode, xattrs, times of |st| onto |fd| (chown first: it clears
 * set-id bits). */
static int
set_meta (int fd, int src, const struct stat *st, bool strip)
{
  struct timespec ts[2] = { st->st_atim, st->st_mtim };
  if (fchown (fd, st->st_uid, st->st_gid) < 0
      || fchmod (fd, mode_for (strip, st)) < 0)
    return -1;
  if (src >= 0 && copy_xattrs (src, fd, strip) < 0)
    return -1;
  return futimens (fd, ts);
}

static int
copy_data (int src, int dst)
{
  char buf[65536];
  ssize_t n;
  for (;;)
    {
      n = copy_file_range (src, NULL, dst, NULL, 1 << 30, 0);
      if (n == 0)
        return 0;
      if (n < 0)
        break;
    }
  if (errno != EXDEV && errno != EINVAL && errno != ENOSYS
      && errno != EOPNOTSUPP)
    return -1;
  while ((n = read (src, buf, sizeof buf)) != 0)
    if ((n < 0 && errno != EINTR)
        || (n > 0 && cm_write_all (dst, buf, (size_t) n) < 0))
      return -1;
  return 0;
}

static int
place_file (const struct commit *c, const struct cow_entry *e, int pfd,
            struct cm_err **err)
{
  _cleanup_fd_ int src
      = openat (e->dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_fd_ int dst = -1;
  if (src < 0)
    return cm_err_set (err, errno, "upper `%s`", e->rel);
  dst = openat (pfd, TMP_NAME,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (dst < 0 || copy_data (src, dst) < 0
      || set_meta (dst, src, &e->st, c->strip) < 0)
    return cm_err_set (err, errno, "commit `%s`", e->rel);
  return 0;
}

static int
place_other (const struct commit *c, const struct cow_entry *e, int pfd,
             struct cm_err **err)
{
  struct timespec ts[2] = { e->st.st_atim, e->st.st_mtim };
  if (S_ISLNK (e->st.st_mode))
    {
      char target[4097];
      ssize_t n = readlinkat (e->dirfd, e->name, target, sizeof target - 1);
      if (n < 0)
        return cm_err_set (err, errno, "upper `%s`", e->rel);
      target[n] = '\0';
      if (symlinkat (target, pfd, TMP_NAME) < 0)
        return cm_err_set (err, errno, "commit `%s`", e->rel);
    }
  else if (mknodat (pfd, TMP_NAME, e->st.st_mode & (S_IFMT | 07777), 0) < 0)
    return cm_err_set (err, errno, "commit `%s`", e->rel);
  if (fchownat (pfd, TMP_NAME, e->st.st_uid, e->st.st_gid, AT_SYMLINK_NOFOLLOW)
          < 0
      || (!S_ISLNK (e->st.st_mode)
          && fchmodat (pfd, TMP_NAME, mode_for (c->strip, &e->st), 0) < 0)
      || utimensat (pfd, TMP_NAME, ts, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno, "commit `%s`", e->rel);
  return 0;
}

/* Strips the overlayfs private xattrs a moved file must not carry into
 * the lower (a copied-up file has `overlay.origin`, …), and with |strip|
 * its security.* xattrs and set-id bits. */
static int
strip_private (int fd, bool strip)
{
  char names[65536];
  struct stat st;
  ssize_t n = flistxattr (fd, names, sizeof names);
  if (n < 0 && errno != ENOTSUP)
    return -1;
  for (char *p = names; n > 0 && p < names + n; p += strlen (p) + 1)
    if (xattr_dropped (strip, p) && fremovexattr (fd, p) < 0
        && errno != ENODATA)
      return -1;
  if (!strip || fstat (fd, &st) < 0)
    return strip ? -1 : 0;
  if (mode_for (true, &st) != (st.st_mode & 07777)
      && fchmod (fd, mode_for (true, &st)) < 0)
    return -1;
  return 0;
}

/* Moves a regular file with one name from the upper into place: its data,
 * owner, mode, times and own xattrs are already what the lower gets.  A
 * killed commit is resumable because the walk replays what is still in
 * the upper, and a moved file is already where it belongs (an opaque
 * directory is emptied only once: apply_dir_pre).  1 when moved, 0 when
 * the upper is on another filesystem (the caller copies). */
static int
move_file (struct commit *c, const struct cow_entry *e, int pfd,
           const char *leaf, struct cm_err **err)
{
  _cleanup_fd_ int fd
      = openat (e->dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || strip_private (fd, c->strip) < 0)
    return cm_err_set (err, errno, "upper `%s`", e->rel);
  stepped (c); /* ready in the upper, not yet in place */
  if (renameat (e->dirfd, e->name, pfd, leaf) == 0)
    return 1;
  if (errno != EXDEV)
    return cm_err_set (err, errno, "commit `%s`", e->rel);
  c->no_move = true;
  return 0;
}

/* A second name of an inode already committed: link it again.  0 when
 * this is the first name, 1 when the link is at the temp name, 2 when the
 * name already is that inode (a replayed commit). */
static int
place_link (struct commit *c, const struct cow_entry *e, int pfd,
            const char *leaf, struct cm_err **err)
{
  struct link_seen *l = NULL;
  for (size_t i = 0; i < c->nlinks; i++)
    if (c->links[i].dev == e->st.st_dev && c->links[i].ino == e->st.st_ino)
      l = &c->links[i];
  if (l == NULL)
    {
      c->links = xrealloc (c->links, (c->nlinks + 1) * sizeof *c->links);
      c->links[c->nlinks++]
          = (struct link_seen){ e->st.st_dev, e->st.st_ino, xstrdup (e->rel) };
      return 0;
    }
  const char *fleaf;
  struct stat a, b;
  _cleanup_fd_ int fpfd = lower_parent (c, l->rel, &fleaf);
  if (fpfd < 0 || fstatat (fpfd, fleaf, &a, AT_SYMLINK_NOFOLLOW) < 0)
    return cm_err_set (err, errno, "commit link `%s`", l->rel);
  if (fstatat (pfd, leaf, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev
      && a.st_ino == b.st_ino)
    return 2;
  if (linkat (fpfd, fleaf, pfd, TMP_NAME, 0) < 0)
    return cm_err_set (err, errno, "commit link `%s`", e->rel);
  return 1;
}

static int
apply_leaf (struct commit *c, const struct cow_entry *e, int pfd,
            const char *leaf, struct cm_err **err)
{
  int r = 0;
  if (clear_for_leaf (pfd, leaf, err) < 0)
    return -1;
  if (S_ISREG (e->st.st_mode) && e->st.st_nlink > 1)
    r = place_link (c, e, pfd, leaf, err); /* 2: already in place */
  else if (S_ISREG (e->st.st_mode) && !c->no_move)
    r = move_file (c, e, pfd, leaf, err) * 2; /* -2, 0 (copy) or 2 */
  if (r < 0)
    return -1;
  if (r == 0
      && (S_ISREG (e->st.st_mode) ? place_file (c, e, pfd, err)
                                  : place_other (c, e, pfd, err))
             < 0)
    return -1;
  if (r == 2)
    return 0;
  stepped (c); /* the temp is written, not yet in place */
  if (renameat (pfd, TMP_NAME, pfd, leaf) < 0)
    return cm_err_set (err, errno, "commit `%s`", e->rel);
  return 0;
}

/* An opaque directory has replaced the lower one: from now on the upper
 * says "merge", so a replayed commit does not empty the lower directory
 * again (files already moved into it would be lost). */
static int
unmark_opaque (const struct cow_entry *e, struct cm_err **err)
{
  static const char *const names[]
      = { "trusted.overlay.opaque", "user.overlay.opaque" };
  _cleanup_fd_ int fd
      = openat (e->dirfd, e->name,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "upper `%s`", e->rel);
  for (size_t i = 0; i < ARRAY_SIZE (names); i++)
    if (fgetxattr (fd, names[i], NULL, 0) >= 0 /* trusted.*: hidden */
        && fremovexattr (fd, names[i]) < 0)
      return cm_err_set (err, errno, "upper `%s`: remove %s", e->rel,
                         names[i]);
  return 0;
}

static int
apply_dir_pre (struct commit *c, const struct cow_entry *e, int pfd,
               const char *leaf, struct cm_err **err)
{
  struct stat st;
  bool have = fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (have && (!S_ISDIR (st.st_mode) || e->opaque))
    {
      if (cm_rm_rf_at (pfd, leaf, err) < 0)
        return -1;
      have = false;
    }
  if (!have && mkdirat (pfd, leaf, 0700) < 0)
    return cm_err_set (err, errno, "commit mkdir `%s`", e->rel);
  if (!e->opaque)
    return 0;
  stepped (c); /* the lower directory is empty, the upper still opaque */
  if (syncfs (pfd) < 0) /* the emptying is durable before the mark goes */
    return cm_err_set (err, errno, "syncfs below `%s`", e->rel);
  return unmark_opaque (e, err);
}

static int
apply_dir_post (struct commit *c, const struct cow_entry *e,
                struct cm_err **err)
{
  _cleanup_fd_ int fd
      = cow_open_beneath (c->lowerfd, e->rel, O_RDONLY | O_DIRECTORY);
  _cleanup_fd_ int src
      = openat (e->dirfd, e->name,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || src < 0 || set_meta (fd, src, &e->st, c->strip) < 0)
    return cm_err_set (err, errno, "commit dir `%s`", e->rel);
  return 0;
}

static int
apply_one (const struct cow_entry *e, void *arg, struct cm_err **err)
{
  struct commit *c = arg;
  const char *leaf;
  if (e->post)
    return apply_dir_post (c, e, err);
  int pfd
      = cow_dircache_parent (&c->parent, c->lowerfd, e->rel, O_RDONLY, &leaf);
  if (pfd < 0)
    return cm_err_set (err, errno,
                       "commit: parent of `%s` in the lower "
                       "(a symlink there is never followed, a mount never "
                       "crossed)",
                       e->rel);
  int r = e->whiteout               ? cm_rm_rf_at (pfd, leaf, err)
          : S_ISDIR (e->st.st_mode) ? apply_dir_pre (c, e, pfd, leaf, err)
                                    : apply_leaf (c, e, pfd, leaf, err);
  if (r < 0)
    return -1;
  stepped (c);
  return 0;
}

/* What would stop a commit half-way is refused before it starts: device
 * nodes, and paths below a mount point inside the lower (the overlay saw
 * the directory under it, not the mount). */
struct pre
{
  int lowerfd;
  struct cow_dircache parent;
};

static int
precheck (const struct cow_entry *e, void *arg, struct cm_err **err)
{
  struct pre *p = arg;
  const char *leaf;
  if (e->post)
    return 0;
  if (!e->whiteout && (S_ISCHR (e->st.st_mode) || S_ISBLK (e->st.st_mode)))
    return cm_err_set (err, EPERM,
                       "commit: `%s` is a device node; a branch "
                       "never creates devices in the lower",
                       e->rel);
  int fd = cow_dircache_parent (&p->parent, p->lowerfd, e->rel, O_PATH, &leaf);
  if (fd < 0 && errno == EXDEV)
    return cm_err_set (err, EXDEV,
                       "commit: `%s` is below a mount point in "
                       "the lower",
                       e->rel);
  return 0;
}

/* Decides: conflicts, then the durable `committing` record. */
static int
begin (struct cow_branch *b, const struct cow_commit_opts *o,
       char ***conflicts, struct cm_err **err)
{
  _cleanup_strv_ char **cf = NULL;
  if (b->state == COW_PENDING)
    return cm_err_set (err, EBUSY,
                       "cow branch `%s` is pending: its writer "
                       "may still run",
                       b->storage);
  _cleanup_fd_ int lfd = open (b->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct pre p = { .lowerfd = lfd, .parent = { .fd = -1 } };
  if (lfd < 0)
    return cm_err_set (err, errno, "cow lower `%s`", b->lower);
  int r = cow_walk_upper (b, precheck, &p, err);
  cow_dircache_free (&p.parent);
  if (r < 0)
    return -1;
  int n = cow_conflicts (b, &cf, err);
  if (n < 0)
    return -1;
  if (n > 0 && !(o && o->force))
    {
      if (conflicts)
        *conflicts = cm_steal_ptr (&cf);
      return cm_err_set (err, 0,
                         "commit: %d path%s changed in `%s` since "
                         "the branch was created (first: `%s`); --force "
                         "commits over them",
                         n, n == 1 ? "" : "s", b->lower,
                         cf ? cf[0] : (*conflicts)[0]);
    }
  b->state = COW_COMMITTING;
  return cow_meta_write (b, err);
}

static int
finish (struct cow_branch *b, struct cm_err **err)
{
  _cleanup_free_ char *meta = xasprintf ("%s/meta", b->storage);
  b->state = COW_COMMITTED;
  if (cow_meta_write (b, err) < 0 || cm_rm_rf_at (AT_FDCWD, b->upper, err) < 0)
    return -1;
  if (unlink (meta) < 0 && errno != ENOENT)
    return cm_err_set (err, errno, "remove `%s`", meta);
  return cow_remove (b->storage, err);
}

/* The upper's data is durable before any of it is moved: a moved file
 * leaves the upper, so a replay after a power loss could not rewrite it
 * (renames are journalled, file data not until written back). */
static int
sync_upper (const struct cow_branch *b, struct cm_err **err)
{
  _cleanup_fd_ int fd
      = open (b->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || syncfs (fd) < 0)
    return cm_err_set (err, errno, "syncfs `%s`", b->upper);
  return 0;
}

int
cow_commit (struct cow_branch *b, const struct cow_commit_opts *o,
            char ***conflicts, struct cm_err **err)
{
  struct commit c = { .o = o, .lowerfd = -1, .parent = { .fd = -1 },
                      .strip = b->strip_privs };
  int ret;
  if (b->state == COW_COMMITTED)
    return finish (b, err);
  if (cow_branch_usable (b, err) < 0)
    return -1;
  if (b->state != COW_COMMITTING && begin (b, o, conflicts, err) < 0)
    return -1;
  c.lowerfd = open (b->lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (c.lowerfd < 0)
    return cm_err_set (err, errno, "cow lower `%s`", b->lower);
  if (sync_upper (b, err) < 0)
    {
      close (c.lowerfd);
      return -1;
    }
  ret = cow_walk_upper (b, apply_one, &c, err);
  if (ret == 0 && syncfs (c.lowerfd) < 0)
    ret = cm_err_set (err, errno, "syncfs `%s`", b->lower);
  cow_dircache_free (&c.parent);
  close (c.lowerfd);
  for (size_t i = 0; i < c.nlinks; i++)
    free (c.links[i].rel);
  free (c.links);
  if (ret < 0)
    return cm_err_wrap (err,
                        "commit `%s` (the branch stays `committing`; "
                        "run commit again)",
                        b->storage);
  return finish (b, err);
}
