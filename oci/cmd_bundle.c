/* bundle: an image as a runnable OCI bundle (docs/image.md). */
#include <getopt.h>
#include <stdio.h>

#include "common/util.h"
#include "cow_branch.h"
#include "image_cli.h"

enum { O_COW = 900 };

/* image_cli_parse plus --cow. */
static int
parse (struct image_cli *c, int argc, char **argv, struct cm_err **err)
{
  static const struct option extra[] = { { "cow", no_argument, 0, O_COW },
                                         { 0, 0, 0, 0 } };
  const struct option *opts = image_cli_merge (extra);
  int opt, r;
  optind = 0;
  while ((opt = getopt_long (argc, argv, "q", opts, NULL)) != -1)
    if (opt == O_COW)
      c->cow = true;
    else if ((r = image_cli_opt (c, opt, optarg, err)) <= 0)
      return r < 0 ? -1 : cm_err_set (err, 0, "bundle: unknown option (see "
                                      "`help bundle`)");
  return 0;
}

static int
cmd_bundle (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  struct img_image *im = NULL;
  const char *why;
  int ret;

  if (parse (&c, argc, argv, err) < 0)
    return -1;
  if (c.cow && (why = oci_cow_image_unusable ()) != NULL)
    {
      _cleanup_free_ char *w = xasprintf ("bundle --cow: copying the cached "
                                          "rootfs: %s", why);
      oci_log_warning (g, w);
      c.cow = false;
    }
  if (argc - optind < 2)
    return cm_err_set (err, 0, "bundle: expected REF DIR [-- CMD...]");
  if (image_cli_get (&c, argv[optind], &im, err) < 0)
    return -1;
  ret = image_cli_bundle (&c, im, argv[optind + 1],
                          argc - optind > 2 ? argv + optind + 2 : NULL, err);
  img_image_free (im);
  return ret;
}
OCI_COMMAND (bundle_command, "bundle", "write an image as an OCI bundle",
             "usage: sandlock-oci bundle [options] REF DIR [-- CMD...]\n\n"
             "Pulls REF when needed, copies its rootfs to DIR/rootfs and writes\n"
             "DIR/config.json from the image config (Entrypoint + Cmd, Env,\n"
             "WorkingDir, User, labels and exposed ports as annotations) and the\n"
             "defaults of `spec`.  CMD replaces the image's Cmd.\n\n"
             "With --cow, DIR/rootfs stays empty and the cached rootfs is the\n"
             "read-only lower of an overlay each container mounts there, with\n"
             "an upper of its own (annotation run.oci.sandlock.cow.rootfs_lower;\n"
             "the root is writable; docs/cow.md).  Where overlayfs cannot be\n"
             "used the rootfs is copied, with a warning.\n\n"
             "Options:\n" IMAGE_CLI_OPTS_HELP IMAGE_CLI_UNPACK_HELP,
             cmd_bundle)
