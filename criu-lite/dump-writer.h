/* pages.img written and hashed on a thread of its own while the dump
 * reads the next chunk of the target's memory (dump-writer.c): reading
 * /proc/PID/mem and writing the page cache each take about as long, and
 * overlapped a checkpoint takes the longer of the two, not their sum
 * (docs/benchmarks.md). */
#ifndef SANDLOCK_CRIU_LITE_DUMP_WRITER_H
#define SANDLOCK_CRIU_LITE_DUMP_WRITER_H

#include <stddef.h>

#include "common/err.h"
#include "criu-lite/internal.h"

struct cl_writer;

/* Starts the writer of |fd|, hashing into |hash|; both borrowed until
 * cl_writer_finish. */
struct cl_writer *cl_writer_start (int fd, struct cl_xxh64 *hash,
                                   struct cm_err **err);

/* A free buffer of CL_WRITER_CHUNK bytes to fill; waits for one. */
char *cl_writer_buffer (struct cl_writer *w);
#define CL_WRITER_CHUNK (4u << 20)

/* Queues the first |n| bytes of the buffer cl_writer_buffer gave last. */
void cl_writer_queue (struct cl_writer *w, size_t n);

/* Waits until everything queued is written and hashed, stops the thread
 * and frees |w| (NULL: nothing).  Fails if a write failed. */
int cl_writer_finish (struct cl_writer *w, struct cm_err **err);

#endif
