/* sha256 of a file's content, for the change list and rename pairing. */
#include <errno.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "internal.h"

int
cow_sha256_fd (int fd, char hex[65])
{
  unsigned char buf[65536], md[32];
  unsigned int mdlen = 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  ssize_t n;
  int ret = -1;
  if (ctx == NULL || EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL) != 1)
    goto out;
  while ((n = read (fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || EVP_DigestUpdate (ctx, buf, (size_t) n) != 1)
        goto out;
    }
  if (EVP_DigestFinal_ex (ctx, md, &mdlen) != 1 || mdlen != 32)
    goto out;
  for (unsigned i = 0; i < 32; i++)
    {
      hex[2 * i] = "0123456789abcdef"[md[i] >> 4];
      hex[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
    }
  hex[64] = '\0';
  ret = 0;
out:
  EVP_MD_CTX_free (ctx);
  if (ret < 0 && errno == 0)
    errno = EIO;
  return ret;
}
