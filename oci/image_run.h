/* run --image support (oci/image_run.c). */
#ifndef SANDLOCK_OCI_IMAGE_RUN_H
#define SANDLOCK_OCI_IMAGE_RUN_H

#include "command.h"

/* When argv holds `--image REF` (and optionally `-- CMD...` after the
 * id; `--cache-dir DIR` too), pulls REF, writes a bundle at ROOT/image-bundles/ID, removes those
 * arguments from argv and returns 1 with *bundle set (caller frees and
 * removes the directory when done).  Returns 0 when there is no --image. */
int image_run_prepare (struct oci_globals *g, int *argc, char ***argv,
                       char **bundle, struct rt_err **err);

#endif
