/* changes ID [--format table|json], commit ID [--force], abort ID,
 * branches: the branches of `cow` mounts (docs/cow.md).  They work on the
 * record under ROOT/cow-branches/ID, also after the container is gone. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "cow_branch.h"
#include "state.h"

#define S(y, s) yajl_gen_string ((y), (const unsigned char *) (s), strlen (s))

static int
load (const struct oci_globals *g, const char *cmd, const char *id,
      struct oci_cow_record *r, struct cm_err **err)
{
  int x = oci_id_valid (id) ? oci_cow_record_load (g, id, r, err) : 1;
  if (x == 1)
    {
      oci_cow_record_free (r);
      return cm_err_set (err, 0, "%s: container \"%s\" has no cow branches",
                         cmd, id);
    }
  if (x < 0)
    oci_cow_record_free (r);
  return x;
}

static void
gen_meta (yajl_gen y, const char *key, const struct cow_meta *m)
{
  S (y, key);
  if (!m->present)
    {
      yajl_gen_null (y);
      return;
    }
  yajl_gen_map_open (y);
  S (y, "kind"), S (y, cow_kind_name (m->kind));
  S (y, "mode"), yajl_gen_integer (y, m->mode);
  S (y, "uid"), yajl_gen_integer (y, m->uid);
  S (y, "gid"), yajl_gen_integer (y, m->gid);
  S (y, "size"), yajl_gen_integer (y, m->size);
  if (m->target)
    S (y, "target"), S (y, m->target);
  if (m->sha256[0])
    S (y, "sha256"), S (y, m->sha256);
  yajl_gen_map_close (y);
}

static void
gen_changes (yajl_gen y, const struct cow_changes *c)
{
  yajl_gen_array_open (y);
  for (size_t i = 0; i < c->n; i++)
    {
      const struct cow_change *x = &c->v[i];
      yajl_gen_map_open (y);
      S (y, "path"), S (y, x->path);
      S (y, "op"), S (y, cow_op_name (x->op));
      if (x->from)
        S (y, "from"), S (y, x->from);
      gen_meta (y, "before", &x->before);
      gen_meta (y, "after", &x->after);
      yajl_gen_map_close (y);
    }
  yajl_gen_array_close (y);
}

static void
print_table (const struct cow_branch *b, const char *dest,
             const struct cow_changes *c)
{
  printf ("# %s (lower %s, %s)\n", dest, b->lower, cow_state_name (b->state));
  for (size_t i = 0; i < c->n; i++)
    {
      const struct cow_change *x = &c->v[i];
      const struct cow_meta *m = x->after.present ? &x->after : &x->before;
      printf ("%-9s %-8s %04o %5u:%-5u %10lld %s", cow_op_name (x->op),
              cow_kind_name (m->kind), (unsigned) m->mode, (unsigned) m->uid,
              (unsigned) m->gid, (long long) m->size, x->path);
      if (x->from)
        printf (" (from %s)", x->from);
      if (m->target)
        printf (" -> %s", m->target);
      printf ("\n");
    }
}

static int
one_branch (yajl_gen y, const struct oci_cow_ref *ref, struct cm_err **err)
{
  struct cow_branch *b = NULL;
  struct cow_changes c = { 0 };
  if (cow_branch_open (ref->storage, &b, err) < 0
      || cow_changes (b, &c, err) < 0)
    {
      cow_branch_free (b);
      return -1;
    }
  if (y == NULL)
    print_table (b, ref->dest, &c);
  else
    {
      yajl_gen_map_open (y);
      S (y, "mount"), S (y, ref->dest);
      S (y, "lower"), S (y, b->lower);
      S (y, "storage"), S (y, b->storage);
      S (y, "state"), S (y, cow_state_name (b->state));
      if (b->max_disk)
        S (y, "max_disk"), yajl_gen_integer (y, (long long) b->max_disk);
      S (y, "changes");
      gen_changes (y, &c);
      yajl_gen_map_close (y);
    }
  cow_changes_free (&c);
  cow_branch_free (b);
  return 0;
}

static int
cmd_changes (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[]
      = { { "format", required_argument, 0, 'f' }, { 0, 0, 0, 0 } };
  struct oci_cow_record r;
  yajl_gen y = NULL;
  bool json = false;
  int c, ret = 0;
  while ((c = getopt_long (argc, argv, "+f:", opts, NULL)) != -1)
    if (c == 'f'
        && (strcmp (optarg, "json") == 0 || strcmp (optarg, "table") == 0))
      json = strcmp (optarg, "json") == 0;
    else
      return cm_err_set (err, 0,
                         "changes: usage: sandlock-oci changes "
                         "[--format table|json] ID");
  if (optind + 1 != argc)
    return cm_err_set (err, 0,
                       "changes: usage: sandlock-oci changes "
                       "[--format table|json] ID");
  if (load (g, "changes", argv[optind], &r, err) < 0)
    return -1;
  if (json)
    {
      y = yajl_gen_alloc (NULL);
      yajl_gen_config (y, yajl_gen_beautify, 1);
      yajl_gen_array_open (y);
    }
  for (size_t i = 0; i < r.n && ret == 0; i++)
    ret = one_branch (y, &r.v[i], err);
  if (y)
    {
      const unsigned char *buf;
      size_t len;
      yajl_gen_array_close (y);
      if (ret == 0 && yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
        fwrite (buf, 1, len, stdout);
      yajl_gen_free (y);
    }
  oci_cow_record_free (&r);
  return ret < 0 ? -1 : 0;
}

/* A branch is decided by hand only once its writer is gone. */
static int
container_gone (const struct oci_globals *g, const char *cmd, const char *id,
                struct cm_err **err)
{
  struct oci_state st = { .dirfd = -1 };
  struct cm_err *e = NULL;
  int ret = 0;
  if (oci_state_load (g, id, &st, &e) == 0 && st.status != OCI_STOPPED)
    ret = cm_err_set (err, EBUSY,
                      "%s: container \"%s\" is %s: its branches "
                      "are decided once it has stopped",
                      cmd, id, oci_status_name (st.status));
  cm_err_free (&e);
  oci_state_free (&st);
  return ret;
}

static int
decide_all (struct oci_globals *g, const char *cmd, const char *id,
            bool commit, bool force, struct cm_err **err)
{
  struct oci_cow_record r;
  struct cow_commit_opts o = { .force = force };
  int ret = 0;
  if (container_gone (g, cmd, id, err) < 0 || load (g, cmd, id, &r, err) < 0)
    return -1;
  for (size_t i = r.n; i-- > 0 && ret == 0;)
    {
      struct cow_branch *b = NULL;
      _cleanup_strv_ char **cf = NULL;
      ret = cow_branch_open (r.v[i].storage, &b, err);
      if (ret == 0 && b->state == COW_PENDING)
        ret = cow_branch_set_state (b, COW_DEFERRED, err);
      if (ret == 0)
        ret = commit ? cow_commit (b, &o, &cf, err) : cow_abort (b, err);
      for (char **p = cf; p && *p; p++)
        fprintf (stderr, "conflict: %s/%s\n", b->lower, *p);
      if (ret == 0)
        oci_cow_record_drop (&r, i);
      else
        {
          cm_err_wrap (err, "%s: mount %s", cmd, r.v[i].dest);
          oci_cow_persist (g, id, &r.v[i], b);
        }
      cow_branch_free (b);
    }
  struct cm_err *e2 = NULL;
  if (oci_cow_record_save (g, id, &r, ret < 0 ? &e2 : err) < 0 && ret == 0)
    ret = -1;
  cm_err_free (&e2);
  oci_cow_record_free (&r);
  return ret < 0 ? -1 : 0;
}

static int
cmd_commit (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[]
      = { { "force", no_argument, 0, 'f' }, { 0, 0, 0, 0 } };
  bool force = false;
  int c;
  while ((c = getopt_long (argc, argv, "+f", opts, NULL)) != -1)
    if (c == 'f')
      force = true;
    else
      return cm_err_set (err, 0,
                         "commit: usage: sandlock-oci commit "
                         "[--force] ID");
  if (optind + 1 != argc)
    return cm_err_set (err, 0,
                       "commit: usage: sandlock-oci commit "
                       "[--force] ID");
  return decide_all (g, "commit", argv[optind], true, force, err);
}

static int
cmd_abort (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  if (argc != 2 || argv[1][0] == '-')
    return cm_err_set (err, 0, "abort: usage: sandlock-oci abort ID");
  return decide_all (g, "abort", argv[1], false, false, err);
}

static int
cmd_branches (struct oci_globals *g, int argc, char **argv,
              struct cm_err **err)
{
  _cleanup_free_ char *top = xasprintf ("%s/" OCI_COW_BRANCHES, g->root);
  DIR *d;
  struct dirent *de;
  if (argc != 1)
    return cm_err_set (err, 0, "branches: usage: sandlock-oci branches");
  printf ("%-24s %-10s %-24s %-32s %s\n", "ID", "STATE", "MOUNT", "LOWER",
          "STORAGE");
  if ((d = opendir (top)) == NULL)
    return errno == ENOENT ? 0 : cm_err_set (err, errno, "`%s`", top);
  while ((de = readdir (d)) != NULL)
    {
      struct oci_cow_record r;
      struct cm_err *e = NULL;
      if (!oci_id_valid (de->d_name)
          || oci_cow_record_load (g, de->d_name, &r, &e) != 0)
        {
          cm_err_free (&e);
          oci_cow_record_free (&r);
          continue;
        }
      for (size_t i = 0; i < r.n; i++)
        {
          struct cow_branch *b = NULL;
          if (cow_branch_open (r.v[i].storage, &b, &e) < 0)
            cm_err_free (&e);
          printf ("%-24s %-10s %-24s %-32s %s\n", de->d_name,
                  b == NULL ? "unreadable"
                  : b->lost ? "lost"
                            : cow_state_name (b->state),
                  r.v[i].dest, b ? b->lower : "-", r.v[i].storage);
          cow_branch_free (b);
        }
      oci_cow_record_free (&r);
    }
  closedir (d);
  return 0;
}

OCI_COMMAND (changes_command, "changes",
             "list what a container changed in its cow mounts",
             "usage: sandlock-oci changes [--format table|json] ID\n\n"
             "Every added, modified, deleted or renamed path of each `cow`\n"
             "mount, with kind, mode, owner, size, symlink target and the\n"
             "sha256 of the content before and after (docs/cow.md).\n",
             cmd_changes)
OCI_COMMAND (
    commit_command, "commit",
    "merge a stopped container's cow branches into their host dirs",
    "usage: sandlock-oci commit [--force] ID\n\n"
    "Refuses, listing them, paths changed in the host directory since\n"
    "the branch was created, unless --force.  A commit that was\n"
    "interrupted is finished by running it again.\n",
    cmd_commit)
OCI_COMMAND (abort_command, "abort", "drop a stopped container's cow branches",
             "usage: sandlock-oci abort ID\n", cmd_abort)
OCI_COMMAND (branches_command, "branches", "list undecided cow branches",
             "usage: sandlock-oci branches\n", cmd_branches)
