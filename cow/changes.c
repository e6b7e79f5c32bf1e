/* The change list of a branch: walk the upper, compare with the lower
 * (cow/cow.h cow_changes; docs/cow.md "Changes"). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

struct collect
{
  int lowerfd; /* O_PATH of the lower root */
  int upperfd; /* O_PATH of the upper root */
  struct cow_changes *out;
};

static const char *const kind_names[] = {
  [COW_K_FILE] = "file",       [COW_K_DIR] = "dir",
  [COW_K_SYMLINK] = "symlink", [COW_K_FIFO] = "fifo",
  [COW_K_SOCK] = "socket",     [COW_K_CHR] = "chardev",
  [COW_K_BLK] = "blockdev",
};
static const char *const op_names[] = {
  [COW_ADDED] = "added",
  [COW_MODIFIED] = "modified",
  [COW_DELETED] = "deleted",
  [COW_RENAMED] = "renamed",
};

const char *
cow_kind_name (enum cow_kind k)
{
  return (unsigned) k < ARRAY_SIZE (kind_names) ? kind_names[k] : "?";
}

const char *
cow_op_name (enum cow_op o)
{
  return (unsigned) o < ARRAY_SIZE (op_names) ? op_names[o] : "?";
}

static enum cow_kind
kind_of (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFDIR:
      return COW_K_DIR;
    case S_IFLNK:
      return COW_K_SYMLINK;
    case S_IFIFO:
      return COW_K_FIFO;
    case S_IFSOCK:
      return COW_K_SOCK;
    case S_IFCHR:
      return COW_K_CHR;
    case S_IFBLK:
      return COW_K_BLK;
    default:
      return COW_K_FILE;
    }
}

/* Fills |m| for |name| in |dfd|, stat'ed as |st|: digest and target read
 * through |dfd| without following anything. */
static int
fill_meta (struct cow_meta *m, int dfd, const char *name,
           const struct stat *st)
{
  m->present = true;
  m->kind = kind_of (st->st_mode);
  m->mode = st->st_mode & 07777;
  m->uid = st->st_uid;
  m->gid = st->st_gid;
  m->size = st->st_size;
  if (S_ISLNK (st->st_mode))
    {
      char buf[4097];
      ssize_t n = readlinkat (dfd, name, buf, sizeof buf - 1);
      if (n < 0)
        return -1;
      buf[n] = '\0';
      m->target = xstrdup (buf);
    }
  else if (S_ISREG (st->st_mode))
    {
      _cleanup_fd_ int fd
          = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || cow_sha256_fd (fd, m->sha256) < 0)
        return -1;
    }
  return 0;
}

/* The lower entry at |rel|: 1 with *st and its parent in *dfd, 0 absent. */
static int
lower_entry (int lowerfd, const char *rel, int *dfd, const char **leaf,
             struct stat *st)
{
  *dfd = cow_open_parent (lowerfd, rel, leaf);
  if (*dfd < 0)
    return errno == ENOENT || errno == ENOTDIR || errno == ELOOP
                   || errno == EXDEV
               ? 0
               : -1;
  if (fstatat (*dfd, *leaf, st, AT_SYMLINK_NOFOLLOW) == 0)
    return 1;
  return errno == ENOENT ? 0 : -1;
}

static struct cow_change *
push (struct cow_changes *c, enum cow_op op, const char *path)
{
  c->v = xrealloc (c->v, (c->n + 1) * sizeof *c->v);
  struct cow_change *ch = &c->v[c->n++];
  memset (ch, 0, sizeof *ch);
  ch->op = op;
  ch->path = xstrdup (path);
  return ch;
}

static bool
in_upper (const struct collect *c, const char *rel)
{
  const char *leaf;
  struct stat st;
  _cleanup_fd_ int d = cow_open_parent (c->upperfd, rel, &leaf);
  return d >= 0 && fstatat (d, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Every lower path under the directory |rel| that the upper does not
 * hold: hidden by a whiteout, an opaque directory or a non-directory.
 * With |check_upper| (an opaque directory) a child the upper holds again
 * is the upper's: neither it nor what is below it is deleted. */
struct hidden
{
  struct collect *c;
  bool check_upper;
};

static int
deleted_one (const struct cow_lower_entry *e, void *arg, struct cm_err **err)
{
  struct hidden *h = arg;
  if (h->check_upper && e->depth == 1 && in_upper (h->c, e->rel))
    return 0;
  if (fill_meta (&push (h->c->out, COW_DELETED, e->rel)->before, e->dirfd,
                 e->name, &e->st)
      < 0)
    return cm_err_set (err, errno, "lower `%s`", e->rel);
  return 1;
}

static int
deleted_below (struct collect *c, const char *rel, bool check_upper,
               struct cm_err **err)
{
  struct hidden h = { .c = c, .check_upper = check_upper };
  return cow_walk_lower (c->lowerfd, rel, deleted_one, &h, err);
}

static bool
same_dir_meta (const struct stat *a, const struct stat *b)
{
  return (a->st_mode & 07777) == (b->st_mode & 07777) && a->st_uid == b->st_uid
         && a->st_gid == b->st_gid;
}

static int
collect_one (const struct cow_entry *e, void *arg, struct cm_err **err)
{
  struct collect *c = arg;
  struct stat lst;
  const char *leaf;
  _cleanup_fd_ int ldfd = -1;
  if (e->post)
    return 0;
  int have = lower_entry (c->lowerfd, e->rel, &ldfd, &leaf, &lst);
  if (have < 0)
    return cm_err_set (err, errno, "lower `%s`", e->rel);
  if (e->whiteout && !have)
    return 0; /* overlay whiteout over nothing */
  struct cow_change tmp = { 0 };
  if (have && fill_meta (&tmp.before, ldfd, leaf, &lst) < 0)
    return cm_err_set (err, errno, "lower `%s`", e->rel);
  if (!e->whiteout && fill_meta (&tmp.after, e->dirfd, e->name, &e->st) < 0)
    return cm_err_set (err, errno, "upper `%s`", e->rel);
  bool both_dirs = have && S_ISDIR (lst.st_mode) && S_ISDIR (e->st.st_mode);
  if (!(both_dirs && same_dir_meta (&lst, &e->st)))
    {
      struct cow_change *ch = push (c->out,
                                    e->whiteout ? COW_DELETED
                                    : have      ? COW_MODIFIED
                                                : COW_ADDED,
                                    e->rel);
      ch->before = tmp.before;
      ch->after = tmp.after;
    }
  else
    free (tmp.before.target), free (tmp.after.target);
  /* Lower children hidden: under a deleted or replaced directory, or an
   * opaque one (except names the upper holds again). */
  if (have && S_ISDIR (lst.st_mode) && (!both_dirs || e->opaque))
    return deleted_below (c, e->rel, both_dirs, err);
  return 0;
}

static int
cmp_change (const void *a, const void *b)
{
  return strcmp (((const struct cow_change *) a)->path,
                 ((const struct cow_change *) b)->path);
}

static void
meta_free (struct cow_meta *m)
{
  free (m->target);
  m->target = NULL;
}

/* A deleted file and an added file with the same (non-empty) content are
 * one rename. */
static void
pair_renames (struct cow_changes *c)
{
  for (size_t i = 0; i < c->n; i++)
    {
      struct cow_change *d = &c->v[i];
      if (d->op != COW_DELETED || d->before.kind != COW_K_FILE
          || d->before.size == 0)
        continue;
      for (size_t j = 0; j < c->n; j++)
        {
          struct cow_change *a = &c->v[j];
          if (a->op != COW_ADDED || a->after.kind != COW_K_FILE
              || strcmp (a->after.sha256, d->before.sha256) != 0)
            continue;
          a->op = COW_RENAMED;
          a->from = cm_steal_ptr (&d->path);
          a->before = d->before;
          d->before.target = NULL;
          d->op = (enum cow_op) - 1; /* dropped below */
          break;
        }
    }
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].op != (enum cow_op) - 1)
      c->v[k++] = c->v[i];
  c->n = k;
}

void
cow_changes_free (struct cow_changes *c)
{
  for (size_t i = 0; c && i < c->n; i++)
    {
      free (c->v[i].path);
      free (c->v[i].from);
      meta_free (&c->v[i].before);
      meta_free (&c->v[i].after);
    }
  if (c)
    {
      free (c->v);
      c->v = NULL;
      c->n = 0;
    }
}

int
cow_changes (const struct cow_branch *b, struct cow_changes *out,
             struct cm_err **err)
{
  _cleanup_fd_ int lfd = open (b->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_fd_ int ufd = open (b->upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct collect c = { .lowerfd = lfd, .upperfd = ufd, .out = out };
  out->v = NULL;
  out->n = 0;
  if (cow_branch_usable (b, err) < 0)
    return -1;
  if (lfd < 0 || ufd < 0)
    return cm_err_set (err, errno, "cow branch `%s`", b->storage);
  if (cow_walk_upper (b, collect_one, &c, err) < 0)
    {
      cow_changes_free (out);
      return -1;
    }
  pair_renames (out);
  if (out->n)
    qsort (out->v, out->n, sizeof *out->v, cmp_change);
  return 0;
}
