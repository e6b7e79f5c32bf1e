/* ROOT/cow-branches/ID/record: the branches of a container, its decision
 * annotations and (run --keep) its exit code.  It outlives `delete` until
 * every branch is decided (oci/cow_branch.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/util.h"
#include "cow_branch.h"

static const char *const action_names[] = {
  [OCI_COW_COMMIT] = "commit",
  [OCI_COW_ABORT] = "abort",
  [OCI_COW_KEEP] = "keep",
  [OCI_COW_DEFER] = "defer",
};

int
oci_cow_action_parse (const char *s)
{
  for (size_t i = 0; i < ARRAY_SIZE (action_names); i++)
    if (strcmp (s, action_names[i]) == 0)
      return (int) i;
  return -1;
}

const char *
oci_cow_action_name (enum oci_cow_action a)
{
  return action_names[a];
}

void
oci_cow_record_free (struct oci_cow_record *r)
{
  for (size_t i = 0; i < r->n; i++)
    {
      free (r->v[i].storage);
      free (r->v[i].dest);
    }
  free (r->v);
  r->v = NULL;
  r->n = 0;
  if (r->dirfd >= 0)
    close (r->dirfd);
  r->dirfd = -1;
}

void
oci_cow_record_drop (struct oci_cow_record *r, size_t i)
{
  free (r->v[i].storage);
  free (r->v[i].dest);
  memmove (&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
  r->n--;
}

static int
parse_line (struct oci_cow_record *r, char *l)
{
  int a;
  if (cm_startswith (l, "on_exit=") && (a = oci_cow_action_parse (l + 8)) >= 0)
    r->on_exit = (enum oci_cow_action) a;
  else if (cm_startswith (l, "on_error=")
           && (a = oci_cow_action_parse (l + 9)) >= 0)
    r->on_error = (enum oci_cow_action) a;
  else if (cm_startswith (l, "exit="))
    r->exit_code = atoi (l + 5);
  else if (cm_startswith (l, "branch=") && strchr (l, '\t'))
    {
      char *tab = strchr (l, '\t');
      *tab = '\0';
      r->v = xrealloc (r->v, (r->n + 1) * sizeof *r->v);
      r->v[r->n].storage = xstrdup (l + 7);
      r->v[r->n++].dest = xstrdup (tab + 1);
    }
  else
    return -1;
  return 0;
}

int
oci_cow_record_load (const struct oci_globals *g, const char *id,
                     struct oci_cow_record *r, struct cm_err **err)
{
  _cleanup_free_ char *dir
      = xasprintf ("%s/" OCI_COW_BRANCHES "/%s", g->root, id),
      *text = NULL;
  char *save = NULL;
  memset (r, 0, sizeof *r);
  r->exit_code = -1;
  r->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (r->dirfd < 0)
    return errno == ENOENT ? 1 : cm_err_set (err, errno, "`%s`", dir);
  if (flock (r->dirfd, LOCK_EX) < 0)
    return cm_err_set (err, errno, "lock `%s`", dir);
  if (cm_read_file_at (r->dirfd, "record", 1 << 20, &text, NULL, err) < 0)
    {
      if ((*err)->errno_ != ENOENT)
        return -1;
      cm_err_free (err);
      return 1; /* a create that died before writing it */
    }
  for (char *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    if (parse_line (r, l) < 0)
      return cm_err_set (err, EINVAL, "`%s/record`: bad line \"%.64s\"", dir,
                         l);
  return 0;
}

int
oci_cow_record_save (const struct oci_globals *g, const char *id,
                     struct oci_cow_record *r, struct cm_err **err)
{
  _cleanup_free_ char *dir
      = xasprintf ("%s/" OCI_COW_BRANCHES "/%s", g->root, id);
  char *buf = NULL;
  size_t len = 0;
  if (r->n == 0)
    return cm_rm_rf_at (AT_FDCWD, dir, err);
  FILE *f = open_memstream (&buf, &len);
  fprintf (f, "on_exit=%s\non_error=%s\nexit=%d\n", action_names[r->on_exit],
           action_names[r->on_error], r->exit_code);
  for (size_t i = 0; i < r->n; i++)
    fprintf (f, "branch=%s\t%s\n", r->v[i].storage, r->v[i].dest);
  fclose (f);
  int ret = cm_atomic_write_at (r->dirfd, "record", buf, len, 0600, err);
  free (buf);
  return ret;
}
