/* The copies the supervisor serves in place of a /proc file (maps,
 * mountinfo, net tables): the source read whole, the answer written to a
 * memfd through stdio and handed over rewound. */
#ifndef SANDLOCK_VROOT_MEMFD_H
#define SANDLOCK_VROOT_MEMFD_H

#include <stddef.h>
#include <stdio.h>

/* All of |fd| from where it stands, at most |max| bytes, into a new
 * |*buf| (the caller frees it, also on error); 0, -EFBIG past |max|, or
 * -errno. */
int vr_read_whole (int fd, size_t max, char **buf, size_t *len);

/* A new memfd named |name| with a stdio stream on a dup of it in |*out|;
 * the memfd, or -errno. */
int vr_memfd_writer (const char *name, FILE **out);

/* Closes |out| and rewinds |m|: |m|, or -EIO with |m| closed. */
int vr_memfd_done (int m, FILE *out);

#endif
