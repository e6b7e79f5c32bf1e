/* The annotation run.oci.sandlock.cow.max_disk (docs/cow.md "Quota"): its
 * size, and what a create that could not mount the quota says. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/size.h"
#include "common/util.h"
#include "cow_branch.h"

int
oci_cow_size_parse (const char *key, const char *v, uint64_t *out,
                    struct cm_err **err)
{
  const char *why = NULL;
  if (cm_size_parse (v, out, &why) < 0)
    return cm_err_set (err, 0,
                       "annotation %s: \"%.64s\": %s (a byte count such as "
                       "1048576, 512k, 64m or 2g)",
                       key, v, why);
  return 0;
}

int
oci_cow_max_disk (const struct rt_config *cfg, uint64_t *out,
                  struct cm_err **err)
{
  *out = 0;
  for (size_t i = 0; i < cfg->annotations_len; i++)
    if (strcmp (cfg->annotations[i].key, OCI_COW_ANN "max_disk") == 0)
      return oci_cow_size_parse (cfg->annotations[i].key,
                                 cfg->annotations[i].value, out, err);
  return 0;
}

int
oci_cow_quota_wrap (struct cm_err **err, uint64_t max_disk, const char *fmt,
                    ...)
{
  va_list ap;
  char *ctx = NULL;
  va_start (ap, fmt);
  if (vasprintf (&ctx, fmt, ap) < 0)
    ctx = NULL;
  va_end (ap);
  if (max_disk && (*err)->errno_ == EPERM)
    cm_err_wrap (err,
                 "annotation " OCI_COW_ANN "max_disk: the quota is a tmpfs "
                 "this runtime mounts on the host, which needs CAP_SYS_ADMIN "
                 "there (a rootless container cannot have one): %s",
                 ctx ? ctx : fmt);
  else
    cm_err_wrap (err, "%s", ctx ? ctx : fmt);
  free (ctx);
  return -1;
}
