/* The pages.img writer thread (dump-writer.h): a ring of buffers between
 * the reader (the dump, preading /proc/PID/mem) and this thread, which
 * writes each buffer and hashes it right after, while it is still in the
 * cache.  One writer, in queue order: the file and its XXH64 are the same
 * as written inline. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include "common/util.h"
#include "criu-lite/dump-writer.h"

#define NBUF 3

struct cl_writer
{
  pthread_t thread;
  sem_t free_, full;           /* buffers to fill, buffers to write */
  char *buf[NBUF];
  size_t len[NBUF];            /* SIZE_MAX: stop */
  unsigned head, tail;         /* next to fill (reader), to write (thread) */
  int fd;
  struct cl_xxh64 *hash;
  int error;                   /* errno of the first failed write */
};

static void *
writer_main (void *arg)
{
  struct cl_writer *w = arg;
  for (;;)
    {
      size_t n;
      char *b;
      while (sem_wait (&w->full) < 0)
        ;
      n = w->len[w->tail];
      b = w->buf[w->tail];
      w->tail = (w->tail + 1) % NBUF;
      if (n == SIZE_MAX)
        return NULL;
      if (w->error == 0 && cm_write_all (w->fd, b, n) < 0)
        w->error = errno ? errno : EIO;
      cl_xxh64_update (w->hash, b, n);
      sem_post (&w->free_);
    }
}

struct cl_writer *
cl_writer_start (int fd, struct cl_xxh64 *hash, struct cm_err **err)
{
  struct cl_writer *w = xcalloc (1, sizeof *w);
  int r;
  w->fd = fd;
  w->hash = hash;
  for (int i = 0; i < NBUF; i++)
    w->buf[i] = xmalloc (CL_WRITER_CHUNK);
  sem_init (&w->free_, 0, NBUF);
  sem_init (&w->full, 0, 0);
  r = pthread_create (&w->thread, NULL, writer_main, w);
  if (r != 0)
    {
      for (int i = 0; i < NBUF; i++)
        free (w->buf[i]);
      free (w);
      return cm_err_set (err, r, "start the pages.img writer"), NULL;
    }
  return w;
}

char *
cl_writer_buffer (struct cl_writer *w)
{
  while (sem_wait (&w->free_) < 0)
    ;
  return w->buf[w->head];
}

void
cl_writer_queue (struct cl_writer *w, size_t n)
{
  w->len[w->head] = n;
  w->head = (w->head + 1) % NBUF;
  sem_post (&w->full);
}

int
cl_writer_finish (struct cl_writer *w, struct cm_err **err)
{
  int error;
  if (w == NULL)
    return 0;
  cl_writer_buffer (w);
  cl_writer_queue (w, SIZE_MAX);
  pthread_join (w->thread, NULL);  /* its writes happen-before this */
  error = w->error;
  sem_destroy (&w->free_);
  sem_destroy (&w->full);
  for (int i = 0; i < NBUF; i++)
    free (w->buf[i]);
  free (w);
  if (error)
    return cm_err_set (err, error, "write pages.img");
  return 0;
}
