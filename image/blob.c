/* Blob plumbing: the bounded queue that lets download, hashing and
 * unpacking overlap (one copy out of curl's buffer, none after), and the
 * streaming digest/size verifier. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "image/priv.h"

struct img_chunk
{
  struct img_chunk *next;
  size_t len, cap;
  char data[];
};

/* Chunks are recycled: curl hands over up to 512 KiB at a time, and a
 * fresh malloc of that size is a fresh mmap whose pages all fault in.
 * The spares are the queue's, shared by its streams, and few: each one is
 * memory the budget does not count. */
#define SPARE_MAX 8

void
img_queue_init (struct img_queue *q, size_t cap)
{
  memset (q, 0, sizeof *q);
  pthread_mutex_init (&q->mu, NULL);
  pthread_cond_init (&q->cv, NULL);
  q->cap = cap;
}

static void
free_chunks (struct img_chunk *c)
{
  struct img_chunk *n;
  for (; c; c = n)
    {
      n = c->next;
      free (c);
    }
}

void
img_queue_destroy (struct img_queue *q)
{
  free_chunks (q->spare);
  pthread_mutex_destroy (&q->mu);
  pthread_cond_destroy (&q->cv);
}

void
img_stream_init_shared (struct img_stream *s, struct img_queue *q, size_t cap)
{
  memset (s, 0, sizeof *s);
  s->q = q;
  s->cap = cap;
}

void
img_stream_init (struct img_stream *s, size_t cap)
{
  memset (s, 0, sizeof *s);
  img_queue_init (&s->own, SIZE_MAX);
  s->q = &s->own;
  s->cap = cap;
}

void
img_stream_destroy (struct img_stream *s)
{
  free_chunks (s->head);
  free (s->cur);
  if (s->q == &s->own)
    img_queue_destroy (&s->own);
}

/* Under q->mu: whether |s| may take more bytes now. */
static bool
has_room (const struct img_stream *s)
{
  if (s->queued >= s->cap)
    return false;
  return s->reading || s->q->used < s->q->cap;
}

int
img_stream_push (struct img_stream *s, const void *buf, size_t len)
{
  struct img_queue *q = s->q;
  struct img_chunk *c = NULL;
  pthread_mutex_lock (&q->mu);
  /* Blocking here blocks curl's write callback: the transfer waits, and
   * TCP's window closes behind it, until the reader drains the queue. */
  while (!has_room (s) && !s->cancelled)
    pthread_cond_wait (&q->cv, &q->mu);
  if (s->cancelled)
    {
      pthread_mutex_unlock (&q->mu);
      return -1;
    }
  /* curl hands over 16 KiB at a time (CURL_MAX_WRITE_SIZE).  While the
   * reader is behind, they are appended to the last queued chunk, so it
   * gets up to 512 KiB per read: ISA-L's inflate pays a fixed cost per
   * call (it keeps a copy of its 32 KiB window), which on 16 KiB inputs
   * made it slower than zlib on incompressible layers. */
  if (s->tail && s->tail->cap - s->tail->len >= len)
    {
      memcpy (s->tail->data + s->tail->len, buf, len);
      s->tail->len += len;
      goto queued;
    }
  if (q->spare && q->spare->cap >= len)
    {
      c = q->spare;
      q->spare = c->next;
      q->nspare--;
    }
  pthread_mutex_unlock (&q->mu);
  if (c == NULL)
    {
      size_t cap = len < (512u << 10) ? (512u << 10) : len;
      c = xmalloc (sizeof *c + cap);
      c->cap = cap;
    }
  c->next = NULL;
  c->len = len;
  memcpy (c->data, buf, len);
  pthread_mutex_lock (&q->mu);
  if (s->cancelled)
    {
      pthread_mutex_unlock (&q->mu);
      free (c);
      return -1;
    }
  if (s->tail)
    s->tail->next = c;
  else
    s->head = c;
  s->tail = c;
queued:
  s->queued += len;
  q->used += len;
  pthread_cond_broadcast (&q->cv);
  pthread_mutex_unlock (&q->mu);
  return 0;
}

void
img_stream_close (struct img_stream *s, bool failed)
{
  pthread_mutex_lock (&s->q->mu);
  s->eof = true;
  s->failed = failed;
  pthread_cond_broadcast (&s->q->cv);
  pthread_mutex_unlock (&s->q->mu);
}

void
img_stream_cancel (struct img_stream *s)
{
  pthread_mutex_lock (&s->q->mu);
  s->cancelled = true;
  pthread_cond_broadcast (&s->q->cv);
  pthread_mutex_unlock (&s->q->mu);
}

ssize_t
img_stream_read (void *data, const void **buf)
{
  struct img_stream *s = data;
  struct img_queue *q = s->q;
  struct img_chunk *c;
  ssize_t r;
  pthread_mutex_lock (&q->mu);
  if (s->cur && q->nspare < SPARE_MAX)
    {
      s->cur->next = q->spare;
      q->spare = s->cur;
      q->nspare++;
    }
  else
    free (s->cur);
  s->cur = NULL;
  if (!s->reading)
    {
      /* Its producer may be waiting on the shared budget: no longer. */
      s->reading = true;
      pthread_cond_broadcast (&q->cv);
    }
  while (s->head == NULL && !s->eof)
    pthread_cond_wait (&q->cv, &q->mu);
  if (s->head == NULL)
    {
      r = s->failed ? -1 : 0;
      pthread_mutex_unlock (&q->mu);
      return r;
    }
  c = s->head;
  s->head = c->next;
  if (s->head == NULL)
    s->tail = NULL;
  s->queued -= c->len;
  q->used -= c->len;
  pthread_cond_broadcast (&q->cv);
  pthread_mutex_unlock (&q->mu);
  s->cur = c;
  *buf = c->data;
  return (ssize_t) c->len;
}

void
img_verify_init (struct img_verify *v, const struct img_desc *d,
                 const char *what, img_sink_fn next, void *next_data)
{
  memset (v, 0, sizeof *v);
  v->d = d;
  v->what = what;
  v->next = next;
  v->next_data = next_data;
  img_hash_init (&v->h);
}

int
img_verify_sink (void *data, const void *buf, size_t len)
{
  struct img_verify *v = data;
  if (v->err)
    return -1;
  if (v->got + len > v->d->size)
    {
      cm_err_set (&v->err, 0, "%s: blob %s: more than the declared %" PRIu64
                  " bytes (size mismatch)", v->what, v->d->digest, v->d->size);
      return -1;
    }
  v->got += len;
  /* Handed on first, hashed after: the unpacker starts on these bytes
   * while they are hashed.  Nothing it makes of them is kept unless the
   * digest matches at the end. */
  if (v->next && v->next (v->next_data, buf, len) < 0)
    {
      if (v->err == NULL)
        cm_err_set (&v->err, ECANCELED, "%s: blob %s", v->what, v->d->digest);
      return -1;
    }
  img_hash_update (&v->h, buf, len);
  return 0;
}

int
img_verify_finish (struct img_verify *v, struct cm_err **err)
{
  char got[72];
  if (v->h.ctx == NULL)
    return 0;
  img_hash_final (&v->h, got);
  if (v->err)
    {
      *err = cm_steal_ptr (&v->err);
      return -1;
    }
  if (v->got != v->d->size)
    return cm_err_set (err, 0, "%s: blob %s: got %" PRIu64 " bytes, expected %" PRIu64
                       " (size mismatch or truncated)", v->what, v->d->digest,
                       v->got, v->d->size);
  if (strcmp (got, v->d->digest) != 0)
    return cm_err_set (err, 0, "%s: blob %s: digest mismatch (content hashes to %s)",
                       v->what, v->d->digest, got);
  return 0;
}

struct membuf
{
  char *buf;
  size_t len, cap;
};

static int
mem_sink (void *data, const void *buf, size_t len)
{
  struct membuf *m = data;
  if (m->len + len + 1 > m->cap)
    {
      m->cap = (m->len + len + 1) * 2;
      m->buf = xrealloc (m->buf, m->cap);
    }
  memcpy (m->buf + m->len, buf, len);
  m->len += len;
  m->buf[m->len] = '\0';
  return 0;
}

int
img_fetch_small (struct img_source *s, const struct img_desc *d, char **body,
                 size_t *len, struct cm_err **err)
{
  struct membuf m = { 0 };
  struct img_verify v;
  int ret;
  if (d->size > IMG_MAX_MANIFEST)
    return cm_err_set (err, 0, "%s: blob %s: %" PRIu64 " bytes is too large for a "
                       "manifest or config", s->what, d->digest, d->size);
  img_verify_init (&v, d, s->what, mem_sink, &m);
  ret = s->get_blob (s, d, img_verify_sink, &v, err);
  if (ret < 0)
    {
      /* The verifier stopped the transfer: its reason (a size mismatch),
       * not the transport's "cancelled", is the cause. */
      if (v.err)
        {
          cm_err_free (err);
          *err = cm_steal_ptr (&v.err);
        }
      img_hash_dispose (&v.h);
      free (m.buf);
      return -1;
    }
  if (img_verify_finish (&v, err) < 0)
    {
      free (m.buf);
      return -1;
    }
  if (m.buf == NULL)
    m.buf = xstrdup ("");
  *body = m.buf;
  *len = m.len;
  return 0;
}
