#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/cgroup.h"
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
oci_state_cgroup (const struct oci_state *st, const char *cmd,
                  const char *why, struct rt_cgroup **cg, struct rt_err **err)
{
  if (st->cgroup_path == NULL)
    return rt_err_set (err, 0, "%s: container \"%s\" has no cgroup%s%s%s",
                       cmd, st->id, why ? " (" : "", why ? why : "",
                       why ? ")" : "");
  return rt_cgroup_open (st->cgroup_path, cg, err);
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
lock_dir (int dfd, const char *id, struct rt_err **err)
{
  while (flock (dfd, LOCK_EX) < 0)
    if (errno != EINTR)
      return rt_err_set (err, errno, "lock container `%s`", id);
  return 0;
}

static int
open_root (const struct oci_globals *g, bool create, struct rt_err **err)
{
  int fd;
  if (create && rt_mkdir_p (g->root, 0700, err) < 0)
    return rt_err_wrap (err, "--root");
  fd = open (g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && !(errno == ENOENT && !create))
    return rt_err_set (err, errno, "--root `%s`", g->root);
  return fd;
}

int
oci_state_create (const struct oci_globals *g, const char *id,
                  struct oci_state *st, struct rt_err **err)
{
  _cleanup_fd_ int rootfd = -1;
  if (!oci_id_valid (id))
    return rt_err_set (err, 0, "invalid container id \"%.64s%s\": use "
                       "letters, digits, '_', '+', '-' and '.' (1 to %d "
                       "characters, got %zu)", id, strlen (id) > 64 ? "..."
                       : "", NAME_MAX, strlen (id));
  rootfd = open_root (g, true, err);
  if (rootfd < 0)
    return -1;
  if (mkdirat (rootfd, id, 0711) < 0)
    {
      if (errno == EEXIST)
        return rt_err_set (err, 0, "container \"%s\" already exists", id);
      return rt_err_set (err, errno, "create state directory for `%s`", id);
    }
  st->dirfd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (st->dirfd < 0)
    return rt_err_set (err, errno, "open state directory for `%s`", id);
  st->id = xstrdup (id);
  return lock_dir (st->dirfd, id, err);
}

/* Opens <root>/<id> and locks it: 1 when there is no such container
 * (nor was one by the time the lock was ours: a concurrent delete unlinks
 * the directory we wait on). */
static int
open_locked (const struct oci_globals *g, const char *id,
             struct oci_state *st, struct rt_err **err)
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
    return errno == ENOENT ? 1 : rt_err_set (err, errno, "open state of `%s`",
                                             id);
  st->id = xstrdup (id);
  if (lock_dir (st->dirfd, id, err) < 0)
    return -1;
  if (fstat (st->dirfd, &sb) < 0)
    return rt_err_set (err, errno, "stat state of `%s`", id);
  return sb.st_nlink == 0 ? 1 : 0;
}

static int
read_state (struct oci_state *st, struct rt_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (rt_read_file_at (st->dirfd, "state.json", OCI_STATE_MAX_BYTES, &buf,
                       &len, err) < 0)
    {
      if ((*err)->errno_ == ENOENT)
        {
          rt_err_free (err);
          return rt_err_set (err, 0, "container \"%s\" does not exist",
                             st->id);
        }
      return rt_err_wrap (err, "container `%s`", st->id);
    }
  if (oci_state_parse (st, buf, len, err) < 0)
    return -1;
  st->image_bundle = faccessat (st->dirfd, IMAGE_BUNDLE_MARK, F_OK,
                                AT_SYMLINK_NOFOLLOW) == 0;
  oci_state_refresh (st);
  return 0;
}

int
oci_state_load (const struct oci_globals *g, const char *id,
                struct oci_state *st, struct rt_err **err)
{
  int r = open_locked (g, id, st, err);
  if (r < 0)
    return -1;
  if (r > 0)
    return rt_err_set (err, 0, "container \"%s\" does not exist", id);
  return read_state (st, err);
}

static void set_status (struct oci_state *st, const char *s);

/* What `delete -f` can still find of a container whose state.json is
 * missing or unreadable: what a partial parse got (a pid only with its
 * start time, so a reused pid is never killed), else the cgroup path
 * config.json gives, as create resolved it. */
static void
salvage (const struct oci_globals *g, struct oci_state *st)
{
  struct rt_config *cfg = NULL;
  struct rt_err *e = NULL;
  if (st->start_time == 0)
    st->pid = 0;
  if (st->cgroup_path == NULL && oci_state_config (st, &cfg, &e) == 0)
    {
      struct rt_cgroup_opts co = { .cgroups_path = cfg->cgroups_path,
                                   .id = st->id,
                                   .systemd = g->systemd_cgroup };
      rt_cgroup_resolve (&co, &st->cgroup_path, &e);
    }
  rt_err_free (&e);
  rt_config_free (cfg);
  set_status (st, "stopped");
  st->image_bundle = faccessat (st->dirfd, IMAGE_BUNDLE_MARK, F_OK,
                                AT_SYMLINK_NOFOLLOW) == 0;
}

int
oci_state_load_any (const struct oci_globals *g, const char *id,
                    struct oci_state *st, struct rt_err **err)
{
  struct rt_err *e = NULL;
  int r = open_locked (g, id, st, err);
  if (r != 0)
    return r;
  if (read_state (st, &e) == 0)
    return 0;
  if (faccessat (st->dirfd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    oci_log_warning (g, e->msg);
  rt_err_free (&e);
  salvage (g, st);
  return 0;
}

static void
set_status (struct oci_state *st, const char *s)
{
  free (st->status);
  st->status = xstrdup (s);
}

void
oci_state_refresh (struct oci_state *st)
{
  bool creating = strcmp (st->status, "creating") == 0;
  if (creating && st->pid == 0)
    return;
  if (!rt_proc_alive (st->pid, st->start_time))
    {
      set_status (st, "stopped");
      return;
    }
  /* Still "creating" under the lock: its create was killed before the
   * process was parked and recorded.  Never startable; delete removes it. */
  if (creating)
    return;
  if (faccessat (st->dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    {
      set_status (st, "created");
      return;
    }
  set_status (st, "running");
  if (st->cgroup_path)
    {
      struct rt_cgroup *cg = NULL;
      struct rt_err *e = NULL;
      if (rt_cgroup_open (st->cgroup_path, &cg, &e) == 0
          && rt_cgroup_is_frozen (cg, &e) == 1)
        set_status (st, "paused");
      rt_cgroup_free (cg);
      rt_err_free (&e);
    }
}

char *
oci_state_json (const struct oci_state *st, bool pretty)
{
  return oci_state_gen (st, pretty, false);
}

int
oci_state_save (const struct oci_state *st, struct rt_err **err)
{
  _cleanup_free_ char *j = oci_state_gen (st, false, true);
  return rt_atomic_write_at (st->dirfd, "state.json", j, strlen (j), 0600, err);
}

int
oci_state_config (const struct oci_state *st, struct rt_config **out,
                  struct rt_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (rt_read_file_at (st->dirfd, "config.json", OCI_SPEC_MAX_BYTES, &buf,
                       &len, err) < 0)
    return -1;
  return oci_spec_parse (buf, len, out, err);
}

static int
open_image_bundles (int rootfd)
{
  return openat (rootfd, OCI_IMAGE_BUNDLES,
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int
oci_state_adopt_image_bundle (const struct oci_globals *g,
                              struct oci_state *st, const char *tmp,
                              char **bundle, struct rt_err **err)
{
  _cleanup_fd_ int rootfd = -1, bfd = -1;
  _cleanup_free_ char *path = NULL;

  rootfd = open_root (g, false, err);
  if (rootfd < 0)
    return *err ? -1 : rt_err_set (err, ENOENT, "--root `%s`", g->root);
  bfd = open_image_bundles (rootfd);
  if (bfd < 0)
    return rt_err_set (err, errno, "open `%s/%s`", g->root, OCI_IMAGE_BUNDLES);
  path = xasprintf ("%s/%s/%s", g->root, OCI_IMAGE_BUNDLES, st->id);
  /* The record first: whatever happens next, deleting the container
   * removes the bundle. */
  if (rt_atomic_write_at (st->dirfd, IMAGE_BUNDLE_MARK, path, strlen (path),
                          0600, err) < 0)
    return -1;
  st->image_bundle = true;
  /* We hold the id, so what is there is no live container's. */
  if (rt_rm_rf_at (bfd, st->id, err) < 0)
    return rt_err_wrap (err, "remove the stale image bundle `%s`", path);
  if (renameat (AT_FDCWD, tmp, bfd, st->id) < 0)
    return rt_err_set (err, errno, "move image bundle `%s` to `%s`", tmp, path);
  *bundle = rt_steal_ptr (&path);
  return 0;
}

/* Removes ROOT/image-bundles/ID: a symlink there is unlinked, not followed
 * (rt_rm_rf_at opens nothing without O_NOFOLLOW). */
static void
remove_image_bundle (const struct oci_globals *g, int rootfd, const char *id)
{
  struct rt_err *e = NULL;
  _cleanup_fd_ int bfd = open_image_bundles (rootfd);
  if (bfd < 0)
    {
      if (errno != ENOENT)
        rt_err_set (&e, errno, "open `%s/%s`", g->root, OCI_IMAGE_BUNDLES);
    }
  else if (rt_rm_rf_at (bfd, id, &e) < 0)
    rt_err_wrap (&e, "remove the image bundle of `%s`", id);
  if (e)
    {
      oci_log_warning (g, e->msg);
      rt_err_free (&e);
    }
}

int
oci_state_remove (const struct oci_globals *g, struct oci_state *st,
                  struct rt_err **err)
{
  _cleanup_fd_ int rootfd = open_root (g, false, err);
  if (rootfd < 0)
    return *err ? -1 : 0;
  /* The bundle before the record of it: killed in between, a later
   * delete still knows. */
  if (st->image_bundle)
    remove_image_bundle (g, rootfd, st->id);
  return rt_rm_rf_at (rootfd, st->id, err);
}

void
oci_state_free (struct oci_state *st)
{
  free (st->oci_version);
  free (st->id);
  free (st->status);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->owner);
  free (st->cgroup_path);
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

/* How long delete waits for killed processes to go: runc gives up after
 * about 10 s too.  A process frozen by a cgroup the runtime does not own
 * (a frozen parent) or stuck in uninterruptible sleep never goes. */
#define DESTROY_WAIT_MS 10000

/* Waits, at most |timeout_ms|, for a process that is not our child to go
 * away: a pidfd becomes readable when it exits — no polling loop. */
static int
wait_gone (pid_t pid, uint64_t start_time, int timeout_ms,
           struct rt_err **err)
{
  _cleanup_fd_ int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  struct pollfd p;
  int r;
  /* The pid may have been reused between our check and pidfd_open. */
  if (fd < 0 || !rt_proc_alive (pid, start_time))
    return 0;
  p.fd = fd;
  p.events = POLLIN;
  while ((r = poll (&p, 1, timeout_ms)) < 0 && errno == EINTR)
    ;
  if (r == 0)
    return rt_err_set (err, ETIMEDOUT, "process %d still running after "
                       "SIGKILL", (int) pid);
  return 0;
}

static void
kill_all (struct oci_state *st, struct rt_cgroup *cg)
{
  struct rt_err *e2 = NULL;
  rt_proc_signal (st->pid, st->start_time, SIGKILL);
  /* Without a pid namespace, other processes outlive init: the cgroup
   * names them all.  A frozen cgroup must be thawed for SIGKILL to land;
   * only the container's own freezer is ours to thaw. */
  if (cg)
    {
      if (rt_cgroup_is_frozen (cg, &e2) == 1)
        rt_cgroup_freeze (cg, false, &e2);
      rt_err_free (&e2);
      rt_cgroup_kill (cg, SIGKILL, &e2);
      rt_err_free (&e2);
    }
}

/* Bounded wait for init and then every process of the cgroup.  On timeout
 * the error names what is left; the caller keeps the container. */
static int
wait_all (struct oci_state *st, struct rt_cgroup *cg, struct rt_err **err)
{
  struct timespec t0, t1;
  long spent;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (wait_gone (st->pid, st->start_time, DESTROY_WAIT_MS, err) < 0)
    {
      if (cg == NULL)
        return -1;
      struct rt_err *e = NULL;
      /* Name every process of the cgroup, not only init. */
      if (rt_cgroup_wait_empty (cg, 0, &e) < 0)
        {
          rt_err_free (err);
          *err = rt_steal_ptr (&e);
        }
      return -1;
    }
  if (cg == NULL)
    return 0;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  spent = (t1.tv_sec - t0.tv_sec) * 1000L
          + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
  /* Killed processes leave the cgroup a moment after the signal. */
  return rt_cgroup_wait_empty (cg, (int) (DESTROY_WAIT_MS - spent), err);
}

/* A task can still be leaving, or a straggler forked at exit still be
 * there, when the first rmdir runs: EBUSY then means kill what is left,
 * wait (bounded) for the cgroup to empty, and remove every hierarchy's
 * directory again, as runc retries its rmdir. */
static int
remove_cgroup (struct rt_cgroup *cg, struct rt_err **err)
{
  struct rt_err *e = NULL;
  if (rt_cgroup_destroy (cg, &e) == 0)
    return 0;
  if (e->errno_ != EBUSY)
    {
      *err = rt_steal_ptr (&e);
      return -1;
    }
  rt_err_free (&e);
  rt_cgroup_kill (cg, SIGKILL, &e);
  rt_err_free (&e);
  if (rt_cgroup_wait_empty (cg, DESTROY_WAIT_MS, err) < 0)
    return -1;
  return rt_cgroup_destroy (cg, err);
}

int
oci_container_destroy (const struct oci_globals *g, struct oci_state *st,
                       struct rt_err **err)
{
  struct rt_cgroup *cg = NULL;
  struct rt_config *cfg = NULL;
  struct rt_err *e2 = NULL;

  if (st->cgroup_path && rt_cgroup_open (st->cgroup_path, &cg, &e2) < 0)
    rt_err_free (&e2);
  kill_all (st, cg);
  /* Nothing is removed while a process lives: the state stays, and a
   * later `delete -f` retries. */
  if (wait_all (st, cg, err) < 0 || (cg && remove_cgroup (cg, err) < 0))
    {
      rt_cgroup_free (cg);
      return rt_err_wrap (err, "container \"%s\" is kept; run `delete -f` "
                          "again once its processes can exit", st->id);
    }
  rt_cgroup_free (cg);
  if (oci_state_config (st, &cfg, &e2) == 0)
    {
      _cleanup_free_ char *j = NULL;
      set_status (st, "stopped");
      j = oci_state_json (st, false);
      /* poststop failures are warnings (runtime-spec): log each, run the
       * remaining hooks. */
      rt_hooks_run_all (&cfg->hooks[RT_HOOK_POSTSTOP], "poststop", j,
                        oci_hook_warning, g);
      rt_config_free (cfg);
    }
  rt_err_free (&e2);
  return oci_state_remove (g, st, err);
}
