/* The default config.json that `spec` writes, parameterised so that
 * `bundle`/`run --image` can fill in an image's settings. */
#ifndef SANDLOCK_OCI_SPEC_DEFAULT_H
#define SANDLOCK_OCI_SPEC_DEFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"

struct oci_default_opts
{
  char *const *args;            /* NULL: {"sh"} */
  char *const *env;             /* NULL: PATH and TERM */
  const char *cwd;              /* NULL: "/" */
  uint32_t uid, gid;
  const uint32_t *additional_gids;
  size_t additional_gids_len;
  const struct rt_kv *annotations;
  size_t annotations_len;
  const char *root_path;        /* NULL: "rootfs" */
  bool root_readonly;           /* default true, as runc's spec */
  bool terminal;
  bool rootless;                /* user namespace mapping the caller's ids */
  /* For the namespace-less mode (docs/nsless.md): no namespaces, no id
   * mappings, and only the mounts and options the view draws. */
  bool nsless;
  const char *hostname;         /* NULL: "sandlock" */
};

/* Returns a malloc'd pretty-printed config.json. */
char *oci_default_config_json (const struct oci_default_opts *o);

#endif
