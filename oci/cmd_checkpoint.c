/* checkpoint [--image-path DIR] [--work-path DIR] [--leave-running] ... ID:
 * the container's process tree saved by criu-lite (docs/checkpoint.md).
 * runc's flags; those criu-lite cannot honour are refused by name. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/criu.h"
#include "runtime/config.h"
#include "spec.h"
#include "state.h"
#include "stdio_record.h"

#define USAGE                                                                \
  "usage: sandlock-oci checkpoint [--image-path DIR] [--work-path DIR]\n"   \
  "       [--leave-running] [--shell-job] [--file-locks]\n"              \
  "       [--skip-unsupported] ID\n"

struct ckpt_opts
{
  const char *image_path, *work_path;
  bool leave_running, skip_unsupported;
};

/* runc's checkpoint flags that would need CRIU itself. */
static const char *const refused[][2] = {
  { "pre-dump", "iterative pre-dumps" },
  { "parent-path", "images based on a pre-dump" },
  { "page-server", "a page server" },
  { "lazy-pages", "lazy pages (userfaultfd)" },
  { "auto-dedup", "deduplicated parent images" },
  { "status-fd", "CRIU status notification" },
  { "manage-cgroups-mode", "CRIU's cgroup handling" },
  { "empty-ns", "external namespaces" },
  { "ext-unix-sk-fd", "external unix sockets" },
  /* CRIU's permissions to save what criu-lite cannot restore: granting
   * them would promise what restore does not keep */
  { "tcp-established", "restore of established TCP connections" },
  { "ext-unix-sk", "restore of unix sockets connected outside the container" },
};

static int
parse (int argc, char **argv, struct ckpt_opts *o, struct cm_err **err)
{
  static const struct option opts[] = {
    { "image-path", required_argument, 0, 'i' },
    { "work-path", required_argument, 0, 'w' },
    { "leave-running", no_argument, 0, 'l' },
    { "skip-unsupported", no_argument, 0, 's' },
    /* CRIU's permission for a tree with a terminal: criu-lite always
     * grants it (the container's stdio, a terminal or not, is the
     * engine's and is rebound to the restoring side's) */
    { "shell-job", no_argument, 0, 'p' },
    /* CRIU's permission to save file locks, which containerd always
     * gives: a lock held still fails the checkpoint (dump-locks.c) */
    { "file-locks", no_argument, 0, 'p' },
    { "tcp-established", no_argument, 0, 'r' },
    { "ext-unix-sk", no_argument, 0, 'r' },
    { "pre-dump", no_argument, 0, 'r' },
    { "parent-path", required_argument, 0, 'r' },
    { "page-server", required_argument, 0, 'r' },
    { "lazy-pages", no_argument, 0, 'r' },
    { "auto-dedup", no_argument, 0, 'r' },
    { "status-fd", required_argument, 0, 'r' },
    { "manage-cgroups-mode", required_argument, 0, 'r' },
    { "empty-ns", required_argument, 0, 'r' },
    { 0, 0, 0, 0 }
  };
  int c, idx = 0;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+", opts, &idx)) != -1)
    if (c == 'i')
      o->image_path = optarg;
    else if (c == 'w')
      o->work_path = optarg;
    else if (c == 'l')
      o->leave_running = true;
    else if (c == 's')
      o->skip_unsupported = true;
    else if (c == 'r')
      {
        for (size_t k = 0; k < ARRAY_SIZE (refused); k++)
          if (strcmp (opts[idx].name, refused[k][0]) == 0)
            return cm_err_set (err, 0, "checkpoint: --%s is not supported: "
                               "criu-lite has no %s (docs/checkpoint.md)",
                               refused[k][0], refused[k][1]);
      }
    else if (c != 'p')
      return cm_err_set (err, 0, "checkpoint: unknown option `%s`\n%s",
                         argv[optind - 1], USAGE);
  if (argc - optind != 1)
    return cm_err_set (err, 0, "checkpoint: %s", USAGE);
  if (o->image_path == NULL)
    o->image_path = "checkpoint";  /* runc's default, in the cwd */
  return optind;
}

/* --work-path: runc's CRIU logs go there; ours says what was saved. */
static void
work_log (const struct ckpt_opts *o, const struct oci_state *st)
{
  struct cm_err *e = NULL;
  _cleanup_free_ char *line = NULL;
  _cleanup_fd_ int dfd = -1;
  if (o->work_path == NULL || cm_mkdir_p (o->work_path, 0700, &e) < 0
      || (dfd = open (o->work_path, O_DIRECTORY | O_RDONLY | O_CLOEXEC)) < 0)
    {
      cm_err_free (&e);
      return;
    }
  line = xasprintf ("criu-lite: container %s (init pid %d) saved to %s%s\n",
                    st->id, (int) st->pid, o->image_path,
                    o->leave_running ? ", left running" : "");
  cm_atomic_write_at (dfd, "dump.log", line, strlen (line), 0600, &e);
  cm_err_free (&e);
}

static bool
is_bind (const struct rt_mount *m)
{
  for (size_t k = 0; k < m->options_len; k++)
    if (strcmp (m->options[k], "bind") == 0 || strcmp (m->options[k], "rbind") == 0)
      return true;
  return false;
}

/* The tmpfs mounts of the container's config.json: their contents are
 * the container's and vanish with it, so criu-lite saves them.  *cfg
 * owns the strings. */
static int
tmpfs_mounts (const struct oci_state *st, struct rt_config **cfg,
              const char ***out, size_t *n, struct cm_err **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/config.json", st->bundle);
  if (oci_spec_load (path, cfg, err) < 0)
    return cm_err_wrap (err, "checkpoint: the container's tmpfs mounts");
  *out = xcalloc ((*cfg)->mounts_len + 1, sizeof **out);
  *n = 0;
  for (size_t i = 0; i < (*cfg)->mounts_len; i++)
    {
      const struct rt_mount *m = &(*cfg)->mounts[i];
      if (m->type && strcmp (m->type, "tmpfs") == 0 && !is_bind (m))
        (*out)[(*n)++] = m->destination;
    }
  return 0;
}

/* criu_dump_opts.freeze: the container's cgroup freezer, while the tree
 * is listed and seized (criu-lite thaws it once every thread is seized:
 * they stop for the tracer before running).  A paused container is
 * frozen already, and criu-lite freezes it again once it is let go
 * (leave_frozen), when it runs on or the checkpoint failed: it stays
 * paused.  containerd pauses every task it checkpoints. */
static int
freeze_container (void *arg, bool frozen, struct cm_err **err)
{
  return rt_handle_freeze (arg, frozen, err);
}

static int
cmd_checkpoint (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct ckpt_opts o = { 0 };
  struct oci_state st = { .dirfd = -1 };
  struct criu_dump_opts d = { 0 };
  struct criu_stdio stdio[3];
  struct rt_handle *h = NULL;
  struct rt_config *cfg = NULL;
  _cleanup_free_ const char **tmpfs = NULL;
  int i = parse (argc, argv, &o, err), ret = -1, r;

  if (i < 0)
    return -1;
  if (oci_state_load (g, argv[i], &st, err) < 0)
    goto out;
  if (st.status != OCI_RUNNING && st.status != OCI_PAUSED)
    {
      cm_err_set (err, 0, "checkpoint: container \"%s\" is %s, not running",
                  st.id, oci_status_name (st.status));
      goto out;
    }
  if (st.cgroup_path || st.status == OCI_PAUSED)
    {
      if (oci_state_handle (&st, "checkpoint", "a paused container needs "
                            "the cgroup freezer", &h, err) < 0)
        goto out;
      d.freeze = freeze_container;
      d.freeze_arg = h;
      d.leave_frozen = st.status == OCI_PAUSED;
    }
  d.pid = st.pid;
  d.image_dir = o.image_path;
  d.leave_running = o.leave_running;
  d.skip_unsupported = o.skip_unsupported;
  d.target_root = true;
  /* the engine's stdio, as the init got it; none recorded (an older
   * runtime created it): the init's fds 0-2 as they are now */
  if ((r = oci_stdio_load (st.stdio, stdio, err)) < 0)
    goto out;
  d.stdio = r ? stdio : NULL;
  if (tmpfs_mounts (&st, &cfg, &tmpfs, &d.ntmpfs, err) < 0)
    goto out;
  d.tmpfs = tmpfs;
  if (criu_dump (&d, err) < 0)
    goto out;
  work_log (&o, &st);
  ret = 0;
out:
  rt_handle_free (h);
  rt_config_free (cfg);
  oci_state_free (&st);
  return ret;
}

OCI_COMMAND (checkpoint_command, "checkpoint", "save a running container's processes",
             USAGE "\n"
             "Saves every process of the container (its init and descendants,\n"
             "each with all its threads) with criu-lite into --image-path\n"
             "(default ./checkpoint).  Without --leave-running the container's\n"
             "processes are killed once saved and its state is \"stopped\".\n"
             "The container's cgroup freezer holds it while its tree is\n"
             "seized; a paused container stays paused if it runs on.  An fd\n"
             "criu-lite cannot restore fails the\n"
             "checkpoint naming it, or with --skip-unsupported is listed when\n"
             "restoring.  --shell-job is accepted and always in effect: the\n"
             "container's stdio, a terminal or not, is rebound to the restoring\n"
             "side's.  --file-locks is accepted, but a file lock held fails the\n"
             "checkpoint with or without it: criu-lite cannot restore one.\n"
             "Refused, as criu-lite cannot restore what they permit:\n"
             "--tcp-established, --ext-unix-sk; and, as they need CRIU itself:\n"
             "--pre-dump, --parent-path, --page-server, --lazy-pages,\n"
             "--auto-dedup, --status-fd, --manage-cgroups-mode, --empty-ns.\n"
             "See docs/checkpoint.md.\n",
             cmd_checkpoint)
