/* The unpacker's tests again — escapes through symlinks, `..`, hardlinks
 * and whiteouts included — with cm_openat2 forced onto its fallback walk,
 * as on a kernel without openat2 (the walk must keep every refusal). */
#include "common/openat2.h"

__attribute__ ((constructor)) static void
no_openat2 (void)
{
  cm_openat2_force_fallback (true);
}

#include "tests/unit/test_image_unpack.c"
