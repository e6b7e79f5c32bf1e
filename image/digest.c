/* SHA-256 digests, incremental (OpenSSL EVP), in the "sha256:<hex>" form. */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

void
img_hash_init (struct img_hash *h)
{
  h->ctx = EVP_MD_CTX_new ();
  if (h->ctx == NULL || EVP_DigestInit_ex (h->ctx, EVP_sha256 (), NULL) != 1)
    abort ();
  h->n = 0;
}

void
img_hash_update (struct img_hash *h, const void *buf, size_t len)
{
  EVP_DigestUpdate (h->ctx, buf, len);
  h->n += len;
}

void
img_hash_final (struct img_hash *h, char out[72])
{
  unsigned char md[32];
  unsigned int n = 0;
  EVP_DigestFinal_ex (h->ctx, md, &n);
  memcpy (out, "sha256:", 7);
  for (int i = 0; i < 32; i++)
    snprintf (out + 7 + 2 * i, 3, "%02x", md[i]);
  img_hash_dispose (h);
}

void
img_hash_dispose (struct img_hash *h)
{
  EVP_MD_CTX_free (h->ctx);
  h->ctx = NULL;
}

void
img_sha256_str (const void *buf, size_t len, char out[72])
{
  struct img_hash h;
  img_hash_init (&h);
  img_hash_update (&h, buf, len);
  img_hash_final (&h, out);
}

void
img_hash_padded (const struct img_hash *h, size_t zeros, char out[72])
{
  static const unsigned char z[4096];
  struct img_hash c = { EVP_MD_CTX_new (), h->n };
  if (c.ctx == NULL || EVP_MD_CTX_copy_ex (c.ctx, h->ctx) != 1)
    abort ();
  for (size_t n; zeros > 0; zeros -= n)
    {
      n = zeros < sizeof z ? zeros : sizeof z;
      img_hash_update (&c, z, n);
    }
  img_hash_final (&c, out);
}
