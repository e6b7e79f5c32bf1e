/* XXH64 (seed 0) of pages.img, from Debian's libxxhash0 resolved with
 * dlopen on first use, as common/sha256.c loads libcrypto: linked
 * directly, every sandlock-oci process would load it, and only checkpoint
 * and restore hash page data.  Why XXH64 and not sha256 for pages.img:
 * docs/checkpoint.md ("Image format").  The library is loaded before the
 * dump chroots into the target's root (criu_dump), where its path would
 * name the container's files. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "criu-lite/internal.h"

#define XXH_LIB "libxxhash.so.0"

struct xxh
{
  uint64_t (*one) (const void *, size_t, uint64_t);
  void *(*create) (void);
  int (*release) (void *);
  int (*reset) (void *, uint64_t);
  int (*update) (void *, const void *, size_t);
  uint64_t (*digest) (const void *);
};

static const struct xxh *
xxh_get (struct cm_err **err)
{
  static struct xxh x;
  static char why[256];
  void *h;
  if (x.digest)
    return &x;
  if (why[0])
    return cm_err_set (err, ENOENT, "%s", why), NULL;
  h = dlopen (XXH_LIB, RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    {
      snprintf (why, sizeof why, "XXH64 of pages.img: cannot load %s (Debian "
                "package libxxhash0): %s", XXH_LIB, dlerror ());
      return cm_err_set (err, ENOENT, "%s", why), NULL;
    }
  *(void **) &x.one = dlsym (h, "XXH64");
  *(void **) &x.create = dlsym (h, "XXH64_createState");
  *(void **) &x.release = dlsym (h, "XXH64_freeState");
  *(void **) &x.reset = dlsym (h, "XXH64_reset");
  *(void **) &x.update = dlsym (h, "XXH64_update");
  *(void **) &x.digest = dlsym (h, "XXH64_digest");
  if (!x.one || !x.create || !x.release || !x.reset || !x.update || !x.digest)
    {
      x.digest = NULL;
      snprintf (why, sizeof why, "XXH64 of pages.img: %s lacks the XXH64 "
                "functions (Debian package libxxhash0 >= 0.8)", XXH_LIB);
      return cm_err_set (err, ENOENT, "%s", why), NULL;
    }
  return &x;
}

int
cl_xxh64_load (struct cm_err **err)
{
  return xxh_get (err) ? 0 : -1;
}

int
cl_xxh64_init (struct cl_xxh64 *s, struct cm_err **err)
{
  const struct xxh *x = xxh_get (err);
  s->state = NULL;
  if (x == NULL)
    return -1;
  s->state = x->create ();
  if (s->state == NULL || x->reset (s->state, 0) != 0)
    return cm_err_set (err, ENOMEM, "XXH64 state");
  return 0;
}

void
cl_xxh64_update (struct cl_xxh64 *s, const void *p, size_t n)
{
  xxh_get (NULL)->update (s->state, p, n);
}

uint64_t
cl_xxh64_digest (const struct cl_xxh64 *s)
{
  return xxh_get (NULL)->digest (s->state);
}

void
cl_xxh64_fini (struct cl_xxh64 *s)
{
  if (s->state)
    xxh_get (NULL)->release (s->state);
  s->state = NULL;
}

int
cl_xxh64 (const void *p, size_t n, uint64_t *out, struct cm_err **err)
{
  const struct xxh *x = xxh_get (err);
  if (x == NULL)
    return -1;
  *out = x->one (p, n, 0);
  return 0;
}
