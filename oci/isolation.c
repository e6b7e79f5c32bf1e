/* Which isolation `auto` means for this caller (docs/nsless.md): shared
 * by create (lifecycle.c) and `run --image`, which writes its bundle for
 * the mode the create will choose (image_run.c). */
#include <string.h>
#include <unistd.h>

#include "lifecycle.h"
#include "runtime/runtime.h"

const char *
oci_isolation_resolve (const char *mode)
{
  if (mode && strcmp (mode, "auto") != 0)
    return mode;
  return geteuid () == 0 || rt_kfeat (RT_KF_NAMESPACES)->userns ? "namespaces"
                                                               : "landlock";
}

