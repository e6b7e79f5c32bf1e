/* Loads libcurl, libarchive and libcrypto on first use (image/dl.h says
 * why). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define IMG_DL_NO_MACROS 1
#include "image/dl.h"

#define NLIBS 3

static struct img_dl table;
static pthread_once_t once[NLIBS] = { PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT };

static const char *const sonames[NLIBS] = {
  [IMG_LIB_CURL] = "libcurl.so.4",
  [IMG_LIB_ARCHIVE] = "libarchive.so.13",
  [IMG_LIB_CRYPTO] = "libcrypto.so.3",
};

static void __attribute__ ((noreturn))
die (const char *what, const char *why)
{
  /* Not an error a caller can handle: the installation lacks a library
   * the binary was built against (the dynamic loader would have refused
   * to start it). */
  dprintf (STDERR_FILENO, "sandlock-oci: cannot load %s: %s\n", what, why ? why : "?");
  _exit (127);
}

static void
load (int lib)
{
  /* RTLD_LAZY: binding every symbol of libcurl's and libarchive's
   * dependency trees up front (RTLD_NOW) cost ~3 ms of a ~40 ms pull. */
  void *h = dlopen (sonames[lib], RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    die (sonames[lib], dlerror ());
#define IMG_DL_LOAD(l, name)                                    \
  if (l == lib)                                                 \
    {                                                           \
      void *p_ = dlsym (h, #name);                              \
      if (p_ == NULL)                                           \
        die (#name, dlerror ());                                \
      table.name = (__typeof__ (table.name)) p_;                \
    }
  IMG_DL_LIST (IMG_DL_LOAD)
#undef IMG_DL_LOAD
}

static void load_curl (void) { load (IMG_LIB_CURL); }
static void load_archive (void) { load (IMG_LIB_ARCHIVE); }
static void load_crypto (void) { load (IMG_LIB_CRYPTO); }

static void (*const loaders[NLIBS]) (void) = {
  [IMG_LIB_CURL] = load_curl,
  [IMG_LIB_ARCHIVE] = load_archive,
  [IMG_LIB_CRYPTO] = load_crypto,
};

const struct img_dl *
img_dl (int lib)
{
  pthread_once (&once[lib], loaders[lib]);
  return &table;
}
