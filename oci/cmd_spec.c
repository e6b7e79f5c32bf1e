/* `spec`: writes a default config.json, as `runc spec` does. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "common/util.h"
#include "spec_default.h"

static int
cmd_spec (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[] = {
    { "bundle", required_argument, 0, 'b' },
    { "rootless", no_argument, 0, 'r' },
    { 0, 0, 0, 0 },
  };
  struct oci_default_opts o = { .root_readonly = true, .terminal = true };
  const char *bundle = ".";
  _cleanup_free_ char *json = NULL;
  _cleanup_fd_ int dfd = -1;
  int c;

  while ((c = getopt_long (argc, argv, "b:", opts, NULL)) != -1)
    switch (c)
      {
      case 'b':
        bundle = optarg;
        break;
      case 'r':
        o.rootless = true;
        break;
      default:
        return cm_err_set (err, 0, "spec: usage: spec [--rootless] [-b DIR]");
      }
  if (optind != argc)
    return cm_err_set (err, 0, "spec: unexpected argument `%s`", argv[optind]);
  dfd = open (bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return cm_err_set (err, errno, "spec: bundle `%s`", bundle);
  if (faccessat (dfd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return cm_err_set (err, 0, "spec: `%s/config.json` already exists",
                       bundle);
  json = oci_default_config_json (&o);
  if (cm_atomic_write_at (dfd, "config.json", json, strlen (json), 0644, err)
      < 0)
    return cm_err_wrap (err, "spec");
  return 0;
}

OCI_COMMAND (spec_command, "spec", "write a default config.json",
             "usage: sandlock-oci spec [--rootless] [-b|--bundle DIR]\n\n"
             "Writes DIR/config.json (default: the current directory) with\n"
             "the default namespaces, mounts, masked paths and capabilities.\n"
             "--rootless maps the caller's uid/gid in a user namespace.\n",
             cmd_spec)
