/* Loads libcurl, libarchive and libcrypto on first use (image/dl.h says
 * why). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define IMG_DL_NO_MACROS 1
#include "image/dl.h"

static struct img_dl table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const sonames[] = {
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
load (void)
{
  void *h[3];
  for (int i = 0; i < 3; i++)
    {
      h[i] = dlopen (sonames[i], RTLD_NOW | RTLD_LOCAL);
      if (h[i] == NULL)
        die (sonames[i], dlerror ());
    }
#define IMG_DL_LOAD(lib, name)                                  \
  do                                                            \
    {                                                           \
      void *p_ = dlsym (h[lib], #name);                         \
      if (p_ == NULL)                                           \
        die (#name, dlerror ());                                \
      table.name = (__typeof__ (table.name)) p_;                \
    }                                                           \
  while (0);
  IMG_DL_LIST (IMG_DL_LOAD)
#undef IMG_DL_LOAD
}

const struct img_dl *
img_dl (void)
{
  pthread_once (&once, load);
  return &table;
}
