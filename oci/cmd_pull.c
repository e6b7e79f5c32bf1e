/* pull: fetch an image into the cache (docs/image.md). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "common/json.h"
#include "image_cli.h"

static void
print_image (const struct image_cli *c, const struct img_image *im)
{
  if (!c->json)
    {
      if (im->devices_skipped && !c->quiet)
        fprintf (stderr, "%" PRIu64 " device nodes not created (--allow-devices, as "
                 "root, creates them)\n", im->devices_skipped);
      printf ("%s %s\n", im->ref, im->manifest_digest);
      return;
    }
  printf ("{\"ref\":");
  cm_json_write_str (stdout, im->ref);
  printf (",\"digest\":");
  cm_json_write_str (stdout, im->manifest_digest);
  printf (",\"config\":");
  cm_json_write_str (stdout, im->config_digest);
  printf (",\"rootfs\":");
  cm_json_write_str (stdout, im->rootfs);
  printf (",\"platform\":");
  cm_json_write_str (stdout, im->platform);
  printf (",\"size\":%" PRIu64 ",\"cached\":%s,\"devices_skipped\":%" PRIu64 "}\n",
          im->size, im->cached ? "true" : "false", im->devices_skipped);
}

static int
cmd_pull (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  struct img_image *im = NULL;

  if (image_cli_parse ("pull", &c, argc, argv, err) < 0)
    return -1;
  if (argc - optind != 1)
    return cm_err_set (err, 0, "pull: expected one image reference");
  if (image_cli_get (&c, argv[optind], &im, err) < 0)
    return -1;
  print_image (&c, im);
  img_image_free (im);
  return 0;
}
OCI_COMMAND (pull_command, "pull", "pull an image into the cache",
             "usage: sandlock-oci pull [options] REF\n\n"
             "REF: docker://[host[:port]/]name[:tag|@sha256:...], oci:DIR[:tag],\n"
             "     oci-archive:FILE[:tag], docker-daemon:name[:tag]\n\n"
             "Options:\n" IMAGE_CLI_OPTS_HELP IMAGE_CLI_UNPACK_HELP,
             cmd_pull)
