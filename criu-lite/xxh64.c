/* XXH64 (Yann Collet's xxHash, 64-bit, seed 0) of pages.img: the image's
 * integrity check for page data.  sha256 cost ~90 ms per 100 MiB and per
 * pass (docs/benchmarks.md); XXH64 runs at memory speed.  A cryptographic
 * hash buys nothing here: the check sits next to the data it covers, so
 * whoever can rewrite pages.img can rewrite its digest too; what it must
 * catch is truncation (the length is checked first) and corruption, which
 * a 64-bit hash with full avalanche catches but for a 2^-64 chance.  What
 * an image may do to the restored process is bounded by the container it
 * is restored into, not by the digest (docs/security.md). */
#include <string.h>

#include "criu-lite/internal.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t
rotl (uint64_t x, int r)
{
  return (x << r) | (x >> (64 - r));
}

static inline uint64_t
round1 (uint64_t acc, uint64_t in)
{
  return rotl (acc + in * P2, 31) * P1;
}

static inline uint64_t
merge (uint64_t h, uint64_t v)
{
  return (h ^ round1 (0, v)) * P1 + P4;
}

static inline uint64_t
rd64 (const unsigned char *p)
{
  uint64_t v;
  memcpy (&v, p, 8);
  return v;
}

static inline uint32_t
rd32 (const unsigned char *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

void
cl_xxh64_init (struct cl_xxh64 *s)
{
  s->v[0] = P1 + P2;
  s->v[1] = P2;
  s->v[2] = 0;
  s->v[3] = -P1;
  s->len = 0;
}

/* |n| is a multiple of 32 except on the last call before the digest. */
void
cl_xxh64_update (struct cl_xxh64 *s, const void *data, size_t n)
{
  const unsigned char *p = data;
  uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
  size_t i;

  for (i = 0; i + 32 <= n; i += 32)
    {
      v0 = round1 (v0, rd64 (p + i));
      v1 = round1 (v1, rd64 (p + i + 8));
      v2 = round1 (v2, rd64 (p + i + 16));
      v3 = round1 (v3, rd64 (p + i + 24));
    }
  s->v[0] = v0, s->v[1] = v1, s->v[2] = v2, s->v[3] = v3;
  s->len += n;
  s->tail = p + i;
  s->ntail = n - i;
}

uint64_t
cl_xxh64_digest (const struct cl_xxh64 *s)
{
  const unsigned char *p = s->tail;
  size_t n = s->ntail;
  uint64_t h;

  if (s->len >= 32)
    {
      h = rotl (s->v[0], 1) + rotl (s->v[1], 7) + rotl (s->v[2], 12)
          + rotl (s->v[3], 18);
      for (int i = 0; i < 4; i++)
        h = merge (h, s->v[i]);
    }
  else
    h = P5;
  h += s->len;
  for (; n >= 8; p += 8, n -= 8)
    h = rotl (h ^ round1 (0, rd64 (p)), 27) * P1 + P4;
  if (n >= 4)
    {
      h = rotl (h ^ (uint64_t) rd32 (p) * P1, 23) * P2 + P3;
      p += 4, n -= 4;
    }
  for (; n > 0; p++, n--)
    h = rotl (h ^ *p * P5, 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t
cl_xxh64 (const void *p, size_t n)
{
  struct cl_xxh64 s;
  cl_xxh64_init (&s);
  cl_xxh64_update (&s, p, n);
  return cl_xxh64_digest (&s);
}
