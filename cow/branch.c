/* Branch storage: create, open, meta, state, abort (cow/cow.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

static const char *const state_names[] = {
  [COW_PENDING] = "pending",     [COW_KEPT] = "kept",
  [COW_DEFERRED] = "deferred",   [COW_COMMITTING] = "committing",
  [COW_COMMITTED] = "committed",
};

const char *
cow_state_name (enum cow_state s)
{
  return (unsigned) s < ARRAY_SIZE (state_names) ? state_names[s] : NULL;
}

int
cow_state_parse (const char *s)
{
  for (size_t i = 0; i < ARRAY_SIZE (state_names); i++)
    if (strcmp (s, state_names[i]) == 0)
      return (int) i;
  return -1;
}

void
cow_branch_free (struct cow_branch *b)
{
  if (b == NULL)
    return;
  free (b->storage);
  free (b->lower);
  free (b->upper);
  free (b->work);
  free (b);
}

static struct cow_branch *
branch_new (const char *storage, const char *lower, uint64_t max_disk,
            bool in_tmpfs)
{
  struct cow_branch *b = xcalloc (1, sizeof *b);
  b->storage = xstrdup (storage);
  b->lower = xstrdup (lower);
  b->max_disk = max_disk;
  b->in_tmpfs = in_tmpfs;
  cow_layer_paths (b);
  return b;
}

/* Durable replace of |dir|/|name|: temp, fsync, rename, fsync dir.  The
 * meta file is the record a crashed commit is resumed from. */
static int
durable_write (const char *dir, const char *name, const char *buf, bool sync,
               struct cm_err **err)
{
  _cleanup_fd_ int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *tmp = xasprintf (".%s.tmp", name);
  _cleanup_fd_ int fd = -1;
  if (dfd < 0)
    return cm_err_set (err, errno, "open `%s`", dir);
  fd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
               0600);
  if (fd < 0 || cm_write_all (fd, buf, strlen (buf)) < 0
      || (sync && fsync (fd) < 0) || renameat (dfd, tmp, dfd, name) < 0
      || (sync && fsync (dfd) < 0))
    return cm_err_set (err, errno, "write `%s/%s`", dir, name);
  return 0;
}

static int
meta_write (const struct cow_branch *b, bool sync, struct cm_err **err)
{
  _cleanup_free_ char *q
      = b->max_disk ? xasprintf ("max_disk=%" PRIu64 "\nquota=%s\n",
                                 b->max_disk, b->in_tmpfs ? "tmpfs" : "disk")
                    : xstrdup ("");
  _cleanup_free_ char *s
      = xasprintf ("lower=%s\ncreated=%lld.%09ld\n"
                   "state=%s\n%s%s",
                   b->lower, (long long) b->created.tv_sec, b->created.tv_nsec,
                   cow_state_name (b->state), q,
                   b->strip_privs ? "privs=strip\n" : "");
  return durable_write (b->storage, "meta", s, sync, err);
}

int
cow_meta_write (const struct cow_branch *b, struct cm_err **err)
{
  return meta_write (b, true, err);
}

static bool
path_within (const char *inner, const char *outer)
{
  size_t n = strlen (outer);
  if (strcmp (outer, "/") == 0)
    return true;
  return strncmp (inner, outer, n) == 0 && (inner[n] == '/' || !inner[n]);
}

/* The canonical form of |storage|, whose last component may not exist. */
static int
canonical_storage (const char *storage, char **out, struct cm_err **err)
{
  _cleanup_free_ char *dir = xstrdup (storage);
  char *slash = strrchr (dir, '/'), *leaf, real[PATH_MAX];
  if (slash == NULL || slash[1] == '\0')
    return cm_err_set (err, 0,
                       "cow storage `%s`: expected an absolute "
                       "path ending in a name",
                       storage);
  leaf = slash + 1;
  *slash = '\0';
  if (realpath (*dir ? dir : "/", real) == NULL)
    return cm_err_set (err, errno, "cow storage `%s`", storage);
  if (strcmp (leaf, ".") == 0 || strcmp (leaf, "..") == 0)
    return cm_err_set (err, 0,
                       "cow storage `%s`: expected a name, not "
                       "`%s`",
                       storage, leaf);
  *out = xasprintf ("%s/%s", strcmp (real, "/") ? real : "", leaf);
  return 0;
}

static int
check_paths (const char *lower, const char *storage, char **clower,
             char **cstorage, struct cm_err **err)
{
  char real[PATH_MAX];
  struct stat st;
  if (lower[0] != '/' || storage[0] != '/')
    return cm_err_set (err, 0,
                       "cow: lower `%s` and storage `%s` must be "
                       "absolute paths",
                       lower, storage);
  if (realpath (lower, real) == NULL || stat (real, &st) < 0)
    return cm_err_set (err, errno, "cow lower `%s`", lower);
  if (!S_ISDIR (st.st_mode))
    return cm_err_set (err, ENOTDIR, "cow lower `%s`", lower);
  if (canonical_storage (storage, cstorage, err) < 0)
    return -1;
  *clower = xstrdup (real);
  /* The overlay mount data separates paths with ',' and ':'. */
  if (strpbrk (*clower, "\n,:\\") || strpbrk (*cstorage, "\n,:\\"))
    return cm_err_set (err, 0,
                       "cow: lower `%s` or storage `%s` holds one "
                       "of newline , : \\ (not usable in overlay mount "
                       "data)",
                       *clower, *cstorage);
  if (path_within (*cstorage, *clower) || path_within (*clower, *cstorage))
    return cm_err_set (err, 0,
                       "cow storage `%s` and lower `%s` overlap: "
                       "the storage must be outside the lower tree",
                       *cstorage, *clower);
  return 0;
}

/* upper/ takes the lower root's mode and owner: overlayfs shows the upper
 * root's attributes as the merged root's.  An unprivileged caller may not
 * give it the lower's owner (EPERM): the root then shows the caller's. */
static int
make_layers (struct cow_branch *b, bool sync, struct cm_err **err)
{
  struct stat st;
  if (stat (b->lower, &st) < 0)
    return cm_err_set (err, errno, "cow lower `%s`", b->lower);
  if (mkdir (b->upper, 0700) < 0 || mkdir (b->work, 0700) < 0)
    return cm_err_set (err, errno, "cow storage `%s`", b->storage);
  if ((chown (b->upper, st.st_uid, st.st_gid) < 0 && errno != EPERM)
      || chmod (b->upper, st.st_mode & 07777) < 0)
    return cm_err_set (err, errno, "cow upper `%s`", b->upper);
  clock_gettime (CLOCK_REALTIME_COARSE, &b->created);
  b->state = COW_PENDING;
  return meta_write (b, sync, err);
}

int
cow_branch_create_opts (const char *lower, const char *storage,
                        const struct cow_create_opts *o,
                        struct cow_branch **out, struct cm_err **err)
{
  _cleanup_free_ char *cl = NULL, *cs = NULL;
  uint64_t max_disk = o ? o->max_disk : 0;
  bool made;
  if (check_paths (lower, storage, &cl, &cs, err) < 0)
    return -1;
  made = mkdir (cs, 0700) == 0;
  if (!made && (errno != EEXIST || rmdir (cs) < 0 || mkdir (cs, 0700) < 0))
    return cm_err_set (err, errno == ENOTEMPTY ? EEXIST : errno,
                       "cow storage `%s`", cs);
  struct cow_branch *b = branch_new (cs, cl, max_disk, max_disk > 0);
  b->strip_privs = o && o->strip_privs;
  if ((max_disk && cow_quota_mount (b, o->tag, err) < 0)
      || make_layers (b, !(o && o->nosync), err) < 0)
    {
      if (max_disk)
        cow_quota_umount (cs);
      cm_rm_rf_at (AT_FDCWD, cs, NULL);
      cow_branch_free (b);
      return -1;
    }
  *out = b;
  return 0;
}

int
cow_branch_create (const char *lower, const char *storage,
                   struct cow_branch **out, struct cm_err **err)
{
  return cow_branch_create_opts (lower, storage, NULL, out, err);
}

int
cow_layer_create (const char *lower, const char *storage,
                  struct cow_branch **out, struct cm_err **err)
{
  const struct cow_create_opts o = { .nosync = true };
  return cow_branch_create_opts (lower, storage, &o, out, err);
}

/* max_disk=BYTES and quota=tmpfs|disk, both or neither (a branch made
 * before quotas has neither). */
static int
parse_quota (const char *max, const char *where, uint64_t *bytes,
             bool *in_tmpfs)
{
  char *end;
  if (max == NULL && where == NULL)
    return 0;
  if (max == NULL || where == NULL || !(*max >= '1' && *max <= '9'))
    return -1;
  errno = 0;
  *bytes = strtoull (max, &end, 10);
  *in_tmpfs = strcmp (where, "tmpfs") == 0;
  return errno || *end || (!*in_tmpfs && strcmp (where, "disk")) ? -1 : 0;
}

static int
parse_meta (char *text, const char *storage, struct cow_branch **out,
            struct cm_err **err)
{
  char *lower = NULL, *created = NULL, *state = NULL, *save = NULL;
  char *max = NULL, *where = NULL, *privs = NULL;
  uint64_t bytes = 0;
  bool in_tmpfs = false;
  for (char *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    if (cm_startswith (l, "lower="))
      lower = l + 6;
    else if (cm_startswith (l, "created="))
      created = l + 8;
    else if (cm_startswith (l, "state="))
      state = l + 6;
    else if (cm_startswith (l, "max_disk="))
      max = l + 9;
    else if (cm_startswith (l, "quota="))
      where = l + 6;
    else if (cm_startswith (l, "privs="))
      privs = l + 6;
  long long sec;
  long nsec;
  int st = state ? cow_state_parse (state) : -1;
  if (lower == NULL || lower[0] != '/' || created == NULL || st < 0
      || sscanf (created, "%lld.%ld", &sec, &nsec) != 2
      || parse_quota (max, where, &bytes, &in_tmpfs) < 0
      || (privs && strcmp (privs, "strip") != 0))
    return cm_err_set (err, EINVAL, "cow branch `%s`: bad meta", storage);
  struct cow_branch *b = branch_new (storage, lower, bytes, in_tmpfs);
  b->lost = in_tmpfs && !cow_quota_mounted (storage);
  b->strip_privs = privs != NULL;
  b->created.tv_sec = (time_t) sec;
  b->created.tv_nsec = nsec;
  b->state = (enum cow_state) st;
  *out = b;
  return 0;
}

int
cow_branch_open (const char *storage, struct cow_branch **out,
                 struct cm_err **err)
{
  _cleanup_free_ char *meta = xasprintf ("%s/meta", storage), *text = NULL;
  if (cm_read_file_at (AT_FDCWD, meta, 64 * 1024, &text, NULL, err) < 0)
    return cm_err_wrap (err, "cow branch `%s`", storage);
  return parse_meta (text, storage, out, err);
}

int
cow_branch_set_state (struct cow_branch *b, enum cow_state s,
                      struct cm_err **err)
{
  if (b->state >= COW_COMMITTING)
    return cm_err_set (err, EBUSY,
                       "cow branch `%s`: a commit is in "
                       "progress; run commit again to finish it",
                       b->storage);
  if (s != COW_PENDING && s != COW_KEPT && s != COW_DEFERRED)
    return cm_err_set (err, EINVAL,
                       "cow branch `%s`: state `%s` is not a "
                       "decision",
                       b->storage, cow_state_name (s));
  b->state = s;
  return cow_meta_write (b, err);
}

int
cow_abort (struct cow_branch *b, struct cm_err **err)
{
  if (b->state == COW_COMMITTING && !b->lost)
    return cm_err_set (err, EBUSY,
                       "cow branch `%s`: a commit is in "
                       "progress; run commit again to finish it",
                       b->storage);
  /* meta first: a crash half-way leaves no branch that looks decidable. */
  _cleanup_free_ char *meta = xasprintf ("%s/meta", b->storage);
  if (unlink (meta) < 0 && errno != ENOENT)
    return cm_err_set (err, errno, "cow abort `%s`", meta);
  return cow_remove (b->storage, err);
}

int
cow_remove (const char *path, struct cm_err **err)
{
  _cleanup_free_ char *ww = xasprintf ("%s/work/work", path);
  _cleanup_free_ char *w = xasprintf ("%s/work", path);
  chmod (ww, 0700);
  chmod (w, 0700);
  /* a quota tmpfs first: removing through it would only empty it */
  cow_quota_umount (path);
  return cm_rm_rf_at (AT_FDCWD, path, err);
}

char *
cow_overlay_data (const struct cow_branch *b, bool userxattr)
{
  return xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=nofollow,"
                    "index=off,metacopy=off%s",
                    b->lower, b->upper, b->work,
                    userxattr ? ",userxattr" : "");
}
