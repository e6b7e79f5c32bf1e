/* run --image support (oci/image_run.c). */
#ifndef SANDLOCK_OCI_IMAGE_RUN_H
#define SANDLOCK_OCI_IMAGE_RUN_H

#include "command.h"

/* When argv holds `--image REF` (and optionally `-- CMD...` after the id;
 * `--cache-dir DIR` too), checks the id is valid and free, pulls REF and
 * writes a bundle into a fresh build directory under ROOT/image-bundles,
 * flock()ed through *lockfd; replaces *argv with a new array without those
 * arguments (caller frees the array, not its strings) and returns 1 with
 * *tmp set (caller frees; oci_create adopts or removes the directory, see
 * struct oci_create_args).  Returns 0 when there is no
 * --image.  Build directories of killed runs (unlocked) are removed on the
 * way. */
int image_run_prepare (struct oci_globals *g, int *argc, char ***argv,
                       char **tmp, int *lockfd, struct cm_err **err);

/* Removes a build directory oci_create never got (NULL: nothing). */
void image_run_discard (const char *tmp);

#endif
