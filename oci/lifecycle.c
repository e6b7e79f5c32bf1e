/* The container lifecycle, shared by the create, start, run and delete
 * commands: where the bundle comes from (the caller's, or the one `run
 * --image` built, which the container then owns), the runtime's create
 * options, start from what create recorded, and delete. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image_run.h"
#include "cow_branch.h"
#include "lifecycle.h"
#include "stdio_record.h"
#include "runtime/runtime.h"
#include "spec.h"

static char *
hook_state (void *ud, pid_t pid, const char *status)
{
  struct oci_state *st = ud;
  struct oci_state tmp = *st;
  tmp.pid = pid;
  tmp.status = oci_status_from_name (status);
  return oci_state_json (&tmp, false);
}

/* Each thing a killed create would leave (the cgroup, the process) is in
 * state.json before it exists, so `delete -f` always finds it; "creating"
 * until the process is parked (oci_state_refresh keeps it so: a create
 * that died half-way is never startable). */
struct progress_ctx
{
  struct oci_state *st;
  bool terminal;                /* process.terminal: which stdio to record */
};

static int
record_progress (void *ud, const struct rt_progress *pr, struct cm_err **err)
{
  const struct progress_ctx *ctx = ud;
  struct oci_state *st = ctx->st;
  enum oci_status status = pr->ready ? OCI_CREATED : OCI_CREATING;
  /* Each replace of state.json costs a data flush on ext4 (auto_da_alloc):
   * write only what changed. */
  if (pr->pid == st->pid && st->status == status
      && pr->supervisor_pid == st->supervisor_pid
      && (pr->cgroup_path && st->cgroup_path
              ? strcmp (pr->cgroup_path, st->cgroup_path) == 0
              : pr->cgroup_path == st->cgroup_path))
    return 0;
  free (st->cgroup_path);
  st->cgroup_path = pr->cgroup_path ? xstrdup (pr->cgroup_path) : NULL;
  st->pid = pr->pid;
  st->start_time = pr->start_time;
  st->supervisor_pid = pr->supervisor_pid;
  st->supervisor_start_time = pr->supervisor_start_time;
  st->status = status;
  /* exec gives its process only the inodes the init's rules are on: the
   * record exists before the container is "created". */
  if (pr->ready
      && cm_atomic_write_at (st->dirfd, "landlock.pins", pr->landlock_pins,
                             pr->landlock_pins_len, 0600, err) < 0)
    return -1;
  /* which fds are the engine's, for a checkpoint (oci/stdio_record.h):
   * the init is parked with its stdio set, and this write of state.json
   * is made anyway */
  if (pr->ready && st->stdio == NULL
      && oci_stdio_record (pr->pid, ctx->terminal, &st->stdio, err) < 0)
    return -1;
  return oci_state_save (st, err);
}

/* The first state.json already names the cgroup create will make (the
 * runtime reports the same path again before making it; record_progress
 * then writes nothing).  A path that does not resolve is the runtime's to
 * report, in its order of checks. */
static void
record_cgroup_path (const struct oci_globals *g, const struct rt_config *cfg,
                    struct oci_state *st)
{
  struct cm_err *e = NULL;
  if (rt_handle_cgroup_path (cfg->cgroups_path, st->id, g->systemd_cgroup,
                             &st->cgroup_path, &e) < 0)
    cm_err_free (&e);
}

static char *
owner_name (void)
{
  struct passwd *pw = getpwuid (geteuid ());
  return xstrdup (pw ? pw->pw_name : "");
}

int
oci_write_pid_file (const char *path, pid_t pid, struct cm_err **err)
{
  _cleanup_free_ char *dir = xstrdup (path);
  _cleanup_fd_ int dfd = -1;
  char buf[32];
  char *slash = strrchr (dir, '/');
  const char *base = slash ? path + (slash - dir) + 1 : path;

  if (slash)
    *slash = '\0';
  dfd = open (slash ? (*dir ? dir : "/") : ".",
              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return cm_err_set (err, errno, "--pid-file `%s`", path);
  snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cm_atomic_write_at (dfd, base, buf, strlen (buf), 0644, err) < 0)
    return cm_err_wrap (err, "--pid-file");
  return 0;
}

static int
resolve_bundle (const char *bundle, char **out, struct cm_err **err)
{
  char *r = realpath (bundle ? bundle : ".", NULL);
  if (r == NULL)
    return cm_err_set (err, errno, "bundle `%s`", bundle ? bundle : ".");
  *out = r;
  return 0;
}

/* --isolation, else the run.oci.sandlock.isolation annotation, else auto:
 * namespaces where this user can make them (root, or a user namespace),
 * the namespace-less view otherwise (docs/nsless.md). */
static int
choose_isolation (struct oci_globals *g, const struct oci_create_args *a,
                  const struct rt_config *cfg, enum rt_rootfs_kind *kind,
                  struct cm_err **err)
{
  const char *ann = rt_config_annotation (cfg, "run.oci.sandlock.isolation");
  const char *m = a->isolation ? a->isolation : ann ? ann : "auto";
  const char *what = a->isolation ? "--isolation"
                     : "annotation run.oci.sandlock.isolation";
  m = oci_isolation_resolve (m);
  if (strcmp (m, "namespaces") == 0)
    *kind = RT_ROOTFS_BIND;
  else if (strcmp (m, "landlock") == 0)
    *kind = RT_ROOTFS_VIRTUAL;
  else
    return cm_err_set (err, 0, "%s: \"%s\" is not namespaces, landlock or "
                       "auto", what, m);
  oci_debug (g, "isolation: %s%s", m, *kind == RT_ROOTFS_VIRTUAL
             ? " (no namespaces: a seccomp-notify view of the rootfs)" : "");
  return 0;
}

static int
load_config (struct oci_globals *g, const struct oci_create_args *a,
             const struct oci_state *st, char **buf, size_t *len,
             struct rt_config **cfg, struct cm_err **err)
{
  _cleanup_free_ char *path = a->config ? xstrdup (a->config)
                                        : xasprintf ("%s/config.json",
                                                     st->bundle);
  if (cm_read_file_at (AT_FDCWD, path, OCI_SPEC_MAX_BYTES, buf, len, err) < 0)
    return -1;
  if (oci_spec_parse (*buf, *len, cfg, err) < 0)
    return cm_err_wrap (err, "%s", path);
  if (oci_spec_version_newer ((*cfg)->oci_version))
    {
      _cleanup_free_ char *w = xasprintf (
          "ociVersion \"%.64s\" is newer than the runtime-spec this runtime "
          "knows (1.3): fields it does not know are ignored",
          (*cfg)->oci_version);
      oci_log_warning (g, w);
    }
  return 0;
}

/* What state.json says of a container from its config, before any of it
 * exists. */
static int
state_from_config (struct oci_globals *g, const struct rt_config *cfg,
                   enum rt_rootfs_kind kind, struct oci_state *st,
                   struct cm_err **err)
{
  if (cfg->root_path == NULL || *cfg->root_path == '\0')
    return cm_err_set (err, 0, "root.path: required");
  {
    _cleanup_free_ char *rel = cfg->root_path[0] == '/'
                                   ? NULL
                                   : xasprintf ("%s/%s", st->bundle,
                                                cfg->root_path);
    st->rootfs = realpath (rel ? rel : cfg->root_path, NULL);
  }
  if (st->rootfs == NULL)
    return cm_err_set (err, errno, "root.path `%s`", cfg->root_path);
  st->oci_version = xstrdup (cfg->oci_version);
  st->created = oci_now_rfc3339 ();
  st->owner = owner_name ();
  st->status = OCI_CREATING;
  st->systemd_cgroup = g->systemd_cgroup;
  st->annotations = xcalloc (cfg->annotations_len, sizeof *st->annotations);
  for (size_t i = 0; i < cfg->annotations_len; i++)
    {
      st->annotations[i].key = xstrdup (cfg->annotations[i].key);
      st->annotations[i].value = xstrdup (cfg->annotations[i].value);
    }
  st->annotations_len = cfg->annotations_len;
  /* Which isolation `auto` chose, for `state` (docs/nsless.md). */
  st->annotations = xrealloc (st->annotations, (st->annotations_len + 1)
                                                   * sizeof *st->annotations);
  st->annotations[st->annotations_len].key
      = xstrdup ("run.oci.sandlock.isolation.effective");
  st->annotations[st->annotations_len++].value
      = xstrdup (kind == RT_ROOTFS_VIRTUAL ? "landlock" : "namespaces");
  record_cgroup_path (g, cfg, st);
  return 0;
}

/* The records start needs, written before the process exists: the config
 * as created, what start acts on, state.json, and the two fifos. */
static int
save_records (const struct rt_config *cfg, const char *buf, size_t len,
              struct oci_state *st, struct cm_err **err)
{
  if (cm_atomic_write_at (st->dirfd, "config.json", buf, len, 0600, err) < 0
      || oci_start_record_save (st->dirfd, cfg, err) < 0
      || oci_state_save (st, err) < 0)
    return -1;
  if (mkfifoat (st->dirfd, "exec.fifo", 0600) < 0
      || mkfifoat (st->dirfd, "start.status", 0600) < 0)
    return cm_err_set (err, errno, "create exec fifo");
  return 0;
}

static int
spawn (struct oci_globals *g, const struct oci_create_args *a,
       const struct rt_config *cfg, enum rt_rootfs_kind kind,
       struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *fifo = xasprintf ("%s/%s/exec.fifo", g->root, st->id);
  _cleanup_free_ char *status = xasprintf ("%s/%s/start.status", g->root,
                                           st->id);
  struct rt_created out = { 0 };
  _cleanup_ (cow_branch_freep) struct cow_branch *layer = NULL;
  _cleanup_free_ char *rootfs_copy = NULL;
  const char *lowers[1];
  struct rt_rootfs_source src = { .kind = kind };
  /* run --image, bundle --cow: the root is an overlay of a lower (which
   * needs a mount namespace: not in the namespace-less view) */
  if (kind != RT_ROOTFS_VIRTUAL
      && oci_cow_rootfs_source (g, st->id, cfg, &layer, lowers, &src,
                                &rootfs_copy, err) < 0)
    return -1;
  if (kind == RT_ROOTFS_VIRTUAL && oci_cow_rootfs_lower (cfg) != NULL)
    return cm_err_set (err, 0, "annotation " OCI_COW_ANN "rootfs_lower: an "
                       "overlay rootfs needs a mount namespace, which the "
                       "namespace-less mode does not have (use "
                       "--isolation=namespaces, or a bundle with a copied "
                       "rootfs)");
  struct progress_ctx progress = { st, cfg->process->terminal };
  struct rt_create_opts o = {
    .config = cfg, .id = st->id, .bundle = st->bundle,
    .rootfs = rootfs_copy ? rootfs_copy : st->rootfs,
    .exec_fifo = fifo, .start_status = status,
    .console_socket = a->console_socket,
    .console_fd = a->console_fd, .console_fd_set = a->console_fd_set,
    .preserve_fds = a->preserve_fds, .no_pivot = a->no_pivot,
    .no_new_keyring = a->no_new_keyring, .systemd_cgroup = g->systemd_cgroup,
    .no_cgroup = g->no_cgroup, .detach = a->detach,
    .state_json = hook_state, .state_json_ud = st,
    .progress = record_progress, .progress_ud = &progress,
    /* The lifecycle's two choices, made here and nowhere else: / is a
     * bind of the bundle's root.path (an overlay on it with the
     * rootfs_lower annotation: oci_cow_rootfs_source; namespace-less, the
     * view of it a notify supervisor draws: choose_isolation), the init
     * execs process.args (or, for `restore`, becomes the checkpointed
     * process). */
    .rootfs_source = src,
    .payload = a->payload,
  };
  oci_debug (g, "create %s: bundle %s rootfs %s", st->id, st->bundle,
             st->rootfs);
  if (kind == RT_ROOTFS_VIRTUAL)
    rt_vroot_ignored (cfg, oci_hook_warning, g);
  int created = rt_container_create (&o, &out, err);
  if (src.premade)
    close (src.mount_fd); /* the init attached its own copy */
  if (created < 0)
    {
      /* The runtime killed and reaped it and removed its cgroup. */
      st->pid = 0;
      return -1;
    }
  if (out.warning)
    oci_log_warning (g, out.warning);
  /* state.json already says "created", landlock.pins is written
   * (record_progress). */
  free (out.warning);
  free (out.cgroup_path);
  free (out.landlock_pins);
  if (a->pid_file && oci_write_pid_file (a->pid_file, out.pid, err) < 0)
    return -1;
  return 0;
}

static int
do_create (struct oci_globals *g, const struct oci_create_args *a,
           struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  struct rt_config *cfg = NULL;
  enum rt_rootfs_kind kind = RT_ROOTFS_BIND;
  struct oci_cow_flags cf = { a->cow_on_exit, a->cow_on_error };
  size_t len;
  int ret, cow = 0;

  if (load_config (g, a, st, &buf, &len, &cfg, err) < 0)
    {
      rt_config_free (cfg);
      return -1;
    }
  /* cow mounts become overlays over new branches (docs/cow.md) */
  ret = choose_isolation (g, a, cfg, &kind, err) < 0
                || state_from_config (g, cfg, kind, st, err) < 0
                || (cow = oci_cow_setup (g, st->id, cfg, &cf, err)) < 0
                || save_records (cfg, buf, len, st, err) < 0
                || spawn (g, a, cfg, kind, st, err) < 0
            ? -1 : 0;
  if (ret < 0 && cow > 0)
    oci_cow_discard (g, st->id);
  rt_config_free (cfg);
  return ret;
}

/* The one place a container's records go, with the bundle it owns first:
 * killed in between, a later delete still knows of the bundle. */
static int
remove_container (const struct oci_globals *g, struct oci_state *st,
                  struct cm_err **err)
{
  oci_bundle_drop (g, st);
  oci_cow_layer_release (st->dirfd);
  return oci_state_remove (g, st, err);
}

int
oci_create (struct oci_globals *g, const struct oci_create_args *a,
            struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *image_bundle = NULL;

  memset (st, 0, sizeof *st);
  st->dirfd = -1;
  if (a->preserve_fds < 0)
    {
      image_run_discard (a->image_bundle_tmp);
      return cm_err_set (err, 0, "--preserve-fds: must not be negative");
    }
  if (oci_state_create (g, a->id, st, err) < 0)
    {
      /* An existing id is someone else's container: leave it (and its
       * image bundle) alone. */
      image_run_discard (a->image_bundle_tmp);
      oci_state_free (st);
      return -1;
    }
  if ((a->image_bundle_tmp
       && oci_bundle_adopt (g, st, a->image_bundle_tmp, &image_bundle,
                           err) < 0)
      || resolve_bundle (image_bundle ? image_bundle : a->bundle, &st->bundle,
                         err) < 0
      || do_create (g, a, st, err) < 0)
    {
      struct cm_err *e2 = NULL;
      if (image_bundle == NULL)
        image_run_discard (a->image_bundle_tmp);
      /* Nothing half-created stays: kill what may run, drop the state
       * (and the image bundle, which st->image_bundle names). */
      if (st->pid > 0)
        oci_delete (g, st, &e2);
      else
        remove_container (g, st, &e2);
      cm_err_free (&e2);
      oci_state_free (st);
      return -1;
    }
  return 0;
}

/* How long delete waits for killed processes to go: runc gives up after
 * about 10 s too.  A process frozen by a cgroup the runtime does not own
 * (a frozen parent) or stuck in uninterruptible sleep never goes. */
#define DESTROY_WAIT_MS 10000

/* The notify supervisor exits by itself once the listener hangs up, i.e.
 * with the container: give it a moment (a pidfd wait, no polling), so
 * that its watcher does not take an orderly exit for a death; a
 * supervisor stuck in a handler must not outlive the delete. */
static void
supervisor_gone (const struct oci_state *st)
{
  struct rt_handle *h = NULL;
  struct cm_err *e = NULL;
  if (rt_handle_open (st->supervisor_pid, st->supervisor_start_time, NULL, &h,
                      &e) < 0
      || rt_handle_wait (h, 2000, &e) < 0)
    rt_proc_signal (st->supervisor_pid, st->supervisor_start_time, SIGKILL);
  rt_handle_free (h);
  cm_err_free (&e);
}

int
oci_delete (const struct oci_globals *g, struct oci_state *st,
            struct cm_err **err)
{
  struct rt_handle *h = NULL;
  struct rt_config *cfg = NULL;
  struct cm_err *e2 = NULL;
  int r;

  /* A cgroup that cannot be opened any more is no reason to keep the
   * container: kill and wait for its init alone. */
  if (oci_state_handle (st, NULL, NULL, &h, &e2) < 0)
    {
      cm_err_free (&e2);
      rt_handle_open (st->pid, st->start_time, NULL, &h, &e2);
    }
  /* Nothing is removed while a process lives: the state stays, and a
   * later `delete -f` retries. */
  r = rt_handle_destroy (h, DESTROY_WAIT_MS, err);
  rt_handle_free (h);
  if (r == 0 && st->supervisor_pid > 0)
    supervisor_gone (st);
  if (r < 0)
    return cm_err_wrap (err, "container \"%s\" is kept; run `delete -f` "
                        "again once its processes can exit", st->id);
  if (oci_state_config (st, &cfg, &e2) == 0)
    {
      _cleanup_free_ char *j = NULL;
      st->status = OCI_STOPPED;
      j = oci_state_json (st, false);
      /* poststop failures are warnings (runtime-spec): log each, run the
       * remaining hooks. */
      rt_hooks_run_all (&cfg->hooks[RT_HOOK_POSTSTOP], "poststop", j,
                        oci_hook_warning, g);
      rt_config_free (cfg);
    }
  cm_err_free (&e2);
  return remove_container (g, st, err);
}

/* A startContainer hook (or seccomp, or execve) failed: the runtime-spec
 * wants an error and a stopped container, whose delete comes next.  The
 * process is on its way out; make sure, and drop the fifos. */
static void
stop_failed_start (struct oci_state *st)
{
  rt_proc_signal (st->pid, st->start_time, SIGKILL);
  unlinkat (st->dirfd, "exec.fifo", 0);
  unlinkat (st->dirfd, "start.status", 0);
  st->status = OCI_STOPPED;
}

/* start failed: state.json could not say "running" (nothing was released),
 * the process was not waiting, or it was released and its start failed
 * (|stop|: startContainer hook, seccomp, execve).  Returns true. */
static bool
undo_running (struct oci_state *st, bool stop)
{
  struct cm_err *e2 = NULL;
  if (stop)
    stop_failed_start (st);
  else
    st->status = OCI_CREATED;
  /* Best effort: refresh derives the status from the process anyway. */
  oci_state_save (st, &e2);
  cm_err_free (&e2);
  return true;
}

int
oci_start (struct oci_globals *g, struct oci_state *st, struct cm_err **err)
{
  _cleanup_free_ char *fifo = NULL, *status = NULL;
  struct rt_config *cfg = NULL;
  bool failed = false;

  if (st->status != OCI_CREATED)
    return cm_err_set (err, 0, "cannot start container \"%s\": it is %s",
                       st->id, oci_status_name (st->status));
  if (oci_start_record_load (st->dirfd, &cfg, err) < 0)
    return -1;
  fifo = xasprintf ("%s/%s/exec.fifo", g->root, st->id);
  status = xasprintf ("%s/%s/start.status", g->root, st->id);
  /* "running" is on disk before the process is released, so a start that
   * fails to record it (a full disk) has not started it: an engine that
   * sees the failure and a "created" container is right. */
  st->status = OCI_RUNNING;
  if (oci_state_save (st, err) < 0)
    failed = undo_running (st, false);
  else if (rt_container_start (fifo, status, err) < 0)
    failed = undo_running (st, (*err)->errno_ != ENXIO);
  if (failed)
    {
      rt_config_free (cfg);
      return cm_err_wrap (err, "start \"%s\"", st->id);
    }
  unlinkat (st->dirfd, "exec.fifo", 0);
  unlinkat (st->dirfd, "start.status", 0);
  if (cfg->hooks[RT_HOOK_POSTSTART].len)
    {
      /* runtime-spec 1.3: an error and a stopped container (runc has
       * always done so); before 1.3 each failure is a warning and the
       * remaining hooks still run. */
      _cleanup_free_ char *j = oci_state_json (st, false);
      struct cm_err *e2 = NULL;
      if (!oci_spec_version_at_least (cfg->oci_version, 3))
        rt_hooks_run_all (&cfg->hooks[RT_HOOK_POSTSTART], "poststart", j,
                          oci_hook_warning, g);
      else if (rt_hooks_run (&cfg->hooks[RT_HOOK_POSTSTART], "poststart", j,
                             &e2) < 0)
        {
          struct cm_err *e3 = NULL;
          stop_failed_start (st);
          if (oci_state_save (st, &e3) < 0)
            cm_err_free (&e3);
          rt_config_free (cfg);
          *err = e2;
          return cm_err_wrap (err, "start \"%s\"", st->id);
        }
    }
  rt_config_free (cfg);
  return 0;
}

int
oci_parse_create_flags (const char *cmd, int argc, char **argv,
                        struct oci_create_args *a, bool allow_detach,
                        struct cm_err **err)
{
  enum
  {
    O_PID = 256,
    O_CONSOLE,
    O_PRESERVE,
    O_NOPIVOT,
    O_ISOLATION,
    O_NOKEYRING,
    O_NOSUBREAPER,
    O_CONFIG,
    O_KEEP,
    O_COW_EXIT,
    O_COW_ERROR,
  };
  static const struct option opts[] = {
    { "bundle", required_argument, 0, 'b' },
    { "pid-file", required_argument, 0, O_PID },
    { "console-socket", required_argument, 0, O_CONSOLE },
    { "preserve-fds", required_argument, 0, O_PRESERVE },
    { "no-pivot", no_argument, 0, O_NOPIVOT },
    { "isolation", required_argument, 0, O_ISOLATION },
    { "no-new-keyring", no_argument, 0, O_NOKEYRING },
    { "no-subreaper", no_argument, 0, O_NOSUBREAPER },
    { "detach", no_argument, 0, 'd' },
    { "config", required_argument, 0, O_CONFIG },
    { "keep", no_argument, 0, O_KEEP },
    { "cow-on-exit", required_argument, 0, O_COW_EXIT },
    { "cow-on-error", required_argument, 0, O_COW_ERROR },
    { 0, 0, 0, 0 },
  };
  int c;

  while ((c = getopt_long (argc, argv, allow_detach ? "+b:d" : "+b:", opts,
                           NULL)) != -1)
    switch (c)
      {
      case 'b':
        a->bundle = optarg;
        break;
      case O_PID:
        a->pid_file = optarg;
        break;
      case O_CONSOLE:
        a->console_socket = optarg;
        break;
      case O_PRESERVE:
        if (oci_parse_preserve_fds (cmd, optarg, &a->preserve_fds, err) < 0)
          return -1;
        break;
      case O_NOPIVOT:
        a->no_pivot = true;
        break;
      case O_ISOLATION:
        a->isolation = optarg;
        break;
      case O_NOKEYRING:
        a->no_new_keyring = true;
        break;
      case O_NOSUBREAPER:
        break;                  /* runc compatibility: we never reap */
      case O_CONFIG:
        a->config = optarg;
        break;
      case O_KEEP:
        if (!allow_detach)
          return cm_err_set (err, 0, "%s: --keep is a `run` flag", cmd);
        a->keep = true;
        break;
      case O_COW_EXIT:
      case O_COW_ERROR:
        if (!allow_detach)
          return cm_err_set (err, 0, "%s: --cow-on-exit/--cow-on-error are "
                             "`run` flags (create: the annotations "
                             OCI_COW_ANN "on_exit/on_error)", cmd);
        if (oci_cow_action_parse (optarg) < 0)
          return cm_err_set (err, 0, "%s: --cow-on-%s: expected commit, "
                             "abort, keep or defer, got \"%s\"", cmd,
                             c == O_COW_EXIT ? "exit" : "error", optarg);
        *(c == O_COW_EXIT ? &a->cow_on_exit : &a->cow_on_error) = optarg;
        break;
      case 'd':
        if (!allow_detach)
          return cm_err_set (err, 0, "%s: unknown flag -d", cmd);
        a->detach = true;
        break;
      default:
        return cm_err_set (err, 0, "%s: unknown flag (see `sandlock-oci help "
                           "%s`)", cmd, cmd);
      }
  if (optind >= argc)
    return cm_err_set (err, 0, "%s: container id required", cmd);
  if (optind + 1 < argc)
    return cm_err_set (err, 0, "%s: unexpected argument \"%s\"", cmd,
                       argv[optind + 1]);
  a->id = argv[optind];
  return optind;
}
