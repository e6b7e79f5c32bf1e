/* libFuzzer entry for image/: manifests and indexes, image configs,
 * WWW-Authenticate challenges, references, the layer decompressor (gzip
 * through ISA-L and through zlib, zstd, plain), and layer tars (unpacked
 * into a scratch directory, inline and on the decompression thread, with
 * the diff_id hashed).  The first input byte picks the target.  Built
 * by `make fuzzers`, run by `make fuzz` (docs/architecture.md, Tests);
 * seeds in tests/fixtures/fuzz/fuzz_image/, first byte '0'..'7'.  Layers are
 * unpacked under $TMPDIR/fuzz_image.PID, removed at exit.
 *
 * Invariants: a failure sets exactly one error, success none; no entry of a
 * layer lands outside the scratch root (checked by the sentinel next to
 * it); everything is freed (LSan). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check (int r, struct cm_err **e)
{
  if ((r < 0) != (*e != NULL) || (*e && (*e)->msg == NULL))
    abort ();
  cm_err_free (e);
}

struct mem
{
  const uint8_t *p;
  size_t n;
  bool done;
};

static ssize_t
mem_read (void *data, const void **buf)
{
  struct mem *m = data;
  if (m->done)
    return 0;
  m->done = true;
  *buf = m->p;
  return (ssize_t) m->n;
}

/* Every block the decompressor hands out, till the end or an error; an
 * error must come with a message. */
static void
fuzz_decomp (const uint8_t *data, size_t size, bool zlib)
{
  struct mem m = { data, size, false };
  struct img_decomp *d = NULL;
  struct cm_err *e = NULL;
  const void *buf;
  ssize_t n;
  if (zlib)
    setenv ("SANDLOCK_IMAGE_INFLATE", "zlib", 1);
  else
    unsetenv ("SANDLOCK_IMAGE_INFLATE");
  if (img_decomp_open (&d, mem_read, &m, "fuzz", &e) < 0)
    {
      check (-1, &e);
      return;
    }
  while ((n = img_decomp_read (d, &buf)) > 0)
    ;
  if (n < 0 && img_decomp_error (d) == NULL)
    abort ();
  img_decomp_free (d);
}

static char base[4096];

/* The scratch directory goes when the fuzzer exits (its root is removed
 * after every input). */
static void
remove_base (void)
{
  rmdir (base);
}

static void
fuzz_layer (const uint8_t *data, size_t size, bool threaded)
{
  char root[4200];
  struct mem m = { data, size, false };
  struct img_unpack_stats st = { 0 };
  struct cm_err *e = NULL;
  int fd;
  if (base[0] == '\0')
    {
      const char *tmp = getenv ("TMPDIR");
      snprintf (base, sizeof base, "%s/fuzz_image.%d", tmp ? tmp : "/tmp",
                (int) getpid ());
      if (mkdir (base, 0700) < 0)
        abort ();
      atexit (remove_base);
    }
  snprintf (root, sizeof root, "%s/root", base);
  mkdir (root, 0755);
  fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    abort ();
  {
    struct img_diff_id diff_id;
    check (img_unpack_layer (fd, mem_read, &m, threaded ? UINT64_MAX : 0, 1u << 24, 0, "fuzz",
                             &diff_id, &st, &e), &e);
  }
  close (fd);
  /* The seeds try to write "escaped" next to the root. */
  {
    struct stat s;
    char other[4200];
    snprintf (other, sizeof other, "%s/escaped", base);
    if (lstat (other, &s) == 0)
      abort ();
  }
  {
    int bfd = open (base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (bfd >= 0)
      {
        cm_rm_rf_at (bfd, "root", &e);
        cm_err_free (&e);
        close (bfd);
      }
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct cm_err *e = NULL;
  const char *s;
  if (size < 1)
    return 0;
  s = (const char *) data + 1;
  size--;
  switch (data[0] % 8)
    {
    case 0:
      {
        struct img_manifest *m = NULL;
        const struct img_desc *d;
        int r = img_manifest_parse (s, size, NULL, "fuzz", &m, &e);
        check (r, &e);
        if (r == 0 && m->is_index)
          {
            check (img_index_select (m, "linux/amd64", "fuzz", &d, &e), &e);
          }
        img_manifest_free (m);
        break;
      }
    case 1:
      {
        struct img_config_doc *c = NULL;
        check (img_config_parse (s, size, &c, &e), &e);
        img_config_doc_free (c);
        break;
      }
    case 2:
      {
        _cleanup_free_ char *z = strndup (s, size);
        struct img_challenge c;
        if (img_challenge_parse (z, &c) == 0)
          img_challenge_clear (&c);
        break;
      }
    case 3:
      {
        _cleanup_free_ char *z = strndup (s, size);
        struct img_ref *r = NULL;
        int ret = img_ref_parse (z, &r, &e);
        check (ret, &e);
        if (ret == 0)
          free (img_ref_format (r));
        img_ref_free (r);
        break;
      }
    case 4:
    case 5:
      fuzz_decomp ((const uint8_t *) s, size, data[0] % 8 == 5);
      break;
    default:
      fuzz_layer ((const uint8_t *) s, size, data[0] % 8 == 7);
      break;
    }
  return 0;
}
