/* sha256 for the image, from libcrypto loaded on first use: linked
 * directly, libcrypto would load in every sandlock-oci process (the binary
 * is linked --as-needed so that lifecycle commands load no image library;
 * tests/integration/build.bats).  Only checkpoint and restore hash, and
 * both do it in the unconfined command process, before any chroot or
 * container (the restored init never hashes). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "criu-lite/internal.h"

typedef const void *(*md_fn) (void);
typedef int (*digest_fn) (const void *, size_t, unsigned char *,
                          unsigned int *, const void *, void *);

int
cl_sha256 (const void *p, size_t n, uint8_t out[32], struct cm_err **err)
{
  static md_fn sha256;
  static digest_fn digest;
  unsigned int len = 32;
  if (digest == NULL)
    {
      void *h = dlopen ("libcrypto.so.3", RTLD_LAZY | RTLD_LOCAL);
      if (h == NULL)
        return cm_err_set (err, 0, "load libcrypto.so.3 for sha256: %s",
                           dlerror ());
      sha256 = (md_fn) dlsym (h, "EVP_sha256");
      digest = (digest_fn) dlsym (h, "EVP_Digest");
      if (sha256 == NULL || digest == NULL)
        {
          digest = NULL;
          return cm_err_set (err, 0, "libcrypto.so.3 has no EVP_Digest");
        }
    }
  if (digest (p, n, out, &len, sha256 (), NULL) != 1)
    return cm_err_set (err, EIO, "sha256");
  return 0;
}
