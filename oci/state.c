#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/runtime.h"
#include "spec.h"
#include "state.h"

/* The record that a container owns its image bundle (see state.h). */
#define IMAGE_BUNDLE_MARK "image-bundle"

bool
oci_id_valid (const char *id)
{
  size_t n = 0;
  if (id == NULL || strcmp (id, ".") == 0 || strcmp (id, "..") == 0
      || strcmp (id, OCI_IMAGE_BUNDLES) == 0
      || strcmp (id, OCI_COW_BRANCHES) == 0)
    return false;
  for (const char *s = id; *s; s++, n++)
    if (!isalnum ((unsigned char) *s) && !strchr ("_+-.", *s))
      return false;
  /* The id is a directory name under --root (and a cgroup name). */
  return n > 0 && n <= NAME_MAX;
}

int
oci_state_handle (const struct oci_state *st, const char *cmd,
                  const char *why, struct rt_handle **h, struct cm_err **err)
{
  if (cmd && st->cgroup_path == NULL)
    return cm_err_set (err, 0, "%s: container \"%s\" has no cgroup%s%s%s",
                       cmd, st->id, why ? " (" : "", why ? why : "",
                       why ? ")" : "");
  return rt_handle_open (st->pid, st->start_time, st->cgroup_path, h, err);
}

char *
oci_now_rfc3339 (void)
{
  struct timespec ts;
  struct tm tm;
  char buf[64];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%09ldZ", buf, ts.tv_nsec);
}

static int
lock_dir (int dfd, const char *id, struct cm_err **err)
{
  while (flock (dfd, LOCK_EX) < 0)
    if (errno != EINTR)
      return cm_err_set (err, errno, "lock container `%s`", id);
  return 0;
}

static int
open_root (const struct oci_globals *g, bool create, struct cm_err **err)
{
  int fd;
  if (create && cm_mkdir_p (g->root, 0700, err) < 0)
    return cm_err_wrap (err, "--root");
  fd = open (g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && !(errno == ENOENT && !create))
    return cm_err_set (err, errno, "--root `%s`", g->root);
  return fd;
}

int
oci_state_create (const struct oci_globals *g, const char *id,
                  struct oci_state *st, struct cm_err **err)
{
  _cleanup_fd_ int rootfd = -1;
  if (!oci_id_valid (id))
    return cm_err_set (err, 0, "invalid container id \"%.64s%s\": use "
                       "letters, digits, '_', '+', '-' and '.' (1 to %d "
                       "characters, got %zu)", id, strlen (id) > 64 ? "..."
                       : "", NAME_MAX, strlen (id));
  rootfd = open_root (g, true, err);
  if (rootfd < 0)
    return -1;
  if (mkdirat (rootfd, id, 0711) < 0)
    {
      if (errno == EEXIST)
        return cm_err_set (err, 0, "container \"%s\" already exists", id);
      return cm_err_set (err, errno, "create state directory for `%s`", id);
    }
  st->dirfd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (st->dirfd < 0)
    return cm_err_set (err, errno, "open state directory for `%s`", id);
  st->id = xstrdup (id);
  return lock_dir (st->dirfd, id, err);
}

/* Opens <root>/<id> and locks it: 1 when there is no such container
 * (nor was one by the time the lock was ours: a concurrent delete unlinks
 * the directory we wait on). */
static int
open_locked (const struct oci_globals *g, const char *id,
             struct oci_state *st, struct cm_err **err)
{
  _cleanup_fd_ int rootfd = -1;
  struct stat sb;

  st->dirfd = -1;
  if (!oci_id_valid (id))
    return 1;
  rootfd = open_root (g, false, err);
  if (rootfd < 0)
    return *err ? -1 : 1;
  st->dirfd = openat (rootfd, id,
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (st->dirfd < 0)
    return errno == ENOENT ? 1 : cm_err_set (err, errno, "open state of `%s`",
                                             id);
  st->id = xstrdup (id);
  if (lock_dir (st->dirfd, id, err) < 0)
    return -1;
  if (fstat (st->dirfd, &sb) < 0)
    return cm_err_set (err, errno, "stat state of `%s`", id);
  return sb.st_nlink == 0 ? 1 : 0;
}

/* The one reader of the record oci_state_own_bundle writes. */
static void
load_bundle_owned (struct oci_state *st)
{
  st->image_bundle = faccessat (st->dirfd, IMAGE_BUNDLE_MARK, F_OK,
                                AT_SYMLINK_NOFOLLOW) == 0;
}

static int
read_state (struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (cm_read_file_at (st->dirfd, "state.json", OCI_STATE_MAX_BYTES, &buf,
                       &len, err) < 0)
    {
      if ((*err)->errno_ == ENOENT)
        {
          cm_err_free (err);
          return cm_err_set (err, 0, "container \"%s\" does not exist",
                             st->id);
        }
      return cm_err_wrap (err, "container `%s`", st->id);
    }
  if (oci_state_parse (st, buf, len, err) < 0)
    return -1;
  load_bundle_owned (st);
  oci_state_refresh (st);
  return 0;
}

int
oci_state_load (const struct oci_globals *g, const char *id,
                struct oci_state *st, struct cm_err **err)
{
  int r = open_locked (g, id, st, err);
  if (r < 0)
    return -1;
  if (r > 0)
    return cm_err_set (err, 0, "container \"%s\" does not exist", id);
  return read_state (st, err);
}


/* What `delete -f` can still find of a container whose state.json is
 * missing or unreadable: what a partial parse got (a pid only with its
 * start time, so a reused pid is never killed), else the cgroup path
 * config.json gives, as create resolved it. */
static void
salvage (const struct oci_globals *g, struct oci_state *st)
{
  struct rt_config *cfg = NULL;
  struct cm_err *e = NULL;
  if (st->start_time == 0)
    st->pid = 0;
  if (st->cgroup_path == NULL && oci_state_config (st, &cfg, &e) == 0)
    rt_handle_cgroup_path (cfg->cgroups_path, st->id, g->systemd_cgroup,
                           &st->cgroup_path, &e);
  cm_err_free (&e);
  rt_config_free (cfg);
  st->status = OCI_STOPPED;
  load_bundle_owned (st);
}

int
oci_state_load_any (const struct oci_globals *g, const char *id,
                    struct oci_state *st, struct cm_err **err)
{
  struct cm_err *e = NULL;
  int r = open_locked (g, id, st, err);
  if (r != 0)
    return r;
  if (read_state (st, &e) == 0)
    return 0;
  if (faccessat (st->dirfd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    oci_log_warning (g, e->msg);
  cm_err_free (&e);
  salvage (g, st);
  return 0;
}

void
oci_state_refresh (struct oci_state *st)
{
  bool creating = st->status == OCI_CREATING;
  if (creating && st->pid == 0)
    return;
  if (!rt_proc_alive (st->pid, st->start_time))
    {
      st->status = OCI_STOPPED;
      return;
    }
  /* Still "creating" under the lock: its create was killed before the
   * process was parked and recorded.  Never startable; delete removes it. */
  if (creating)
    return;
  if (faccessat (st->dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    {
      st->status = OCI_CREATED;
      return;
    }
  st->status = OCI_RUNNING;
  if (st->cgroup_path)
    {
      struct rt_handle *h = NULL;
      struct cm_err *e = NULL;
      if (oci_state_handle (st, NULL, NULL, &h, &e) == 0
          && rt_handle_is_frozen (h, &e) == 1)
        st->status = OCI_PAUSED;
      rt_handle_free (h);
      cm_err_free (&e);
    }
}

char *
oci_state_json (const struct oci_state *st, bool pretty)
{
  return oci_state_gen (st, pretty, false);
}

int
oci_state_save (const struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *j = oci_state_gen (st, false, true);
  return cm_atomic_write_at (st->dirfd, "state.json", j, strlen (j), 0600, err);
}

int
oci_state_config (const struct oci_state *st, struct rt_config **out,
                  struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (cm_read_file_at (st->dirfd, "config.json", OCI_SPEC_MAX_BYTES, &buf,
                       &len, err) < 0)
    return -1;
  return oci_spec_parse (buf, len, out, err);
}

int
oci_state_remove (const struct oci_globals *g, struct oci_state *st,
                  struct cm_err **err)
{
  _cleanup_fd_ int rootfd = open_root (g, false, err);
  if (rootfd < 0)
    return *err ? -1 : 0;
  return cm_rm_rf_at (rootfd, st->id, err);
}

int
oci_state_own_bundle (struct oci_state *st, const char *path,
                      struct cm_err **err)
{
  if (cm_atomic_write_at (st->dirfd, IMAGE_BUNDLE_MARK, path, strlen (path),
                          0600, err) < 0)
    return -1;
  st->image_bundle = true;
  return 0;
}


void
oci_state_free (struct oci_state *st)
{
  free (st->oci_version);
  free (st->id);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->owner);
  free (st->cgroup_path);
  free (st->stdio);
  for (size_t i = 0; i < st->annotations_len; i++)
    {
      free (st->annotations[i].key);
      free (st->annotations[i].value);
    }
  free (st->annotations);
  if (st->dirfd >= 0)
    close (st->dirfd);
  memset (st, 0, sizeof *st);
  st->dirfd = -1;
}

