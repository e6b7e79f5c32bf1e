/* sandlock-oci entry point: global flags (runc-compatible), dispatch to the
 * registered sub-commands, and the only place that prints errors and picks
 * the exit code (docs/architecture.md "Errors and exit codes"). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "common/util.h"
#include "runtime/runtime.h"
#include "sysconfig.h"

static void
usage_all (FILE *f)
{
  fprintf (f,
           "usage: sandlock-oci [global options] COMMAND [options] [args]\n\n"
           "An OCI container runtime confined by Landlock and seccomp.\n\n"
           "Global options:\n"
           "  --root DIR           state directory (default /run/sandlock-oci,\n"
           "                       or $XDG_RUNTIME_DIR/sandlock-oci when not root)\n"
           "  --log FILE           append errors (and --debug lines) to FILE\n"
           "  --log-format FMT     text or json\n"
           "  --debug              log what the runtime does and how long it takes\n"
           "  --systemd-cgroup     cgroupsPath is slice:prefix:name\n"
           "  --cgroup-manager M   cgroupfs, systemd (= --systemd-cgroup) or\n"
           "                       disabled (no cgroup; no linux.resources)\n"
           "  --rootless VALUE     auto, true or false\n"
           "  --sandlock-disable LIST, --sandlock-degrade LIST\n"
           "                       default run.oci.sandlock.disable/degrade\n"
           "  --sandlock-config FILE\n"
           "                       defaults file (else /etc/sandlock-oci/config.json)\n"
           "  -v, --version        print the version\n"
           "  -h, --help           this text; `help COMMAND` for one command\n\n"
           "Commands:\n");
  for (const struct oci_command *c = oci_command_list (); c; c = c->next)
    fprintf (f, "  %-12s %s\n", c->name, c->summary);
}

static char *
default_root (void)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (geteuid () != 0 && xdg && *xdg)
    return xasprintf ("%s/sandlock-oci", xdg);
  return xstrdup ("/run/sandlock-oci");
}

static int
parse_rootless (const char *v)
{
  if (strcmp (v, "true") == 0)
    return 1;
  if (strcmp (v, "false") == 0)
    return 0;
  if (strcmp (v, "auto") == 0)
    return -1;
  return -2;
}

static int
cmd_help (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  const struct oci_command *c;
  if (argc < 2)
    {
      usage_all (stdout);
      return 0;
    }
  c = oci_command_find (argv[1]);
  if (c == NULL)
    return cm_err_set (err, 0, "help: unknown command `%s`", argv[1]);
  printf ("%s", c->usage);
  return 0;
}
OCI_COMMAND (help_command, "help", "show help for a command",
             "usage: sandlock-oci help [COMMAND]\n", cmd_help)

/* True when a sub-command's own arguments ask for help (`-h`, `--help`),
 * as runc and podman users type it: answered here for every command.  The
 * scan stops at `--` and at the first operand, so in `exec ID sh --help`
 * the flag stays the program's; a word right after an option may be that
 * option's value (`--creds u:p --help`), so it does not stop the scan. */
static bool
wants_help (int argc, char **argv)
{
  bool after_opt = false;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--") == 0)
        return false;
      if (strcmp (a, "-h") == 0 || strcmp (a, "--help") == 0)
        return true;
      if (a[0] == '-' && a[1] != '\0')
        {
          after_opt = strchr (a, '=') == NULL;
          continue;
        }
      if (!after_opt)
        return false;
      after_opt = false;
    }
  return false;
}

enum
{
  OPT_ROOT = 256,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_DEBUG,
  OPT_SYSTEMD_CGROUP,
  OPT_ROOTLESS,
  OPT_CRIU,
  OPT_CGROUP_MANAGER,
  OPT_SL_CONFIG,
  OPT_SL_DISABLE,
  OPT_SL_DEGRADE,
};

/* crun's --cgroup-manager: cgroupfs and systemd are the two cgroupsPath
 * forms, disabled makes no cgroup. */
static int
parse_cgroup_manager (struct oci_globals *g, const char *v)
{
  g->systemd_cgroup = strcmp (v, "systemd") == 0;
  g->no_cgroup = strcmp (v, "disabled") == 0;
  return g->systemd_cgroup || g->no_cgroup || strcmp (v, "cgroupfs") == 0
             ? 0
             : -1;
}

/* --log is opened before anything runs (and closed: each line reopens it),
 * so a bad path fails the command instead of losing its errors. */
static int
check_log (struct oci_globals *g)
{
  int fd = open (g->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    {
      close (fd);
      return 0;
    }
  fprintf (stderr, "sandlock-oci: --log `%s`: %s\n", g->log,
           strerror (errno));
  return -1;
}

static const struct option global_opts[] = {
  { "root", required_argument, 0, OPT_ROOT },
  { "log", required_argument, 0, OPT_LOG },
  { "log-format", required_argument, 0, OPT_LOG_FORMAT },
  { "debug", no_argument, 0, OPT_DEBUG },
  { "systemd-cgroup", no_argument, 0, OPT_SYSTEMD_CGROUP },
  { "rootless", required_argument, 0, OPT_ROOTLESS },
  { "criu", required_argument, 0, OPT_CRIU },
  { "cgroup-manager", required_argument, 0, OPT_CGROUP_MANAGER },
  { "sandlock-config", required_argument, 0, OPT_SL_CONFIG },
  { "sandlock-disable", required_argument, 0, OPT_SL_DISABLE },
  { "sandlock-degrade", required_argument, 0, OPT_SL_DEGRADE },
  { "version", no_argument, 0, 'v' },
  { "help", no_argument, 0, 'h' },
  { 0, 0, 0, 0 },
};

/* What main does after a global option: go on, or exit with a status. */
enum
{
  GLOBAL_NEXT = -1,
};

/* One global option; returns GLOBAL_NEXT or the exit status (after saying
 * why, for a bad value). */
static int
global_opt (struct oci_globals *g, struct oci_sysconfig_flags *sl, int o)
{
  switch (o)
    {
    case OPT_ROOT:
      free (g->root);
      g->root = xstrdup (optarg);
      return GLOBAL_NEXT;
    case OPT_LOG:
      g->log = optarg;
      return GLOBAL_NEXT;
    case OPT_LOG_FORMAT:
      if (strcmp (optarg, "json") != 0 && strcmp (optarg, "text") != 0)
        {
          oci_log_error (g, "--log-format: expected text or json");
          return 1;
        }
      g->log_format = strcmp (optarg, "json") == 0 ? OCI_LOG_JSON
                                                    : OCI_LOG_TEXT;
      return GLOBAL_NEXT;
    case OPT_DEBUG:
      g->debug = true;
      return GLOBAL_NEXT;
    case OPT_SYSTEMD_CGROUP:
      g->systemd_cgroup = true;
      return GLOBAL_NEXT;
    case OPT_ROOTLESS:
      g->rootless = parse_rootless (optarg);
      if (g->rootless != -2)
        return GLOBAL_NEXT;
      oci_log_error (g, "--rootless: expected auto, true or false");
      return 1;
    case OPT_CGROUP_MANAGER:
      if (parse_cgroup_manager (g, optarg) == 0)
        return GLOBAL_NEXT;
      oci_log_error (g, "--cgroup-manager: expected cgroupfs, systemd or "
                     "disabled");
      return 1;
    case OPT_CRIU:
      return GLOBAL_NEXT;       /* runc compatibility; criu-lite needs no binary */
    case OPT_SL_CONFIG:
      sl->config = optarg;
      return GLOBAL_NEXT;
    case OPT_SL_DISABLE:
      sl->disable = optarg;
      return GLOBAL_NEXT;
    case OPT_SL_DEGRADE:
      sl->degrade = optarg;
      return GLOBAL_NEXT;
    case 'v':
      printf ("sandlock-oci version %s\nspec: 1.2.0\n", SANDLOCK_VERSION);
      return 0;
    case 'h':
      usage_all (stdout);
      return 0;
    default:
      usage_all (stderr);
      return 1;
    }
}

/* The global options, up to the command name at argv[optind]; returns
 * GLOBAL_NEXT or the exit status. */
static int
parse_globals (int argc, char **argv, struct oci_globals *g,
               struct oci_sysconfig_flags *sl)
{
  int o, ret;
  /* "+" stops at the first non-option: the sub-command's flags are its own. */
  while ((o = getopt_long (argc, argv, "+vh", global_opts, NULL)) != -1)
    if ((ret = global_opt (g, sl, o)) != GLOBAL_NEXT)
      return ret;
  if (optind < argc)
    return GLOBAL_NEXT;
  usage_all (stderr);
  return 1;
}

/* What every command shares: the log file, the state root, the defaults
 * file and flags, the seccomp cache.  Prints its own error. */
static int
setup_globals (struct oci_globals *g, const struct oci_sysconfig_flags *sl,
               const char *argv0)
{
  struct cm_err *err = NULL;
  char *cache;
  if (g->log && check_log (g) < 0)
    return -1;
  if (g->root == NULL)
    g->root = default_root ();
  if (oci_sysconfig_apply (argv0, sl, &err) < 0)
    {
      oci_log_error (g, err->msg);
      cm_err_free (&err);
      return -1;
    }
  /* Compiled seccomp profiles are cached next to the containers' state,
   * in a directory only this user can write. */
  cache = xasprintf ("%s/.seccomp-cache", g->root);
  rt_confine_set_cache_dir (cache);
  free (cache);
  return 0;
}

/* Runs |c|; returns the exit status, after printing the error. */
static int
run_command (struct oci_globals *g, const struct oci_command *c, int argc,
             char **argv)
{
  struct cm_err *err = NULL;
  struct timespec t0, t1;
  int ret;

  optind = 0;                   /* full getopt reset for the sub-command */
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ret = c->run (g, argc, argv, &err);
  if (g->debug)
    {
      clock_gettime (CLOCK_MONOTONIC, &t1);
      /* The runtime's own share of an engine's operation (tests/bench/
       * podman.sh sums these lines: docs/benchmarks.md). */
      oci_debug (g, "%s: %.3f ms in the runtime", c->name,
                 (double) (t1.tv_sec - t0.tv_sec) * 1e3
                     + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
    }
  if (ret >= 0)
    return ret;
  oci_log_error (g, err && err->msg ? err->msg : "unknown error");
  cm_err_free (&err);
  return 1;
}

int
main (int argc, char **argv)
{
  struct oci_globals g = { .rootless = -1 };
  struct oci_sysconfig_flags sl = { 0 };
  const struct oci_command *c;
  int ret = parse_globals (argc, argv, &g, &sl);

  if (ret == GLOBAL_NEXT && setup_globals (&g, &sl, argv[0]) < 0)
    ret = 1;
  if (ret != GLOBAL_NEXT)
    {
      free (g.root);
      return ret;
    }
  c = oci_command_find (argv[optind]);
  if (c == NULL)
    {
      char *m = xasprintf ("unknown command `%s` (see `sandlock-oci --help`)",
                           argv[optind]);
      oci_log_error (&g, m);
      free (m);
      free (g.root);
      return 1;
    }
  argc -= optind;
  argv += optind;
  if (wants_help (argc, argv))
    printf ("%s", c->usage);
  else
    ret = run_command (&g, c, argc, argv);
  free (g.root);
  return ret == GLOBAL_NEXT ? 0 : ret;
}
