/* exec: run a new process in a running container (runc's flags). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "lifecycle.h"
#include "runtime/runtime.h"
#include "spec.h"

struct exec_args
{
  const char *process_file, *console_socket, *cwd, *user, *pid_file;
  char **env, **caps, **gids;
  size_t env_len, caps_len, gids_len;
  int preserve_fds;
  bool tty, detach, no_new_privs;
};

static void
push (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = (char *) s;
}

static void
strv_append (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = xstrdup (s);
}

static int
parse_u32 (const char *s, uint32_t *out)
{
  char *end;
  unsigned long v;
  errno = 0;
  v = strtoul (s, &end, 10);
  if (errno || end == s || *end || v > UINT32_MAX)
    return -1;
  *out = (uint32_t) v;
  return 0;
}

/* Overrides the container's process with the command-line flags. */
static int
apply_flags (struct rt_process *pr, const struct exec_args *a, int argc,
             char **argv, struct cm_err **err)
{
  if (argc > 0)
    {
      for (size_t i = 0; i < pr->args_len; i++)
        free (pr->args[i]);
      free (pr->args);
      pr->args = xcalloc ((size_t) argc, sizeof *pr->args);
      for (int i = 0; i < argc; i++)
        pr->args[i] = xstrdup (argv[i]);
      pr->args_len = (size_t) argc;
    }
  else if (a->process_file == NULL)
    return cm_err_set (err, 0, "exec: a command (or --process FILE) is "
                       "required");
  for (size_t i = 0; i < a->env_len; i++)
    strv_append (&pr->env, &pr->env_len, a->env[i]);
  if (a->cwd)
    {
      free (pr->cwd);
      pr->cwd = xstrdup (a->cwd);
    }
  if (a->tty)
    pr->terminal = true;
  if (a->no_new_privs)
    pr->no_new_privileges = true;
  if (a->user)
    {
      _cleanup_free_ char *u = xstrdup (a->user);
      char *colon = strchr (u, ':');
      if (colon)
        *colon = '\0';
      if (parse_u32 (u, &pr->user.uid) < 0
          || (colon && parse_u32 (colon + 1, &pr->user.gid) < 0))
        return cm_err_set (err, 0, "exec: --user: expected UID[:GID], got "
                           "\"%s\"", a->user);
    }
  for (size_t i = 0; i < a->gids_len; i++)
    {
      uint32_t g;
      if (parse_u32 (a->gids[i], &g) < 0)
        return cm_err_set (err, 0, "exec: --additional-gids: expected a "
                           "number, got \"%s\"", a->gids[i]);
      pr->user.additional_gids
          = xrealloc (pr->user.additional_gids,
                      (pr->user.additional_gids_len + 1) * sizeof g);
      pr->user.additional_gids[pr->user.additional_gids_len++] = g;
    }
  if (a->caps_len && pr->capabilities == NULL)
    pr->capabilities = xcalloc (1, sizeof *pr->capabilities);
  for (size_t i = 0; i < a->caps_len; i++)
    {
      struct rt_capabilities *c = pr->capabilities;
      strv_append (&c->bounding, &c->bounding_len, a->caps[i]);
      strv_append (&c->effective, &c->effective_len, a->caps[i]);
      strv_append (&c->permitted, &c->permitted_len, a->caps[i]);
    }
  return 0;
}

static int
parse_exec_flags (int argc, char **argv, struct exec_args *a,
                  struct cm_err **err)
{
  enum
  {
    O_CONSOLE = 256,
    O_CWD,
    O_PIDFILE,
    O_LABEL,
    O_APPARMOR,
    O_NNP,
    O_PRESERVE,
    O_CGROUP,
    O_IGNORE_PAUSED,
  };
  static const struct option opts[] = {
    { "console-socket", required_argument, 0, O_CONSOLE },
    { "cwd", required_argument, 0, O_CWD },
    { "env", required_argument, 0, 'e' },
    { "tty", no_argument, 0, 't' },
    { "user", required_argument, 0, 'u' },
    { "additional-gids", required_argument, 0, 'g' },
    { "process", required_argument, 0, 'p' },
    { "detach", no_argument, 0, 'd' },
    { "pid-file", required_argument, 0, O_PIDFILE },
    { "process-label", required_argument, 0, O_LABEL },
    { "apparmor", required_argument, 0, O_APPARMOR },
    { "no-new-privs", no_argument, 0, O_NNP },
    { "cap", required_argument, 0, 'c' },
    { "preserve-fds", required_argument, 0, O_PRESERVE },
    { "cgroup", required_argument, 0, O_CGROUP },
    { "ignore-paused", no_argument, 0, O_IGNORE_PAUSED },
    { 0, 0, 0, 0 },
  };
  int c;

  while ((c = getopt_long (argc, argv, "+e:tu:g:p:dc:", opts, NULL)) != -1)
    switch (c)
      {
      case O_CONSOLE:
        a->console_socket = optarg;
        break;
      case O_CWD:
        a->cwd = optarg;
        break;
      case 'e':
        push (&a->env, &a->env_len, optarg);
        break;
      case 't':
        a->tty = true;
        break;
      case 'u':
        a->user = optarg;
        break;
      case 'g':
        push (&a->gids, &a->gids_len, optarg);
        break;
      case 'p':
        a->process_file = optarg;
        break;
      case 'd':
        a->detach = true;
        break;
      case O_PIDFILE:
        a->pid_file = optarg;
        break;
      case O_LABEL:
      case O_APPARMOR:
      case O_CGROUP:
      case O_IGNORE_PAUSED:
        break;                  /* accepted for runc compatibility */
      case O_NNP:
        a->no_new_privs = true;
        break;
      case 'c':
        push (&a->caps, &a->caps_len, optarg);
        break;
      case O_PRESERVE:
        if (oci_parse_preserve_fds ("exec", optarg, &a->preserve_fds, err)
            < 0)
          return -1;
        break;
      default:
        return cm_err_set (err, 0, "exec: unknown flag (see `sandlock-oci "
                           "help exec`)");
      }
  if (optind >= argc)
    return cm_err_set (err, 0, "exec: container id required");
  return optind;
}

static int
load_process (struct rt_config *cfg, const struct exec_args *a,
              struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  struct rt_process *pr = NULL;
  size_t len;
  if (a->process_file == NULL)
    return 0;
  if (cm_read_file_at (AT_FDCWD, a->process_file, OCI_SPEC_MAX_BYTES, &buf,
                       &len, err) < 0)
    return cm_err_wrap (err, "exec: --process");
  if (oci_process_parse (buf, len, &pr, err) < 0)
    return cm_err_wrap (err, "exec: --process `%s`", a->process_file);
  rt_process_free (cfg->process);
  cfg->process = pr;
  return 0;
}

/* The inodes of the init's Landlock rules, written at create; NULL when
 * the container has none stored (the runtime decides whether it may go
 * on without). */
static int
read_pins (struct oci_state *st, char **out, size_t *len, struct cm_err **err)
{
  if (cm_read_file_at (st->dirfd, "landlock.pins", 256u << 20, out, len, err)
      == 0)
    return 0;
  if ((*err)->errno_ != ENOENT)
    return -1;
  cm_err_free (err);
  *out = NULL;
  *len = 0;
  return 0;
}

static bool
nsless (const struct oci_state *st)
{
  for (size_t i = 0; i < st->annotations_len; i++)
    if (strcmp (st->annotations[i].key, "run.oci.sandlock.isolation.effective")
            == 0 && strcmp (st->annotations[i].value, "landlock") == 0)
      return true;
  return false;
}

/* Namespace-less: the container's exec server forks the process, with the
 * init's Landlock domain and filters (docs/nsless.md "exec"). */
static int
exec_vroot (struct oci_globals *g, struct oci_state *st,
            const struct rt_config *cfg, const struct exec_args *a,
            struct cm_err **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s/vroot", g->root, st->id);
  _cleanup_fd_ int status_fd = -1;
  sigset_t set, old;
  pid_t pid;
  int ret = -1;
  /* An ordinary user's container holds no capability (its init keeps
   * the caller's credentials): nothing to add.  A root runtime's exec
   * server applies what the container's own sets allow. */
  if (a->caps_len && geteuid () != 0)
    return cm_err_set (err, 0, "exec: --cap %s: process.capabilities: an "
                       "ordinary user's namespace-less container has no "
                       "capability to give", a->caps[0]);
  struct rt_exec_opts o = {
    .config = cfg, .process = cfg->process, .id = st->id,
    .bundle = st->bundle, .init_pid = st->pid,
    .init_start_time = st->start_time, .cgroup_path = st->cgroup_path,
    .console_socket = a->console_socket, .preserve_fds = a->preserve_fds,
    .vroot_dir = dir,
  };
  if (!a->detach)
    oci_block_signals (&set, &old);
  if (rt_exec_vroot (&o, &pid, &status_fd, err) < 0
      || (a->pid_file && oci_write_pid_file (a->pid_file, pid, err) < 0))
    goto out;
  flock (st->dirfd, LOCK_UN);
  ret = a->detach ? 0 : oci_wait_remote (pid, status_fd, &set);
  if (ret < 0)
    ret = cm_err_set (err, 0, "exec: the container's exec server went away");
out:
  if (!a->detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
  return ret;
}

static int
cmd_exec (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct exec_args a = { 0 };
  struct oci_state st = { .dirfd = -1 };
  struct rt_config *cfg = NULL;
  _cleanup_free_ char *pins = NULL;
  size_t pins_len = 0;
  sigset_t set, old;
  pid_t pid;
  int idx, ret = -1;

  idx = parse_exec_flags (argc, argv, &a, err);
  if (idx < 0)
    goto out;
  if (oci_state_load (g, argv[idx], &st, err) < 0)
    goto out;
  if (st.status != OCI_RUNNING)
    {
      cm_err_set (err, 0, st.status == OCI_PAUSED
                  ? "cannot exec in a paused container \"%s\" (resume it first)"
                  : "cannot exec in container \"%s\": it is not running",
                  st.id);
      goto out;
    }
  if (oci_state_config (&st, &cfg, err) < 0 || load_process (cfg, &a, err) < 0
      || apply_flags (cfg->process, &a, argc - idx - 1, argv + idx + 1, err)
             < 0)
    goto out;
  if (nsless (&st))
    {
      ret = exec_vroot (g, &st, cfg, &a, err);
      goto out;
    }
  if (read_pins (&st, &pins, &pins_len, err) < 0)
    goto out;
  if (!a.detach)
    oci_block_signals (&set, &old);
  {
    struct rt_exec_opts o = {
      .config = cfg, .process = cfg->process, .id = st.id,
      .bundle = st.bundle, .init_pid = st.pid,
      .init_start_time = st.start_time, .cgroup_path = st.cgroup_path,
      .console_socket = a.console_socket, .preserve_fds = a.preserve_fds,
      .landlock_pins = pins, .landlock_pins_len = pins_len,
    };
    if (rt_exec (&o, &pid, err) < 0)
      goto out_mask;
  }
  if (a.pid_file && oci_write_pid_file (a.pid_file, pid, err) < 0)
    goto out_mask;
  /* Other commands on this container may run while it works. */
  flock (st.dirfd, LOCK_UN);
  ret = a.detach ? 0 : oci_wait_forwarding (pid, &set);
out_mask:
  if (!a.detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
out:
  rt_config_free (cfg);
  oci_state_free (&st);
  free (a.env);
  free (a.caps);
  free (a.gids);
  return ret;
}
OCI_COMMAND (exec_command, "exec", "run a new process in a running container",
             "usage: sandlock-oci exec [options] ID [COMMAND [ARG...]]\n\n"
             "  -p, --process FILE      runtime-spec process JSON (else the\n"
             "                          container's process with these changes)\n"
             "  -e, --env K=V           add to the environment (repeatable)\n"
             "      --cwd DIR           working directory\n"
             "  -u, --user UID[:GID]    user\n"
             "  -g, --additional-gids G add a supplementary group (repeatable)\n"
             "  -c, --cap CAP           add a capability (repeatable)\n"
             "      --no-new-privs      set no_new_privs\n"
             "  -t, --tty               allocate a pty (needs --console-socket)\n"
             "      --console-socket S  where the pty master is sent\n"
             "  -d, --detach            return once the process runs\n"
             "      --pid-file F        write the process's pid\n"
             "      --preserve-fds N    pass fds 3..3+N-1\n\n"
             "In the foreground, exits with the process's status (128+N when\n"
             "killed by signal N) and forwards signals to it.\n",
             cmd_exec)
