/* create: the cow annotations and the `cow` mount option (docs/cow.md).
 * A bind mount with option "cow" becomes an overlayfs mount over a new
 * branch whose lower is the mount's source: the runtime mounts it like any
 * other filesystem, and Landlock grants write on the destination, i.e.
 * the container's overlay view, never on the host directory itself. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"
#include "runtime/runtime.h"

struct cow_ann
{
  enum oci_cow_action on_exit, on_error;
  const char *storage; /* NULL: under the state root */
  uint64_t max_disk;   /* 0: no quota */
};

static int
parse_action (const char *key, const char *v, enum oci_cow_action *out,
              struct cm_err **err)
{
  int a = oci_cow_action_parse (v);
  if (a < 0)
    return cm_err_set (err, 0,
                       "annotation %s: expected commit, abort, keep "
                       "or defer, got \"%.64s\"",
                       key, v);
  *out = (enum oci_cow_action) a;
  return 0;
}

static int
check_storage (const char *key, const char *v, struct cm_err **err)
{
  struct stat st;
  if (v[0] != '/' || strstr (v, "/../") || cm_startswith (v, "../")
      || (strlen (v) >= 3 && strcmp (v + strlen (v) - 3, "/..") == 0))
    return cm_err_set (err, 0,
                       "annotation %s: \"%.256s\" must be an "
                       "absolute path without \"..\"",
                       key, v);
  if (stat (v, &st) < 0)
    return cm_err_set (err, errno, "annotation %s: \"%.256s\"", key, v);
  if (!S_ISDIR (st.st_mode))
    return cm_err_set (err, ENOTDIR, "annotation %s: \"%.256s\"", key, v);
  return 0;
}

/* Whether another user than the caller (and root) could rename or replace
 * |st|'s entries: a writable directory without the sticky bit, or one
 * they own. */
static bool
others_can_replace (const struct stat *st)
{
  return (st->st_uid != 0 && st->st_uid != geteuid ())
         || ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX));
}

/* The storage directory and each directory above it can be changed only
 * by the caller or root: a branch directory there (the caller's, 0700) is
 * reopened by path at commit and abort, and whoever can rename entries of
 * a directory on that path can put a record of theirs in its place, with
 * any lower: commit would merge their files into it as the caller. */
static int
check_storage_owner (const char *key, const char *v, struct cm_err **err)
{
  char real[PATH_MAX];
  struct stat st;
  if (realpath (v, real) == NULL)
    return cm_err_set (err, errno, "annotation %s: \"%.256s\"", key, v);
  for (;;)
    {
      if (stat (*real ? real : "/", &st) < 0)
        return cm_err_set (err, errno, "annotation %s: `%s`", key, real);
      if (others_can_replace (&st))
        return cm_err_set (err, EPERM,
                           "annotation %s: \"%.256s\": `%s` (owner %u, "
                           "mode %04o) can be changed by another user, who "
                           "could replace a branch stored there; use a "
                           "directory only the caller or root can change",
                           key, v, *real ? real : "/", (unsigned) st.st_uid,
                           (unsigned) (st.st_mode & 07777));
      char *slash = strrchr (real, '/');
      if (slash == NULL)
        return 0; /* "/" was the last */
      *slash = '\0';
    }
}

static int
parse_annotations (const struct rt_config *cfg, const struct oci_cow_flags *f,
                   struct cow_ann *a, struct cm_err **err)
{
  a->on_exit = OCI_COW_COMMIT;
  a->on_error = OCI_COW_ABORT;
  for (size_t i = 0; i < cfg->annotations_len; i++)
    {
      const char *k = cfg->annotations[i].key, *v = cfg->annotations[i].value;
      if (!cm_startswith (k, OCI_COW_ANN))
        continue;
      const char *s = k + strlen (OCI_COW_ANN);
      if (strcmp (s, "on_exit") == 0 ? parse_action (k, v, &a->on_exit, err)
          : strcmp (s, "on_error") == 0
              ? parse_action (k, v, &a->on_error, err)
          : strcmp (s, "storage") == 0
              ? check_storage (k, v, err) < 0
                    ? -1
                    : check_storage_owner (k, v, err)
          : strcmp (s, "rootfs_lower") == 0 ? check_storage (k, v, err)
          : strcmp (s, "max_disk") == 0
              ? oci_cow_size_parse (k, v, &a->max_disk, err)
              : cm_err_set (
                  err, 0,
                  "annotation %s: unknown (this runtime knows " OCI_COW_ANN
                  "on_exit, on_error, storage, rootfs_lower, max_disk)",
                  k))
        return -1;
      if (strcmp (s, "storage") == 0)
        a->storage = v;
    }
  if (f && f->on_exit
      && parse_action ("--cow-on-exit", f->on_exit, &a->on_exit, err) < 0)
    return -1;
  if (f && f->on_error
      && parse_action ("--cow-on-error", f->on_error, &a->on_error, err) < 0)
    return -1;
  return 0;
}

static bool
has_opt (const struct rt_mount *m, const char *o)
{
  for (size_t k = 0; k < m->options_len; k++)
    if (strcmp (m->options[k], o) == 0)
      return true;
  return false;
}

static int
check_mount (const struct rt_mount *m, size_t i, struct cm_err **err)
{
  bool bind = (m->type && strcmp (m->type, "bind") == 0) || has_opt (m, "bind")
              || has_opt (m, "rbind");
  if (!bind)
    return cm_err_set (err, 0,
                       "mounts[%zu].options: \"cow\" needs a bind "
                       "mount",
                       i);
  if (m->source == NULL || m->source[0] != '/')
    return cm_err_set (err, 0,
                       "mounts[%zu].source: a \"cow\" mount needs "
                       "an absolute host directory",
                       i);
  if (m->destination == NULL || strpbrk (m->destination, "\t\n"))
    return cm_err_set (err, 0,
                       "mounts[%zu].destination: a \"cow\" mount's "
                       "destination holds a tab or newline",
                       i);
  return 0;
}

static bool
user_namespace (const struct rt_config *cfg)
{
  for (size_t i = 0; i < cfg->namespaces_len; i++)
    if (strcmp (cfg->namespaces[i].type, "user") == 0)
      return true;
  return false;
}

/* mounts[i] becomes type overlay; its other options (nosuid, nodev, ...)
 * stay; the overlay data items go where the runtime puts unknown options:
 * into the mount data. */
static void
rewrite_mount (struct rt_mount *m, const struct cow_branch *b, bool userns)
{
  _cleanup_free_ char *data = cow_overlay_data (b, userns);
  char **opts = NULL, *save = NULL;
  size_t n = 0;
  for (size_t k = 0; k < m->options_len; k++)
    {
      const char *o = m->options[k];
      if (strcmp (o, "cow") && strcmp (o, "bind") && strcmp (o, "rbind"))
        {
          opts = xrealloc (opts, (n + 1) * sizeof *opts);
          opts[n++] = xstrdup (o);
        }
      free (m->options[k]);
    }
  for (char *t = strtok_r (data, ",", &save); t;
       t = strtok_r (NULL, ",", &save))
    {
      opts = xrealloc (opts, (n + 1) * sizeof *opts);
      opts[n++] = xstrdup (t);
    }
  free (m->options);
  m->options = opts;
  m->options_len = n;
  free (m->type);
  m->type = xstrdup ("overlay");
  free (m->source);
  m->source = xstrdup ("overlay");
}

/* The mount source of this create's quota tmpfs: a mark no other create
 * gives, by which a later reclaim knows a tmpfs for this create's own. */
static void
make_tag (char tag[static 32])
{
  uint64_t n = 0;
  if (getrandom (&n, sizeof n, 0) != (ssize_t) sizeof n)
    n = ((uint64_t) getpid () << 32) ^ (uint64_t) time (NULL);
  snprintf (tag, 32, "sandlock-cow-%016" PRIx64, n);
}

static char *
branch_storage (const char *root, const char *sdir, const char *id, size_t i)
{
  return sdir ? xasprintf ("%s/%s.%zu", sdir, id, i)
              : xasprintf ("%s/" OCI_COW_BRANCHES "/%s/%zu", root, id, i);
}

/* ROOT/cow-branches/ID/creating: the tag and every storage this create is
 * about to make, written before the first is made: a create killed at any
 * point before its record leaves the list of what may be its own
 * (reclaim_dead_create).  Gone once the record is written. */
static int
write_creating (int dirfd, const struct rt_config *cfg, const char *tag,
                const char *root, const char *sdir, const char *id,
                struct cm_err **err)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  fprintf (f, "tag=%s\n", tag);
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if (has_opt (&cfg->mounts[i], "cow"))
      {
        _cleanup_free_ char *s = branch_storage (root, sdir, id, i);
        fprintf (f, "storage=%s\n", s);
      }
  fclose (f);
  int ret = cm_atomic_write_at (dirfd, OCI_COW_CREATING, buf, len, 0600, err);
  free (buf);
  return ret;
}

static int
make_branches (const struct oci_globals *g, const char *id,
               struct rt_config *cfg, const struct cow_ann *a,
               struct oci_cow_record *r, struct cm_err **err)
{
  char root[PATH_MAX], sdir[PATH_MAX], tag[32];
  if (realpath (g->root, root) == NULL)
    return cm_err_set (err, errno, "--root `%s`", g->root);
  if (a->storage && realpath (a->storage, sdir) == NULL)
    return cm_err_set (err, errno, "annotation " OCI_COW_ANN "storage `%s`",
                       a->storage);
  make_tag (tag);
  if (write_creating (r->dirfd, cfg, tag, root, a->storage ? sdir : NULL, id,
                      err) < 0)
    return -1;
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      struct rt_mount *m = &cfg->mounts[i];
      struct cow_branch *b = NULL;
      if (!has_opt (m, "cow"))
        continue;
      _cleanup_free_ char *storage
          = branch_storage (root, a->storage ? sdir : NULL, id, i);
      /* a user namespace's root is not the host's: what its branch may
       * carry into the host is cut down at commit (docs/cow.md) */
      const struct cow_create_opts o = { .max_disk = a->max_disk,
                                         .strip_privs = user_namespace (cfg),
                                         .tag = tag };
      if (cow_branch_create_opts (m->source, storage, &o, &b, err) < 0)
        return oci_cow_quota_wrap (err, a->max_disk, "mounts[%zu] (\"cow\")",
                                   i);
      r->v = xrealloc (r->v, (r->n + 1) * sizeof *r->v);
      r->v[r->n].storage = xstrdup (b->storage);
      r->v[r->n++].dest = xstrdup (m->destination);
      rewrite_mount (m, b, rt_overlay_in_userns (cfg));
      cow_branch_free (b);
    }
  return 0;
}

/* The storages a dead create listed (write_creating) outside |dir| (the
 * storage annotation's): each is reclaimed only where it is provably that
 * create's (cow_quota_reclaim).  Those in |dir| go with it. */
static int
reclaim_listed (const char *dir, struct cm_err **err)
{
  _cleanup_free_ char *list = xasprintf ("%s/" OCI_COW_CREATING, dir);
  _cleanup_free_ char *text = NULL, *in = NULL;
  const char *tag = NULL;
  char *save = NULL, real[PATH_MAX];
  if (realpath (dir, real) == NULL)
    return cm_err_set (err, errno, "`%s`", dir);
  in = xasprintf ("%s/", real);
  if (cm_read_file_at (AT_FDCWD, list, 1 << 20, &text, NULL, err) < 0)
    {
      if ((*err)->errno_ != ENOENT)
        return -1;
      cm_err_free (err); /* killed before it: nothing made outside |dir| */
      return 0;
    }
  for (char *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    if (cm_startswith (l, "tag="))
      tag = l + 4;
    else if (cm_startswith (l, "storage=") && tag
             && !cm_startswith (l + 8, in) && !cow_quota_reclaim (l + 8, tag))
      return cm_err_set (err, EEXIST,
                         "cow storage `%s`, left by a create of this id "
                         "that was killed, holds what is not provably that "
                         "create's (no tmpfs it mounted there, not empty): "
                         "remove it",
                         l + 8);
  return 0;
}

/* ROOT/cow-branches/ID without a record: a create of this id that died
 * before writing it (the record is written before the container exists,
 * and the directory goes with its last branch; a create in progress holds
 * the id's state directory, so the caller, holding it too or having made
 * it, is not racing one).  What it made is its own: the quota tmpfs it
 * mounted go, and so do its storages and the directory.  0: a record is
 * there (nothing done); 1: reclaimed, or there was no |dir|. */
static int
reclaim_dead_create (const char *dir, struct cm_err **err)
{
  _cleanup_free_ char *rec = xasprintf ("%s/record", dir);
  struct dirent *de;
  DIR *d;
  if (access (dir, F_OK) < 0)
    return errno == ENOENT ? 1 : cm_err_set (err, errno, "`%s`", dir);
  if (access (rec, F_OK) == 0 || errno != ENOENT)
    return 0;
  if (reclaim_listed (dir, err) < 0)
    return -1;
  if ((d = opendir (dir)) == NULL)
    return errno == ENOENT ? 1 : cm_err_set (err, errno, "`%s`", dir);
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      {
        _cleanup_free_ char *p = xasprintf ("%s/%s", dir, de->d_name);
        cow_quota_release_at (AT_FDCWD, p);
      }
  closedir (d);
  return cm_rm_rf_at (AT_FDCWD, dir, err) < 0 ? -1 : 1;
}

void
oci_cow_reclaim (const struct oci_globals *g, const char *id)
{
  _cleanup_free_ char *dir
      = xasprintf ("%s/" OCI_COW_BRANCHES "/%s", g->root, id);
  struct cm_err *e = NULL;
  if (oci_id_valid (id) && reclaim_dead_create (dir, &e) < 0)
    oci_log_warning (g, e->msg);
  cm_err_free (&e);
}

static int
open_record_dir (const struct oci_globals *g, const char *id,
                 struct oci_cow_record *r, struct cm_err **err)
{
  _cleanup_free_ char *top = xasprintf ("%s/" OCI_COW_BRANCHES, g->root);
  _cleanup_free_ char *dir = xasprintf ("%s/%s", top, id);
  if (mkdir (top, 0700) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "mkdir `%s`", top);
  int e = mkdir (dir, 0700) < 0 ? errno : 0;
  if (e == EEXIST)
    {
      int k = reclaim_dead_create (dir, err);
      if (k < 0)
        return -1;
      if (k > 0)
        e = mkdir (dir, 0700) < 0 ? errno : 0;
    }
  if (e)
    return cm_err_set (err, e,
                       e == EEXIST
                           ? "container id \"%s\" still has undecided cow "
                             "branches (`sandlock-oci branches`): commit or "
                             "abort them first"
                           : "mkdir `%s`",
                       e == EEXIST ? id : dir);
  r->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (r->dirfd < 0)
    return cm_err_set (err, errno, "open `%s`", dir);
  return 0;
}

int
oci_cow_setup (const struct oci_globals *g, const char *id,
               struct rt_config *cfg, const struct oci_cow_flags *f,
               struct cm_err **err)
{
  struct cow_ann a = { 0 };
  struct oci_cow_record r = { .dirfd = -1, .exit_code = -1 };
  bool any = false;
  if (parse_annotations (cfg, f, &a, err) < 0)
    return -1;
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if (has_opt (&cfg->mounts[i], "cow"))
      {
        if (check_mount (&cfg->mounts[i], i, err) < 0)
          return -1;
        any = true;
      }
  if (!any && a.max_disk && oci_cow_rootfs_lower (cfg) == NULL)
    return cm_err_set (err, 0,
                       "annotation " OCI_COW_ANN "max_disk: nothing to limit: "
                       "the quota applies to cow layers (a mounts[] entry "
                       "with option \"cow\", the " OCI_COW_ANN "rootfs_lower "
                       "root of `bundle --cow`), and this container has "
                       "none");
  if (!any)
    return 0;
  if (open_record_dir (g, id, &r, err) < 0)
    return -1;
  r.on_exit = a.on_exit;
  r.on_error = a.on_error;
  int ret = make_branches (g, id, cfg, &a, &r, err);
  if (ret == 0)
    ret = oci_cow_record_save (g, id, &r, err);
  if (ret == 0)
    unlinkat (r.dirfd, OCI_COW_CREATING, 0);
  if (ret < 0)
    {
      /* what was made is this create's own: drop it */
      for (size_t i = 0; i < r.n; i++)
        {
          cow_quota_release_at (AT_FDCWD, r.v[i].storage);
          cm_rm_rf_at (AT_FDCWD, r.v[i].storage, NULL);
        }
      _cleanup_free_ char *dir
          = xasprintf ("%s/" OCI_COW_BRANCHES "/%s", g->root, id);
      cm_rm_rf_at (AT_FDCWD, dir, NULL);
    }
  oci_cow_record_free (&r);
  return ret < 0 ? -1 : 1;
}

void
oci_cow_discard (const struct oci_globals *g, const char *id)
{
  struct oci_cow_record r;
  struct cm_err *e = NULL;
  if (oci_cow_record_load (g, id, &r, &e) != 0)
    {
      cm_err_free (&e);
      oci_cow_record_free (&r);
      return;
    }
  for (size_t i = 0; i < r.n; i++)
    {
      struct cow_branch *b = NULL;
      /* abort opens up what a mount in a user namespace left */
      if (cow_branch_open (r.v[i].storage, &b, &e) < 0
          || cow_abort (b, &e) < 0)
        {
          cow_quota_release_at (AT_FDCWD, r.v[i].storage);
          cm_rm_rf_at (AT_FDCWD, r.v[i].storage, NULL);
        }
      cm_err_free (&e);
      cow_branch_free (b);
    }
  while (r.n)
    oci_cow_record_drop (&r, r.n - 1);
  oci_cow_record_save (g, id, &r, &e);
  cm_err_free (&e);
  oci_cow_record_free (&r);
}
