/* Reading JSON: one yajl tree parser for oci/ (config.json, state.json,
 * the runtime's config file) and image/ (manifests, configs, registry
 * answers), with one set of guards.  Only those two folders include it:
 * yajl types stay out of runtime/. */
#ifndef SANDLOCK_COMMON_JSON_READ_H
#define SANDLOCK_COMMON_JSON_READ_H

#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "common/err.h"

#define CM_JSON_MAX_DEPTH 128

/* Rejects what yajl would mishandle silently or dangerously: nesting deeper
 * than CM_JSON_MAX_DEPTH (yajl_tree_free recursion), a NUL byte, and
 * "\u0000" inside a string (yajl's tree hands back a C string, so
 * "/a\u0000/b" would quietly become "/a").  Brackets inside strings and
 * comments do not count; for any input yajl accepts, the count is exact.
 * |what| names the document in messages. */
int cm_json_prescan (const char *buf, size_t len, const char *what,
                     struct cm_err **err);

/* Parses |buf| (|len| bytes, at most |max|) into a tree whose root is an
 * object, or returns NULL with *err set: "WHAT: too large", "WHAT: invalid
 * JSON: ..." (yajl's first line), "WHAT: expected object".  The caller
 * frees it with yajl_tree_free. */
yajl_val cm_json_parse (const char *buf, size_t len, size_t max,
                        const char *what, struct cm_err **err);

/* Borrowed member |key| of object |o|, or NULL when |o| is not an object
 * or the member is absent or null.  With duplicate keys the last wins, as
 * in Go's encoding/json (runc, containerd, registries). */
yajl_val cm_json_get (yajl_val o, const char *key);

/* Borrowed string at |key| of object |o|, or NULL. */
const char *cm_json_str (yajl_val o, const char *key);

/* NULL-terminated copy of the strings of the array at |key| (non-strings
 * skipped), or NULL when absent. */
char **cm_json_strv (yajl_val o, const char *key);

#endif
