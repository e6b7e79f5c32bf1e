/* A layer stream, decompressed.
 *
 * Layers are gzip (nearly all of them), zstd, or plain tar; which one is
 * read off the first bytes (the media type is advisory: registries and
 * docker-save archives mislabel).  gzip is inflated by ISA-L's igzip,
 * about twice as fast as zlib here (2.2x on a 37 MB layer of C headers and
 * Python, 1.9x on busybox): inflate was the largest single cost of a
 * pull once the download is local.  zlib takes over only where libisal is
 * not installed, or when SANDLOCK_IMAGE_INFLATE=zlib asks (tests compare
 * the two).  zstd goes to libzstd's streaming decoder.
 *
 * Every backend writes into one buffer owned here, handed out until the
 * next read: libarchive's tar reader takes it as is, so nothing is copied
 * between the decompressor and the file writes.  Concatenated members
 * (gzip) and frames (zstd) are decoded in turn; bytes after the last gzip
 * member that do not start another are ignored, as gzip(1) and libarchive
 * do (the blob's digest has already vouched for them). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

#define OUT_CAP IMG_DECOMP_BLOCK
#define MIN(a, b) ((a) < (b) ? (a) : (b))

enum kind
{
  K_PLAIN,
  K_ISAL,
  K_ZLIB,
  K_ZSTD,
};

struct img_decomp
{
  enum kind kind;
  img_read_fn rd;
  void *rd_data;
  /* Pending input: |in| first, then |in2| (only while the magic bytes
   * were gathered from more than one read). */
  const uint8_t *in, *in2;
  size_t in_len, in2_len;
  uint8_t head[4];
  bool src_eof, done;
  uint8_t *out;
  size_t zstd_last;             /* ZSTD_decompressStream's last return: 0 at a frame's end */
  union
  {
    struct inflate_state *isal;
    z_stream *z;
    ZSTD_DStream *zstd;
  } u;
  char msg[160];
};

static const uint8_t GZIP_MAGIC[2] = { 0x1f, 0x8b };
static const uint8_t ZSTD_MAGIC[4] = { 0x28, 0xb5, 0x2f, 0xfd };

static int
set_msg (struct img_decomp *d, const char *fmt, const char *detail)
{
  snprintf (d->msg, sizeof d->msg, fmt, detail);
  return -1;
}

/* Makes |in| non-empty unless the source is at its end; < 0 on a read
 * error. */
static int
fill (struct img_decomp *d)
{
  const void *buf;
  ssize_t n;
  if (d->in_len > 0)
    return 0;
  if (d->in2_len > 0)
    {
      d->in = d->in2;
      d->in_len = d->in2_len;
      d->in2_len = 0;
      return 0;
    }
  if (d->src_eof)
    return 0;
  n = d->rd (d->rd_data, &buf);
  if (n < 0)
    return set_msg (d, "%s", "layer stream failed");
  if (n == 0)
    d->src_eof = true;
  d->in = buf;
  d->in_len = (size_t) n;
  return 0;
}

static bool
isal_wanted (void)
{
  const char *e = getenv ("SANDLOCK_IMAGE_INFLATE");
  return !(e && strcmp (e, "zlib") == 0) && img_dl_try (IMG_LIB_ISAL) != NULL;
}

int
img_decomp_open (struct img_decomp **out, img_read_fn rd, void *rd_data,
                 const char *what, struct cm_err **err)
{
  struct img_decomp *d = xcalloc (1, sizeof *d);
  const void *buf;
  size_t have = 0;

  d->rd = rd;
  d->rd_data = rd_data;
  /* The magic: 4 bytes, nearly always in the first read. */
  while (!d->src_eof)
    {
      ssize_t n = rd (rd_data, &buf);
      size_t take;
      if (n < 0)
        {
          free (d);
          return cm_err_set (err, 0, "%s: layer stream failed", what);
        }
      if (n == 0)
        {
          d->src_eof = true;
          break;
        }
      if (have == 0 && n >= 4)
        {
          d->in = buf;
          d->in_len = (size_t) n;
          break;
        }
      take = MIN ((size_t) n, sizeof d->head - have);
      memcpy (d->head + have, buf, take);
      have += take;
      if (have == sizeof d->head)
        {
          d->in2 = (const uint8_t *) buf + take;
          d->in2_len = (size_t) n - take;
          break;
        }
    }
  if (d->in == NULL)
    {
      d->in = d->head;
      d->in_len = have;
    }

  if (d->in_len >= 2 && memcmp (d->in, GZIP_MAGIC, 2) == 0)
    d->kind = isal_wanted () ? K_ISAL : K_ZLIB;
  else if (d->in_len >= 4 && memcmp (d->in, ZSTD_MAGIC, 4) == 0)
    d->kind = K_ZSTD;
  else
    d->kind = K_PLAIN;

  switch (d->kind)
    {
    case K_ISAL:
      d->u.isal = xmalloc (sizeof *d->u.isal);
      isal_inflate_init (d->u.isal);
      d->u.isal->crc_flag = ISAL_GZIP;
      break;
    case K_ZLIB:
      d->u.z = xcalloc (1, sizeof *d->u.z);
      if (inflateInit2 (d->u.z, 16 + MAX_WBITS) != Z_OK)
        abort ();               /* only on out of memory */
      break;
    case K_ZSTD:
      d->u.zstd = ZSTD_createDStream ();
      if (d->u.zstd == NULL)
        abort ();
      (void) ZSTD_initDStream (d->u.zstd);
      d->zstd_last = 1;
      break;
    case K_PLAIN:
    default:
      break;
    }
  if (d->kind != K_PLAIN)
    d->out = xmalloc (OUT_CAP);
  *out = d;
  return 0;
}

/* After a gzip member ended: is another one next?  0: no (the stream is
 * done), 1: yes, < 0: read error. */
static int
next_member (struct img_decomp *d)
{
  if (fill (d) < 0)
    return -1;
  if (d->in_len == 0)
    return 0;
  if (d->in_len >= 2 && memcmp (d->in, GZIP_MAGIC, 2) != 0)
    return 0;
  if (d->in_len == 1 && d->in[0] != GZIP_MAGIC[0])
    return 0;
  return 1;
}

static ssize_t
read_isal (struct img_decomp *d)
{
  struct inflate_state *s = d->u.isal;
  s->next_out = d->out;
  s->avail_out = OUT_CAP;
  while (s->avail_out == OUT_CAP)
    {
      int r;
      if (s->block_state == ISAL_BLOCK_FINISH)
        {
          r = next_member (d);
          if (r <= 0)
            {
              d->done = r == 0;
              return r;
            }
          isal_inflate_reset (s);
          s->crc_flag = ISAL_GZIP;
          s->next_out = d->out;
          s->avail_out = OUT_CAP;
        }
      bool eof;
      if (fill (d) < 0)
        return -1;
      eof = d->in_len == 0;
      s->next_in = (uint8_t *) d->in;
      s->avail_in = (uint32_t) MIN (d->in_len, (size_t) UINT32_MAX);
      r = isal_inflate (s);
      d->in_len -= (size_t) ((const uint8_t *) s->next_in - d->in);
      d->in = s->next_in;
      /* With no input left, a call that neither wrote nor finished means
       * the member was cut short. */
      if (r >= 0 && eof && s->avail_out == OUT_CAP && s->block_state != ISAL_BLOCK_FINISH)
        return set_msg (d, "%s", "gzip stream truncated");
      if (r < 0)
        return set_msg (d, "gzip: %s",
                        r == ISAL_INCORRECT_CHECKSUM ? "CRC mismatch"
                        : r == ISAL_INVALID_WRAPPER ? "bad header"
                        : r == ISAL_UNSUPPORTED_METHOD ? "unsupported method"
                        : "invalid compressed data");
    }
  return (ssize_t) (OUT_CAP - s->avail_out);
}

static ssize_t
read_zlib (struct img_decomp *d)
{
  z_stream *z = d->u.z;
  z->next_out = d->out;
  z->avail_out = OUT_CAP;
  while (z->avail_out == OUT_CAP)
    {
      int r;
      if (fill (d) < 0)
        return -1;
      if (d->in_len == 0)
        return set_msg (d, "%s", "gzip stream truncated");
      z->next_in = (Bytef *) d->in;
      z->avail_in = (uInt) MIN (d->in_len, (size_t) UINT32_MAX);
      r = inflate (z, Z_NO_FLUSH);
      d->in_len -= (size_t) ((const uint8_t *) z->next_in - d->in);
      d->in = z->next_in;
      if (r == Z_STREAM_END)
        {
          if (z->avail_out != OUT_CAP)
            {
              /* Hand out what this member ended with; the next read
               * starts the next one. */
              int more = next_member (d);
              if (more < 0)
                return -1;
              if (more)
                inflateReset (z);
              else
                d->done = true;
              break;
            }
          r = next_member (d);
          if (r <= 0)
            {
              d->done = r == 0;
              return r;
            }
          inflateReset (z);
          continue;
        }
      if (r != Z_OK && r != Z_BUF_ERROR)
        return set_msg (d, "gzip: %s", z->msg ? z->msg : "invalid compressed data");
    }
  return (ssize_t) (OUT_CAP - z->avail_out);
}

static ssize_t
read_zstd (struct img_decomp *d)
{
  ZSTD_outBuffer o = { d->out, OUT_CAP, 0 };
  size_t last = d->zstd_last;
  while (o.pos == 0)
    {
      ZSTD_inBuffer i;
      if (fill (d) < 0)
        return -1;
      if (d->in_len == 0)
        {
          if (last != 0)
            {
              /* Flush what the decoder still holds, then judge. */
              i = (ZSTD_inBuffer) { NULL, 0, 0 };
              last = ZSTD_decompressStream (d->u.zstd, &o, &i);
              if (ZSTD_isError (last))
                return set_msg (d, "zstd: %s", ZSTD_getErrorName (last));
              if (o.pos > 0)
                break;
              if (last != 0)
                return set_msg (d, "%s", "zstd stream truncated");
            }
          d->done = true;
          d->zstd_last = last;
          return 0;
        }
      i = (ZSTD_inBuffer) { d->in, d->in_len, 0 };
      last = ZSTD_decompressStream (d->u.zstd, &o, &i);
      d->in += i.pos;
      d->in_len -= i.pos;
      if (ZSTD_isError (last))
        return set_msg (d, "zstd: %s", ZSTD_getErrorName (last));
    }
  d->zstd_last = last;
  return (ssize_t) o.pos;
}

ssize_t
img_decomp_read (struct img_decomp *d, const void **buf)
{
  ssize_t n;
  if (d->done)
    return 0;
  if (d->kind == K_PLAIN)
    {
      if (fill (d) < 0)
        return -1;
      *buf = d->in;
      n = (ssize_t) d->in_len;
      d->in_len = 0;
      d->done = n == 0;
      return n;
    }
  *buf = d->out;
  switch (d->kind)
    {
    case K_ISAL:
      return read_isal (d);
    case K_ZLIB:
      return read_zlib (d);
    default:
      return read_zstd (d);
    }
}

bool
img_decomp_compressed (const struct img_decomp *d)
{
  return d->kind != K_PLAIN;
}

ssize_t
img_decomp_read_into (struct img_decomp *d, void *out)
{
  uint8_t *own = d->out;
  const void *buf;
  ssize_t n;
  if (d->kind == K_PLAIN)
    {
      /* The source's own buffers are handed out as they are: copy. */
      size_t k;
      if (d->done)
        return 0;
      if (fill (d) < 0)
        return -1;
      k = MIN (d->in_len, (size_t) OUT_CAP);
      memcpy (out, d->in, k);
      d->in += k;
      d->in_len -= k;
      d->done = k == 0;
      return (ssize_t) k;
    }
  d->out = out;
  n = img_decomp_read (d, &buf);
  d->out = own;
  return n;
}

const char *
img_decomp_error (const struct img_decomp *d)
{
  return d->msg[0] ? d->msg : "decompression failed";
}

void
img_decomp_free (struct img_decomp *d)
{
  if (d == NULL)
    return;
  switch (d->kind)
    {
    case K_ISAL:
      free (d->u.isal);
      break;
    case K_ZLIB:
      inflateEnd (d->u.z);
      free (d->u.z);
      break;
    case K_ZSTD:
      ZSTD_freeDStream (d->u.zstd);
      break;
    case K_PLAIN:
    default:
      break;
    }
  free (d->out);
  free (d);
}
