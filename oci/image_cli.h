/* Flags shared by the image commands (pull, images, rmi, inspect, prune,
 * bundle, run --image) and the progress display. */
#ifndef SANDLOCK_OCI_IMAGE_CLI_H
#define SANDLOCK_OCI_IMAGE_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "command.h"
#include "image/image.h"

struct image_cli
{
  struct img_opts o;
  bool quiet, json;
  struct progress *prog;        /* owned; NULL when quiet or not a TTY */
  /* image_cli_bundle: instead of copying the cached rootfs, leave DIR/rootfs
   * empty and name the cache in the annotation run.oci.sandlock.cow.
   * rootfs_lower: each container mounts an overlay (docs/cow.md) */
  bool cow;
  /* image_cli_bundle: a config.json for the namespace-less mode (run
   * --image there): the caller's own ids, the image's user said in a
   * warning through |g| when it differs (docs/nsless.md) */
  bool nsless;
  const struct oci_globals *g;
};

/* The long options every image command takes; values >= 1000. */
extern const struct option image_cli_options[];
#define IMAGE_CLI_OPTS_HELP                                                  \
  "  --cache-dir DIR      image cache (default $XDG_CACHE_HOME/sandlock/images,\n" \
  "                       /var/lib/sandlock-oci/images for root)\n"          \
  "  --creds USER:PASS    registry credentials\n"                            \
  "  --authfile FILE      auth file (default $DOCKER_CONFIG/config.json or\n" \
  "                       ~/.docker/config.json)\n"                          \
  "  --cert-dir DIR       extra CAs (*.crt) and client cert (*.cert/*.key)\n" \
  "  --tls-verify=BOOL    verify TLS (default true)\n"                       \
  "  --platform OS/ARCH[/VARIANT]  image of an index (default the host's)\n" \
  "  --offline            use the cache only\n"                              \
  "  --jobs N             parallel layer downloads (default 3)\n"            \
  "  --timeout DURATION   deadline for all the registry transfers of a pull\n" \
  "                       (30s, 10m, 1h; default 0: none)\n"                 \
  "  --stall-timeout DURATION  a request slower than 1 KiB/s that long fails\n" \
  "                       (whole seconds; default 30s)\n"                    \
  "  -q, --quiet          no progress display\n"                             \
  "  --format FMT         text (default) or json\n"

/* How a pull unpacks: pull, bundle and run --image (help text). */
#define IMAGE_CLI_UNPACK_HELP                                                \
  "  --allow-devices      create the char/block device nodes of layers (as\n" \
  "                       root; owned by root, at most 0600); default: skip\n" \
  "  --max-unpacked-size SIZE  bytes the whole image may unpack to (k/m/g;\n" \
  "                       default 100 x its compressed size + 64 MiB)\n"

/* Parses a size (bytes, or with a k/m/g suffix: KiB/MiB/GiB) for |flag|. */
int image_cli_size (const char *flag, const char *arg, uint64_t *out, struct cm_err **err);

/* Handles one option returned by getopt_long; returns 1 when it was an
 * image option, 0 when not, < 0 on a bad value. */
int image_cli_opt (struct image_cli *c, int opt, const char *arg, struct cm_err **err);

/* Parses argv with the shared image options for |cmd|; returns the index
 * of the first non-option argument, or < 0 with *err naming the option. */
int image_cli_parse (const char *cmd, struct image_cli *c, int argc,
                     char **argv, struct cm_err **err);

/* Builds the option array: |extra| (terminated) followed by the shared
 * ones.  Returns a static buffer. */
const struct option *image_cli_merge (const struct option *extra);

/* Starts the progress display when stderr is a TTY and not --quiet. */
void image_cli_start (struct image_cli *c);
void image_cli_finish (struct image_cli *c);

/* Pulls (or, with --offline, looks up) |ref|. */
int image_cli_get (struct image_cli *c, const char *ref, struct img_image **out,
                   struct cm_err **err);


/* Writes a bundle for |im| into |dir|: the rootfs copied from the cache
 * (c->cow: an empty rootfs/ mount point and the cached rootfs as the
 * rootfs_lower annotation; the root is then writable), config.json from
 * the image config (|cmd| replaces Cmd). */
int image_cli_bundle (struct image_cli *c, const struct img_image *im,
                      const char *dir, char *const *cmd, struct cm_err **err);

#endif
