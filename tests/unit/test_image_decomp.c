/* The layer decompressor under ASan: gzip through ISA-L and through zlib
 * (SANDLOCK_IMAGE_INFLATE=zlib), zstd, plain; concatenated members and
 * frames; trailing bytes; truncation and corruption refused; the magic
 * gathered from reads of one byte. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"
#include "tests/unit/tap.h"

struct src
{
  const uint8_t *buf;
  size_t len, off;
  size_t bytewise;              /* the first |bytewise| bytes one by one */
};

static ssize_t
src_read (void *data, const void **buf)
{
  struct src *s = data;
  size_t n = s->len - s->off;
  if (s->off < s->bytewise)
    n = n ? 1 : 0;
  else if (n > 65536)
    n = 65536;
  *buf = s->buf + s->off;
  s->off += n;
  return (ssize_t) n;
}

struct blob
{
  uint8_t *buf;
  size_t len;
};

static void
append (struct blob *b, const void *p, size_t n)
{
  b->buf = xrealloc (b->buf, b->len + n);
  memcpy (b->buf + b->len, p, n);
  b->len += n;
}

/* gzip of |data| (one member) by libarchive's writer. */
static void
gzip_of (struct blob *out, const void *data, size_t len)
{
  struct archive *w = archive_write_new ();
  struct archive_entry *e = archive_entry_new ();
  size_t cap = len + len / 2 + 4096, used = 0;
  uint8_t *tmp = xmalloc (cap);
  archive_write_set_format_raw (w);
  archive_write_add_filter (w, ARCHIVE_FILTER_GZIP);
  archive_write_set_bytes_in_last_block (w, 1);
  archive_write_open_memory (w, tmp, cap, &used);
  archive_entry_set_pathname (e, "x");
  archive_entry_set_filetype (e, AE_IFREG);
  archive_write_header (w, e);
  archive_write_data (w, data, len);
  archive_entry_free (e);
  archive_write_close (w);
  archive_write_free (w);
  append (out, tmp, used);
  free (tmp);
}

static void
zstd_of (struct blob *out, const void *data, size_t len)
{
  size_t cap = ZSTD_compressBound (len);
  uint8_t *tmp = xmalloc (cap);
  size_t n = ZSTD_compress (tmp, cap, data, len, 3);
  if (ZSTD_isError (n))
    abort ();
  append (out, tmp, n);
  free (tmp);
}

static uint32_t
crc32_of (const uint8_t *p, size_t n)
{
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++)
    {
      c ^= p[i];
      for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
  return ~c;
}

/* |plain| (a member with the bare 10-byte header libarchive writes)
 * rewritten with every optional header field: FEXTRA, FNAME, FCOMMENT
 * and FHCRC (whose CRC-16 is wrong when |bad_hcrc|). */
static void
gzip_full_header (struct blob *out, const struct blob *plain, bool bad_hcrc)
{
  static const uint8_t extra[] = { 'S', 'L', 4, 0, 1, 2, 3, 4 };
  uint8_t h[10];
  uint16_t xlen = sizeof extra, hcrc;
  memcpy (h, plain->buf, 10);
  h[3] = 0x04 | 0x08 | 0x10 | 0x02;
  out->buf = NULL;
  out->len = 0;
  append (out, h, 10);
  append (out, &xlen, 2);
  append (out, extra, sizeof extra);
  append (out, "layer.tar", 10);
  append (out, "a comment", 10);
  hcrc = (uint16_t) (crc32_of (out->buf, out->len) & 0xffff);
  if (bad_hcrc)
    hcrc ^= 1;
  append (out, &hcrc, 2);
  append (out, plain->buf + 10, plain->len - 10);
}

/* Decompresses |in| whole; returns 0 and the output, or -1 and the error. */
static int
run (const struct blob *in, size_t bytewise, struct blob *out, char *msg, size_t msglen)
{
  struct src s = { in->buf, in->len, 0, bytewise };
  struct img_decomp *d = NULL;
  struct cm_err *e = NULL;
  const void *buf;
  ssize_t n;
  out->buf = NULL;
  out->len = 0;
  *msg = '\0';
  if (img_decomp_open (&d, src_read, &s, "layer", &e) < 0)
    {
      snprintf (msg, msglen, "%s", e->msg);
      cm_err_free (&e);
      return -1;
    }
  while ((n = img_decomp_read (d, &buf)) > 0)
    append (out, buf, (size_t) n);
  if (n < 0)
    snprintf (msg, msglen, "%s", img_decomp_error (d));
  img_decomp_free (d);
  return n < 0 ? -1 : 0;
}

static bool
same (const struct blob *b, const void *p, size_t n)
{
  return b->len == n && (n == 0 || memcmp (b->buf, p, n) == 0);
}

int
main (void)
{
  const size_t N = 3u << 20;
  uint8_t *data = xmalloc (2 * N);
  char msg[200];
  struct blob out = { 0 };

  /* Compressible but not trivially: a text-like mix. */
  for (size_t i = 0; i < 2 * N; i++)
    data[i] = (uint8_t) ("abcdefgh \n"[(i * 2654435761u >> 7) % 10] ^ ((i >> 12) & 1));

  for (int backend = 0; backend < 2; backend++)
    {
      const char *name = backend ? "zlib" : "isal";
      struct blob one = { 0 }, two = { 0 }, cut = { 0 }, bad = { 0 };
      if (backend)
        setenv ("SANDLOCK_IMAGE_INFLATE", "zlib", 1);
      else if (img_dl_try (IMG_LIB_ISAL) == NULL)
        {
          skip ("libisal not installed: only the zlib fallback runs");
          continue;
        }
      gzip_of (&one, data, N);

      ok (run (&one, 0, &out, msg, sizeof msg) == 0 && same (&out, data, N),
          "%s: 3 MiB gzip round trip %s", name, msg);
      free (out.buf);
      ok (run (&one, 9, &out, msg, sizeof msg) == 0 && same (&out, data, N),
          "%s: magic gathered from one-byte reads %s", name, msg);
      free (out.buf);

      gzip_of (&two, data, N);
      gzip_of (&two, data + N, N);
      ok (run (&two, 0, &out, msg, sizeof msg) == 0 && same (&out, data, 2 * N),
          "%s: two members decode as one stream %s", name, msg);
      free (out.buf);

      append (&one, "trailing junk", 13);
      ok (run (&one, 0, &out, msg, sizeof msg) == 0 && same (&out, data, N),
          "%s: bytes after the last member are ignored %s", name, msg);
      free (out.buf);
      one.len -= 13;

      {
        struct blob full = { 0 };
        ok (one.buf[3] == 0, "%s: libarchive writes a bare gzip header", name);
        gzip_full_header (&full, &one, false);
        ok (run (&full, 0, &out, msg, sizeof msg) == 0 && same (&out, data, N),
            "%s: extra field, name, comment and header CRC %s", name, msg);
        free (out.buf);
        free (full.buf);
        gzip_full_header (&full, &one, true);
        ok (run (&full, 0, &out, msg, sizeof msg) < 0,
            "%s: a wrong header CRC is refused: %s", name, msg);
        free (out.buf);
        free (full.buf);
      }
      append (&cut, one.buf, one.len - 4);
      ok (run (&cut, 0, &out, msg, sizeof msg) < 0 && strstr (msg, "truncated"),
          "%s: a missing trailer is refused: %s", name, msg);
      free (out.buf);
      cut.len = one.len / 2;
      ok (run (&cut, 0, &out, msg, sizeof msg) < 0 && strstr (msg, "truncated"),
          "%s: half a stream is refused: %s", name, msg);
      free (out.buf);

      append (&bad, one.buf, one.len);
      bad.buf[bad.len - 6] ^= 0x55;   /* inside the CRC-32 */
      ok (run (&bad, 0, &out, msg, sizeof msg) < 0 && strstr (msg, "gzip"),
          "%s: a wrong CRC is refused: %s", name, msg);
      free (out.buf);
      memcpy (bad.buf, one.buf, one.len);
      bad.buf[bad.len / 2] ^= 0xff;
      ok (run (&bad, 0, &out, msg, sizeof msg) < 0 && strstr (msg, "gzip"),
          "%s: corrupt deflate data is refused: %s", name, msg);
      free (out.buf);

      free (one.buf);
      free (two.buf);
      free (cut.buf);
      free (bad.buf);
    }
  unsetenv ("SANDLOCK_IMAGE_INFLATE");

  {
    struct blob z = { 0 }, cut = { 0 };
    zstd_of (&z, data, N);
    ok (run (&z, 0, &out, msg, sizeof msg) == 0 && same (&out, data, N),
        "zstd: round trip %s", msg);
    free (out.buf);
    zstd_of (&z, data + N, N);
    ok (run (&z, 3, &out, msg, sizeof msg) == 0 && same (&out, data, 2 * N),
        "zstd: two frames, magic from one-byte reads %s", msg);
    free (out.buf);
    append (&cut, z.buf, z.len - 10);
    ok (run (&cut, 0, &out, msg, sizeof msg) < 0 && strstr (msg, "zstd"),
        "zstd: a truncated frame is refused: %s", msg);
    free (out.buf);
    free (z.buf);
    free (cut.buf);
  }
  {
    struct blob p = { 0 }, tiny = { 0 }, empty = { 0 };
    append (&p, data, 100000);
    ok (run (&p, 2, &out, msg, sizeof msg) == 0 && same (&out, data, 100000),
        "plain: passed through unchanged %s", msg);
    free (out.buf);
    {
      /* read_into copies a plain stream, in blocks of at most the block size */
      struct src sp = { p.buf, p.len, 0, 0 };
      struct img_decomp *d = NULL;
      struct cm_err *e = NULL;
      uint8_t *blk = xmalloc (IMG_DECOMP_BLOCK);
      struct blob got = { 0 };
      ssize_t n;
      ok (img_decomp_open (&d, src_read, &sp, "layer", &e) == 0 && !img_decomp_compressed (d),
          "plain: not compressed");
      while ((n = img_decomp_read_into (d, blk)) > 0)
        append (&got, blk, (size_t) n);
      ok (n == 0 && same (&got, data, 100000), "plain: read_into copies it whole");
      img_decomp_free (d);
      free (blk);
      free (got.buf);
    }
    append (&tiny, "ab", 2);
    ok (run (&tiny, 0, &out, msg, sizeof msg) == 0 && same (&out, "ab", 2),
        "plain: a stream shorter than any magic %s", msg);
    free (out.buf);
    ok (run (&empty, 0, &out, msg, sizeof msg) == 0 && out.len == 0,
        "empty stream: nothing, no error %s", msg);
    free (out.buf);
    free (p.buf);
    free (tiny.buf);
  }
  free (data);
  return tap_done ();
}
