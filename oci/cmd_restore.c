/* restore [--image-path DIR] [-b BUNDLE] [-d] [--pid-file F] ... ID: a
 * fresh container from the bundle's config.json — every namespace, mount,
 * cgroup, capability, Landlock rule and seccomp filter of `create` — whose
 * init, once started, becomes the checkpointed process tree, sealed
 * (criu-lite, docs/checkpoint.md).  runc's flags; those criu-lite cannot
 * honour are refused by name. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/criu.h"
#include "lifecycle.h"

#define USAGE                                                                \
  "usage: sandlock-oci restore [--image-path DIR] [--work-path DIR]\n"      \
  "       [-b|--bundle DIR] [-d|--detach] [--pid-file F]\n"                 \
  "       [--console-socket S] [--no-pivot] [--no-subreaper]\n"             \
  "       [--shell-job] [--file-locks] ID\n"

struct restore_ctx
{
  struct criu_image *img;
  int report_fd;
};

static const char *const refused[][2] = {
  { "lazy-pages", "lazy pages (userfaultfd)" },
  { "auto-dedup", "deduplicated parent images" },
  { "manage-cgroups-mode", "CRIU's cgroup handling" },
  { "empty-ns", "external namespaces" },
  { "lsm-profile", "LSM profile switching" },
  { "lsm-mount-context", "LSM mount contexts" },
  { "parent-path", "images based on a pre-dump" },
  { "tcp-established", "restore of established TCP connections" },
  { "ext-unix-sk", "restore of unix sockets connected outside the container" },
};

static int
parse (int argc, char **argv, struct oci_create_args *a, const char **img,
       struct cm_err **err)
{
  static const struct option opts[] = {
    { "image-path", required_argument, 0, 'i' },
    { "work-path", required_argument, 0, 'w' },
    { "bundle", required_argument, 0, 'b' },
    { "detach", no_argument, 0, 'd' },
    { "pid-file", required_argument, 0, 'P' },
    { "console-socket", required_argument, 0, 'c' },
    { "no-pivot", no_argument, 0, 'n' },
    { "no-subreaper", no_argument, 0, 'x' },
    { "shell-job", no_argument, 0, 'x' },  /* always: see checkpoint */
    { "file-locks", no_argument, 0, 'x' }, /* an image holds no lock */
    { "tcp-established", no_argument, 0, 'r' },
    { "ext-unix-sk", no_argument, 0, 'r' },
    { "lazy-pages", no_argument, 0, 'r' },
    { "auto-dedup", no_argument, 0, 'r' },
    { "manage-cgroups-mode", required_argument, 0, 'r' },
    { "empty-ns", required_argument, 0, 'r' },
    { "lsm-profile", required_argument, 0, 'r' },
    { "lsm-mount-context", required_argument, 0, 'r' },
    { "parent-path", required_argument, 0, 'r' },
    { 0, 0, 0, 0 }
  };
  int c, idx = 0;
  /* containerd's go-runc passes "-no-subreaper" (one dash), which runc's
   * flag parser takes as --no-subreaper */
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "-no-subreaper") == 0)
      argv[i] = (char *) "--no-subreaper";
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+b:d", opts, &idx)) != -1)
    if (c == 'i')
      *img = optarg;
    else if (c == 'b')
      a->bundle = optarg;
    else if (c == 'd')
      a->detach = true;
    else if (c == 'P')
      a->pid_file = optarg;
    else if (c == 'c')
      a->console_socket = optarg;
    else if (c == 'n')
      a->no_pivot = true;
    else if (c == 'r')
      {
        for (size_t k = 0; k < ARRAY_SIZE (refused); k++)
          if (strcmp (opts[idx].name, refused[k][0]) == 0)
            return cm_err_set (err, 0, "restore: --%s is not supported: "
                               "criu-lite has no %s (docs/checkpoint.md)",
                               refused[k][0], refused[k][1]);
      }
    else if (c != 'w' && c != 'x')
      return cm_err_set (err, 0, "restore: unknown option `%s`\n%s",
                         argv[optind - 1], USAGE);
  if (argc - optind != 1)
    return cm_err_set (err, 0, "restore: %s", USAGE);
  a->id = argv[optind];
  if (*img == NULL)
    *img = "checkpoint";  /* runc's default, in the cwd */
  return 0;
}

/* What a checkpoint with --skip-unsupported recorded and the restore
 * cannot bring back: said on the restored container's stderr (the
 * engine's log), one line each, before the processes resume. */
static void
report_skipped (void *arg, const char *what)
{
  (void) arg;
  dprintf (STDERR_FILENO, "sandlock-oci: restore: not restored: %s\n", what);
}

static struct criu_call *
calls_of (const struct rt_seal_list *l)
{
  struct criu_call *c = xcalloc (l->ncalls + 1, sizeof *c);
  for (size_t i = 0; i < l->ncalls; i++)
    {
      c[i].nr = l->calls[i].nr;
      memcpy (c[i].arg, l->calls[i].arg, sizeof c[i].arg);
      c[i].ptr_args = l->calls[i].ptr_args;
      c[i].ok_errno = l->calls[i].ok_errno;
    }
  return c;
}

/* In the container's init, inside its namespaces, mounts, cgroup and
 * Landlock rules, before the capability drop and the seccomp filter
 * (runtime.h, RT_PAYLOAD_FN_SEAL): become the saved tree, every process
 * with its pid (clone3's set_tid), each narrowed to the container's
 * credentials before it opens what the image names and sealed — the
 * drop and the filter — by the stub in every thread as the last step
 * before the saved context resumes.  Returns only on failure. */
static int
restore_payload (void *arg, const struct rt_seal *rs)
{
  struct restore_ctx *c = arg;
  struct criu_seal narrow = { calls_of (&rs->narrow), rs->narrow.ncalls,
                              rs->data, rs->data_len, rs->relocs, rs->nrelocs };
  struct criu_seal seal = { calls_of (&rs->seal), rs->seal.ncalls,
                            rs->data, rs->data_len, rs->relocs, rs->nrelocs };
  struct criu_restore_opts o = { .report_fd = c->report_fd,
                                 .skipped = report_skipped,
                                 .narrow = &narrow, .seal = &seal };
  struct cm_err *err = NULL;
  int32_t fail = -1;
  criu_restore_image (c->img, &o, &err);
  if (write (c->report_fd, &fail, 4) == 4 && err)
    fail = (int32_t) write (c->report_fd, err->msg, strlen (err->msg));
  return 1;
}

/* 0 once the saved context is about to resume in the container. */
static int
await_report (int fd, struct cm_err **err)
{
  int32_t code = -2;
  char msg[1024];
  ssize_t n = cm_read_all (fd, &code, 4);
  if (n != 4)
    return cm_err_set (err, 0, "restore: the container's init died before "
                       "the saved processes resumed");
  if (code == 0)
    return 0;
  if (code == -1)
    {
      n = read (fd, msg, sizeof msg - 1);
      msg[n > 0 ? n : 0] = '\0';
      return cm_err_set (err, 0, "restore: %s", msg);
    }
  return cm_err_set (err, code & 0xffff, "restore: the restore stub failed in "
                     "phase %d (docs/checkpoint.md)", code >> 16);
}

/* The image's fds at 3.., the report pipe's write end after them: the
 * runtime keeps exactly those (--preserve-fds) and closes the rest in the
 * init.  Whatever the caller left at those numbers was never meant for
 * the container (restore takes no --preserve-fds): replaced in this
 * process only.  rep[0] is where we read the report. */
static int
hand_over (struct restore_ctx *c, int rep[2], struct oci_create_args *a,
           struct cm_err **err)
{
  int n = (int) criu_image_nfds (c->img), p[2], r;
  if (criu_image_place_fds (c->img, 3, err) < 0)
    return -1;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return cm_err_set (err, errno, "restore: pipe");
  rep[0] = fcntl (p[0], F_DUPFD_CLOEXEC, 4 + n);
  close (p[0]);
  if (p[1] == 3 + n)
    r = 0;
  else
    r = dup3 (p[1], 3 + n, O_CLOEXEC) < 0 ? cm_err_set (err, errno, "dup") : 0;
  if (p[1] != 3 + n)
    close (p[1]);
  rep[1] = 3 + n;
  if (r < 0 || rep[0] < 0)
    return r < 0 ? -1 : cm_err_set (err, errno, "restore: pipe");
  c->report_fd = 3 + n;
  a->preserve_fds = n + 1;
  a->payload.kind = RT_PAYLOAD_FN_SEAL;
  a->payload.fn_seal = restore_payload;
  a->payload.arg = c;
  return 0;
}

static void
drop (struct oci_globals *g, struct oci_state *st)
{
  struct cm_err *e = NULL;
  oci_delete (g, st, &e);
  cm_err_free (&e);
}

static int
cmd_restore (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct oci_create_args a = { 0 };
  struct restore_ctx c = { NULL, -1 };
  struct oci_state st = { .dirfd = -1 };
  const char *img = NULL;
  int rep[2] = { -1, -1 }, ret = -1, code;
  bool detach;
  sigset_t set, old;

  if (parse (argc, argv, &a, &img, err) < 0)
    return -1;
  /* Verified before anything is created: a bad image leaves nothing. */
  c.img = criu_image_open (img, err);
  if (c.img == NULL)
    return cm_err_wrap (err, "restore");
  if (hand_over (&c, rep, &a, err) < 0)
    goto out;
  detach = a.detach;
  a.detach = true;  /* the runtime's view: we wait below ourselves */
  if (oci_create (g, &a, &st, err) < 0)
    goto out;
  /* The init holds its copies; ours would keep the report pipe open. */
  criu_image_free (c.img);
  c.img = NULL;
  close (rep[1]);
  rep[1] = -1;
  if (oci_start (g, &st, err) < 0 || await_report (rep[0], err) < 0)
    {
      drop (g, &st);
      goto out;
    }
  ret = 0;
  if (detach)
    goto out;
  /* Foreground, as runc: wait for the restored init, then delete. */
  oci_block_signals (&set, &old);
  flock (st.dirfd, LOCK_UN);
  code = oci_wait_forwarding (st.pid, &set);
  sigprocmask (SIG_SETMASK, &old, NULL);
  flock (st.dirfd, LOCK_EX);
  drop (g, &st);
  ret = code;
out:
  for (int i = 0; i < 2; i++)
    if (rep[i] >= 0)
      close (rep[i]);
  oci_state_free (&st);
  criu_image_free (c.img);
  return ret;
}

OCI_COMMAND (restore_command, "restore", "restore a checkpointed container",
             USAGE "\n"
             "Creates the container ID from the bundle's config.json, as\n"
             "`create` does, and makes its init, once every namespace, mount,\n"
             "cgroup and Landlock rule is in place, become the process tree\n"
             "`checkpoint` saved in --image-path (default ./checkpoint),\n"
             "every pid and tid as saved; each restored thread drops to the\n"
             "container's capabilities and loads its seccomp filter as its\n"
             "last step before it resumes.  Returns once the saved\n"
             "processes run again (with -d), or waits for the container and\n"
             "deletes it (without).  The image is verified first: a corrupted,\n"
             "truncated, foreign-kernel or foreign-CPU image leaves nothing.\n"
             "--shell-job is accepted and always in effect (see checkpoint);\n"
             "--file-locks is accepted: an image holds no lock (checkpoint\n"
             "refuses a process holding one).  containerd's \"-no-subreaper\"\n"
             "is read as --no-subreaper.\n"
             "--tcp-established, --ext-unix-sk, --lazy-pages,\n"
             "--auto-dedup, --manage-cgroups-mode, --empty-ns, --lsm-profile,\n"
             "--lsm-mount-context and --parent-path are refused.\n"
             "See docs/checkpoint.md.\n",
             cmd_restore)
