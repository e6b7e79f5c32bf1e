/* sha256 through libcrypto's EVP interface, resolved with dlopen on first
 * use (common/sha256.h says why not linked). */
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"

struct evp
{
  const void *(*sha256) (void);
  void *(*ctx_new) (void);
  void (*ctx_free) (void *);
  int (*init) (void *, const void *, void *);
  int (*update) (void *, const void *, size_t);
  int (*final) (void *, unsigned char *, unsigned int *);
  int (*digest) (const void *, size_t, unsigned char *, unsigned int *,
                 const void *, void *);
};

static const struct evp *
evp_get (struct cm_err **err)
{
  static struct evp e;
  static const char *why;
  void *h;
  if (e.digest)
    return &e;
  if (why)
    return cm_err_set (err, 0, "sha256: %s", why), NULL;
  h = dlopen ("libcrypto.so.3", RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    {
      why = "cannot load libcrypto.so.3";
      return cm_err_set (err, 0, "sha256: %s: %s", why, dlerror ()), NULL;
    }
  *(void **) &e.sha256 = dlsym (h, "EVP_sha256");
  *(void **) &e.ctx_new = dlsym (h, "EVP_MD_CTX_new");
  *(void **) &e.ctx_free = dlsym (h, "EVP_MD_CTX_free");
  *(void **) &e.init = dlsym (h, "EVP_DigestInit_ex");
  *(void **) &e.update = dlsym (h, "EVP_DigestUpdate");
  *(void **) &e.final = dlsym (h, "EVP_DigestFinal_ex");
  *(void **) &e.digest = dlsym (h, "EVP_Digest");
  if (!e.sha256 || !e.ctx_new || !e.ctx_free || !e.init || !e.update
      || !e.final || !e.digest)
    {
      e.digest = NULL;
      why = "libcrypto.so.3 lacks the EVP digest functions";
      return cm_err_set (err, 0, "sha256: %s", why), NULL;
    }
  return &e;
}

int
cm_sha256 (const void *p, size_t n, uint8_t out[32], struct cm_err **err)
{
  const struct evp *e = evp_get (err);
  unsigned int len = 32;
  if (e == NULL)
    return -1;
  if (e->digest (p, n, out, &len, e->sha256 (), NULL) != 1)
    return cm_err_set (err, EIO, "sha256");
  return 0;
}

int
cm_sha256_fd_hex (int fd, char hex[65], struct cm_err **err)
{
  const struct evp *e = evp_get (err);
  unsigned char buf[65536], md[32];
  unsigned int len = 32;
  void *ctx;
  ssize_t n;
  int ret = -1;
  if (e == NULL)
    return -1;
  ctx = e->ctx_new ();
  if (ctx == NULL || e->init (ctx, e->sha256 (), NULL) != 1)
    {
      cm_err_set (err, ENOMEM, "sha256");
      goto out;
    }
  while ((n = read (fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          cm_err_set (err, errno, "sha256: read");
          goto out;
        }
      if (e->update (ctx, buf, (size_t) n) != 1)
        {
          cm_err_set (err, EIO, "sha256");
          goto out;
        }
    }
  if (e->final (ctx, md, &len) != 1)
    {
      cm_err_set (err, EIO, "sha256");
      goto out;
    }
  for (int i = 0; i < 32; i++)
    {
      hex[2 * i] = "0123456789abcdef"[md[i] >> 4];
      hex[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
    }
  hex[64] = '\0';
  ret = 0;
out:
  if (ctx)
    e->ctx_free (ctx);
  return ret;
}
