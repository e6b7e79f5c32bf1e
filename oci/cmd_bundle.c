/* bundle: an image as a runnable OCI bundle (docs/image.md). */
#include <stdio.h>

#include "common/util.h"
#include "image_cli.h"

static int
cmd_bundle (struct oci_globals *g, int argc, char **argv, struct rt_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  struct img_image *im = NULL;
  int ret;

  if (image_cli_parse ("bundle", &c, argc, argv, err) < 0)
    return -1;
  if (argc - optind < 2)
    return rt_err_set (err, 0, "bundle: expected REF DIR [-- CMD...]");
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
             "Options:\n" IMAGE_CLI_OPTS_HELP IMAGE_CLI_UNPACK_HELP,
             cmd_bundle)
