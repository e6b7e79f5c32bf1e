/* Sizes as people write them in annotations ("512m", "2G", "1048576"). */
#ifndef SANDLOCK_COMMON_SIZE_H
#define SANDLOCK_COMMON_SIZE_H

#include <stdint.h>

/* Parses a byte count in podman's form (docker/go-units RAMInBytes):
 * decimal digits, then optionally one of k K m M g G t T (binary: k =
 * 1024) and an optional "b"/"ib" after it, or a lone "b".  No sign, no
 * spaces, no fraction, never 0 (tmpfs reads size=0 as "no limit").
 * 0 with *out set, or -1 with *why set to static text saying what is
 * wrong. */
int cm_size_parse (const char *s, uint64_t *out, const char **why)
    __attribute__ ((nonnull (1, 2, 3)));

#endif
