/* libFuzzer entry for criu-lite/image.c: the core.img loader (restore
 * reads an image it did not write; a hostile one must fail cleanly).  The
 * input is a core.img; the harness makes its checksums and kernel/CPU
 * fields match so the fuzzer reaches the record checks behind them, and
 * writes a zero pages.img of the size the header names (capped at 1 MiB).
 *
 * Invariants checked: a load either fails with exactly one error message
 * or succeeds without one, and then every record the restore would use is
 * inside the loaded image (mappings' paths, page runs, fdx records, the
 * fds an epoll watches); everything is freed (LSan). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/internal.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
fix_up (char *buf, size_t size, int pages_fd)
{
  struct cl_header h;
  struct utsname u;
  struct cm_err *e = NULL;
  char *zero;

  memcpy (&h, buf, sizeof h);
  uname (&u);
  snprintf (h.kernel, sizeof h.kernel, "%s", u.release);
  h.xcr0 &= cl_xcr0 ();
  h.pages_len = (h.pages_len % (1u << 20)) & ~(CL_PAGE - 1);
  zero = xcalloc (1, h.pages_len + 1);
  if (ftruncate (pages_fd, (off_t) h.pages_len) < 0)
    abort ();
  if (cl_xxh64 (zero, h.pages_len, &h.pages_xxh64, &e) < 0)
    abort ();
  free (zero);
  for (int i = 0; i < CL_S_COUNT; i++)
    {
      struct cl_sect_desc *s = &h.sect[i];
      if (s->offset <= size && s->length <= size - s->offset)
        cm_sha256 (buf + s->offset, s->length, s->sha256, &e);
    }
  cm_sha256 (&h, offsetof (struct cl_header, header_sha256), h.header_sha256, &e);
  if (e)
    abort ();  /* libcrypto must load here */
  memcpy (buf, &h, sizeof h);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char dir[] = "fuzz_criu.XXXXXX";
  static bool made;
  struct cl_image img;
  struct cm_err *err = NULL;
  char *buf;
  int fd, r;

  if (size > (1u << 20))
    return 0;
  if (!made && mkdtemp (dir) == NULL)
    abort ();
  made = true;
  buf = xmalloc (size + 1);
  memcpy (buf, data, size);
  fd = open ("fuzz_criu_pages.img", O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    abort ();
  if (size >= sizeof (struct cl_header))
    fix_up (buf, size, fd);
  close (fd);
  {
    _cleanup_free_ char *core = xasprintf ("%s/core.img", dir);
    _cleanup_free_ char *pages = xasprintf ("%s/pages.img", dir);
    rename ("fuzz_criu_pages.img", pages);
    fd = open (core, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || cm_write_all (fd, buf, size) < 0)
      abort ();
    close (fd);
  }
  free (buf);
  r = cl_image_load (dir, &img, &err);
  if ((r < 0) != (err != NULL))
    abort ();
  if (r == 0)
    {
      for (size_t i = 0; i < img.nvmas; i++)
        if (img.vmas[i].path >= img.strings_len)
          abort ();
      for (size_t i = 0; i < img.nruns; i++)
        if (img.runs[i].off + img.runs[i].len > img.hdr.pages_len)
          abort ();
      /* an fd's state record (section fdx) lies inside the section, and
       * every fd an epoll watches is one of the image's */
      for (size_t i = 0; i < img.nfds; i++)
        {
          const struct cl_fdx *x = cl_image_fdx (&img, img.fds[i].fd);
          if (x == NULL)
            continue;
          if ((const char *) (x + 1) + x->len > img.fdx + img.fdx_len
              || (const char *) x < img.fdx)
            abort ();
          if (x->kind == CL_FD_EPOLL)
            {
              const struct cl_fdx_epoll *e = (const void *) (x + 1);
              for (size_t k = 0; k < x->len / sizeof *e; k++)
                {
                  bool found = false;
                  for (size_t j = 0; j < img.nfds; j++)
                    found |= img.fds[j].fd == e[k].tfd;
                  if (!found)
                    abort ();
                }
            }
        }
      cl_image_free (&img);
    }
  cm_err_free (&err);
  return 0;
}
