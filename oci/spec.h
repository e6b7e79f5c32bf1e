/* config.json and process.json parsing (yajl stays inside the oci/ sources).
 *
 * Every error names the JSON path ("process.args[0]: expected string"),
 * the input is capped in size, every number is range-checked, unknown keys
 * are ignored.  Only shape and types are checked here; what the strings
 * mean (capability names, mount options, ...) is validated by runtime/. */
#ifndef SANDLOCK_OCI_SPEC_H
#define SANDLOCK_OCI_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "../runtime/config.h"

#define OCI_SPEC_MAX_BYTES (16u << 20)

/* Parses a whole config.json held in |buf|.  On success *out is a new
 * config owned by the caller.  ociVersion must be 1.x.y (2.x is refused). */
int oci_spec_parse (const char *buf, size_t len, struct rt_config **out,
                    struct cm_err **err) __attribute__ ((nonnull (1, 3)));

/* True when |v| is a 1.x newer than the fields this parser knows (1.3):
 * accepted, and `create` warns that unknown fields are ignored. */
bool oci_spec_version_newer (const char *v) __attribute__ ((nonnull));
/* True when |v| is a 1.x with a minor of at least |minor|: the behaviour
 * the spec asks for changed (poststart failures, pids.limit 0). */
bool oci_spec_version_at_least (const char *v, long minor)
    __attribute__ ((nonnull));

/* Reads and parses |path| (errors are prefixed with the path). */
int oci_spec_load (const char *path, struct rt_config **out,
                   struct cm_err **err) __attribute__ ((nonnull (1, 2)));

/* Parses a runtime-spec "process" object on its own (exec --process). */
int oci_process_parse (const char *buf, size_t len, struct rt_process **out,
                       struct cm_err **err) __attribute__ ((nonnull (1, 3)));

/* Parses a runtime-spec LinuxResources object on its own (`update -r`);
 * errors name paths from "resources" (resources.memory.limit).  *out is
 * freed with rt_resources_free(). */
int oci_resources_parse (const char *buf, size_t len,
                         struct rt_resources **out, struct cm_err **err)
    __attribute__ ((nonnull (1, 3)));

/* For other JSON documents parsed with yajl's tree (state.json): refuses
 * nesting deeper than config.json may (yajl_tree_free recurses) and
 * "\u0000" in strings, naming |name| in the error. */
int oci_json_prescan (const char *buf, size_t len, const char *name,
                      struct cm_err **err);

#endif
