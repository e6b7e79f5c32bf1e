/* sha256 from libcrypto, loaded on first use.  Linked directly, libcrypto
 * would load in every sandlock-oci process: the binary is linked
 * --as-needed so that the lifecycle commands load no image or crypto
 * library (tests/integration/build.bats).  The commands that hash (cow's
 * `changes`, checkpoint, restore) pay the load once. */
#ifndef SANDLOCK_COMMON_SHA256_H
#define SANDLOCK_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* The digest of |n| bytes at |p|. */
int cm_sha256 (const void *p, size_t n, uint8_t out[32], struct cm_err **err);

/* The digest of what |fd| reads to its end, as 64 lowercase hex digits. */
int cm_sha256_fd_hex (int fd, char hex[65], struct cm_err **err);

#endif
