/* images, rmi, inspect, prune: the image cache (docs/image.md). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "common/json.h"
#include "image_cli.h"

static int
parse (const char *cmd, struct image_cli *c, int argc, char **argv, int nargs,
       struct cm_err **err)
{
  if (image_cli_parse (cmd, c, argc, argv, err) < 0)
    return -1;
  if (argc - optind != nargs)
    return cm_err_set (err, 0, "%s: expected %s", cmd, nargs ? "one image reference"
                                                          : "no arguments");
  return 0;
}

static int
cmd_images (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  struct img_image **v = NULL;
  size_t n = 0;
  if (parse ("images", &c, argc, argv, 0, err) < 0 || img_list (&c.o, &v, &n, err) < 0)
    return -1;
  if (c.json)
    printf ("[");
  else if (!c.quiet)
    printf ("%-60s %-16s %-19s %10s  %s\n", "REFERENCE", "PLATFORM", "DIGEST", "SIZE",
            "CREATED");
  for (size_t i = 0; i < n; i++)
    {
      const struct img_image *im = v[i];
      if (c.json)
        {
          printf ("%s{\"ref\":", i ? "," : "");
          cm_json_write_str (stdout, im->ref);
          printf (",\"digest\":");
          cm_json_write_str (stdout, im->manifest_digest);
          printf (",\"size\":%" PRIu64 ",\"created\":", im->size);
          cm_json_write_str (stdout, im->created);
          printf (",\"platform\":");
          cm_json_write_str (stdout, im->platform);
          printf ("}");
        }
      else if (c.quiet)
        printf ("%s\n", im->ref);
      else
        printf ("%-60s %-16s %.19s %8.1fMB  %s\n", im->ref,
                im->platform ? im->platform : "-", im->manifest_digest, im->size / 1e6,
                im->created ? im->created : "-");
    }
  if (c.json)
    printf ("]\n");
  img_list_free (v, n);
  return 0;
}
OCI_COMMAND (images_command, "images", "list the cached images",
             "usage: sandlock-oci images [--cache-dir DIR] [-q] [--format json]\n", cmd_images)

static int
cmd_rmi (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  if (parse ("rmi", &c, argc, argv, 1, err) < 0 || img_remove (&c.o, argv[optind], err) < 0)
    return -1;
  return 0;
}
OCI_COMMAND (rmi_command, "rmi", "remove a cached image",
             "usage: sandlock-oci rmi [--cache-dir DIR] [--platform OS/ARCH[/VARIANT]] REF|DIGEST\n\n"
             "Removes the reference (every platform of it cached, or the one\n"
             "--platform names); its rootfs and blobs go when no other\n"
             "reference uses them.  Refused, naming them, while containers\n"
             "use its rootfs as their overlay lower (run --image, bundle --cow).\n",
             cmd_rmi)

static int
cmd_inspect (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  struct img_image *im = NULL;
  _cleanup_free_ char *raw = NULL;
  size_t len;
  int ret;
  if (parse ("inspect", &c, argc, argv, 1, err) < 0 || img_lookup (&c.o, argv[optind], &im, err) < 0)
    return -1;
  ret = img_config_raw (&c.o, im, &raw, &len, err);
  if (ret == 0)
    {
      fwrite (raw, 1, len, stdout);
      if (len && raw[len - 1] != '\n')
        putchar ('\n');
    }
  img_image_free (im);
  return ret;
}
OCI_COMMAND (inspect_command, "inspect", "print a cached image's config as JSON",
             "usage: sandlock-oci inspect [--cache-dir DIR] [--platform OS/ARCH[/VARIANT]] "
             "REF|DIGEST\n", cmd_inspect)

static int
cmd_prune (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  struct image_cli c = { .o.tls_verify = -1 };
  uint64_t freed = 0;
  _cleanup_strv_ char **kept = NULL;
  int n;
  if (parse ("prune", &c, argc, argv, 0, err) < 0
      || (n = img_prune (&c.o, &freed, &kept, err)) < 0)
    return -1;
  if (c.json)
    {
      printf ("{\"removed\":%d,\"freed\":%" PRIu64 ",\"kept\":[", n, freed);
      for (size_t i = 0; kept && kept[i]; i++)
        {
          printf ("%s", i ? "," : "");
          cm_json_write_str (stdout, kept[i]);
        }
      printf ("]}\n");
      return 0;
    }
  /* a rootfs still in use is kept, and said so even with -q */
  for (size_t i = 0; kept && kept[i]; i++)
    fprintf (stderr, "sandlock-oci: prune: kept rootfs %s\n", kept[i]);
  if (!c.quiet)
    printf ("removed %d entries, %.1f MB\n", n, freed / 1e6);
  return 0;
}
OCI_COMMAND (prune_command, "prune", "remove cache entries no image references",
             "usage: sandlock-oci prune [--cache-dir DIR] [-q] [--format json]\n\n"
             "A rootfs that containers use as their overlay lower is kept, and\n"
             "said so on stderr (\"kept\" in --format json).\n", cmd_prune)
