/* Loads libcurl, libarchive, libcrypto and the decompressors on first use
 * (image/dl.h says why); libarchive is linked in instead when the build
 * found libarchive.a (IMG_ARCHIVE_STATIC, Makefile). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#define IMG_DL_NO_MACROS 1
#include "image/dl.h"

static struct img_dl table;
static pthread_once_t once[IMG_NLIBS] = {
  PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
  PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
};
static bool loaded[IMG_NLIBS];
static char why[IMG_NLIBS][256];

static const char *const sonames[IMG_NLIBS] = {
  [IMG_LIB_CURL] = "libcurl.so.4",
  [IMG_LIB_ARCHIVE] = "libarchive.so.13",
  [IMG_LIB_CRYPTO] = "libcrypto.so.3",
  [IMG_LIB_ISAL] = "libisal.so.2",
  [IMG_LIB_ZLIB] = "libz.so.1",
  [IMG_LIB_ZSTD] = "libzstd.so.1",
};

/* Fills the library's entries; on failure leaves why[lib] set and the
 * library marked not loaded. */
static void
load (int lib)
{
#ifdef IMG_ARCHIVE_STATIC
  /* Linked in from libarchive.a (Makefile): nothing to load. */
  if (lib == IMG_LIB_ARCHIVE)
    {
#define IMG_DL_STATIC(l, name) table.name = name;
      IMG_DL_ARCHIVE_LIST (IMG_DL_STATIC)
#undef IMG_DL_STATIC
      loaded[lib] = true;
      return;
    }
#endif
  /* RTLD_LAZY: binding every symbol of libcurl's and libarchive's
   * dependency trees up front (RTLD_NOW) cost ~3 ms of a ~40 ms pull. */
  void *h = dlopen (sonames[lib], RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    {
      snprintf (why[lib], sizeof why[lib], "cannot load %s: %s", sonames[lib], dlerror ());
      return;
    }
#define IMG_DL_LOAD(l, name)                                    \
  if (l == lib)                                                 \
    {                                                           \
      void *p_ = dlsym (h, #name);                              \
      if (p_ == NULL)                                           \
        {                                                       \
          snprintf (why[lib], sizeof why[lib], "cannot load %s: %s", #name, dlerror ()); \
          return;                                               \
        }                                                       \
      table.name = (__typeof__ (table.name)) p_;                \
    }
  IMG_DL_LIST (IMG_DL_LOAD)
#undef IMG_DL_LOAD
  loaded[lib] = true;
}

#define LOADER(lib, fn) static void fn (void) { load (lib); }
LOADER (IMG_LIB_CURL, load_curl)
LOADER (IMG_LIB_ARCHIVE, load_archive)
LOADER (IMG_LIB_CRYPTO, load_crypto)
LOADER (IMG_LIB_ISAL, load_isal)
LOADER (IMG_LIB_ZLIB, load_zlib)
LOADER (IMG_LIB_ZSTD, load_zstd)
#undef LOADER

static void (*const loaders[IMG_NLIBS]) (void) = {
  [IMG_LIB_CURL] = load_curl,
  [IMG_LIB_ARCHIVE] = load_archive,
  [IMG_LIB_CRYPTO] = load_crypto,
  [IMG_LIB_ISAL] = load_isal,
  [IMG_LIB_ZLIB] = load_zlib,
  [IMG_LIB_ZSTD] = load_zstd,
};

const struct img_dl *
img_dl_try (int lib)
{
  pthread_once (&once[lib], loaders[lib]);
  return loaded[lib] ? &table : NULL;
}

const struct img_dl *
img_dl (int lib)
{
  if (img_dl_try (lib) == NULL)
    {
      /* Not an error a caller can handle: the installation lacks a
       * library the binary was built against (the dynamic loader would
       * have refused to start it). */
      dprintf (STDERR_FILENO, "sandlock-oci: %s\n", why[lib]);
      _exit (127);
    }
  return &table;
}
