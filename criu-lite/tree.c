/* The process tree of an image: tree.img lists every process (parents
 * before their children) with its parent, process group and session;
 * each process's own image is the directory named by its pid. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/tree.h"

#define TREE_MAGIC "CLTREE\0\0"

struct tree_hdr
{
  char magic[8];
  uint32_t version, count;
  uint8_t sha256[32];          /* over the records */
};

static void
digest (const void *p, size_t n, uint8_t out[32])
{
  struct cm_err *e = NULL;
  if (cm_sha256 (p, n, out, &e) < 0)
    memset (out, 0xff, 32);  /* no file has it: the check fails */
  cm_err_free (&e);
}

int
cl_tree_write (int dirfd, const struct cl_tree_rec *recs, size_t n,
               struct cm_err **err)
{
  struct tree_hdr h;
  _cleanup_free_ char *buf = xmalloc (sizeof h + n * sizeof *recs);
  memset (&h, 0, sizeof h);
  memcpy (h.magic, TREE_MAGIC, 8);
  h.version = CL_VERSION;
  h.count = (uint32_t) n;
  digest (recs, n * sizeof *recs, h.sha256);
  memcpy (buf, &h, sizeof h);
  memcpy (buf + sizeof h, recs, n * sizeof *recs);
  return cm_atomic_write_at (dirfd, "tree.img", buf, sizeof h + n * sizeof *recs,
                             0600, err);
}

static int
check_links (const struct cl_tree_rec *r, size_t n, struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    {
      bool parent_before = i == 0;
      if (r[i].pid <= 0)
        return cm_err_set (err, 0, "tree.img: process %zu has pid %d", i, r[i].pid);
      for (size_t j = 0; j < i; j++)
        {
          if (r[j].pid == r[i].pid)
            return cm_err_set (err, 0, "tree.img: pid %d twice", r[i].pid);
          if (r[j].pid == r[i].ppid)
            parent_before = true;
        }
      if (!parent_before)
        return cm_err_set (err, 0, "tree.img: the parent of pid %d is not "
                           "listed before it", r[i].pid);
    }
  return 0;
}

int
cl_tree_load (const char *dir, struct cl_tree_rec **out, size_t *n,
              struct cm_err **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/tree.img", dir), *buf = NULL;
  struct tree_hdr h;
  uint8_t md[32];
  size_t len;

  if (cm_read_file_at (AT_FDCWD, path, 1 << 20, &buf, &len, err) < 0)
    return cm_err_wrap (err, "image `%s`", dir);
  if (len < sizeof h)
    return cm_err_set (err, 0, "image `%s`: tree.img: truncated header", dir);
  memcpy (&h, buf, sizeof h);
  if (memcmp (h.magic, TREE_MAGIC, 8) != 0)
    return cm_err_set (err, 0, "image `%s`: tree.img: not a criu-lite image "
                       "(bad magic)", dir);
  if (h.version != CL_VERSION)
    return cm_err_set (err, 0, "image `%s`: tree.img: format version %u, this "
                       "build reads %u", dir, h.version, CL_VERSION);
  if (h.count == 0 || h.count > 4096 || len != sizeof h + h.count * sizeof **out)
    return cm_err_set (err, 0, "image `%s`: tree.img: truncated (%zu bytes for "
                       "%u processes)", dir, len, h.count);
  digest (buf + sizeof h, h.count * sizeof **out, md);
  if (memcmp (md, h.sha256, 32) != 0)
    return cm_err_set (err, 0, "image `%s`: tree.img: checksum mismatch "
                       "(corrupted)", dir);
  *out = xmalloc (h.count * sizeof **out);
  memcpy (*out, buf + sizeof h, h.count * sizeof **out);
  *n = h.count;
  if (check_links (*out, *n, err) < 0)
    {
      free (*out);
      *out = NULL;
      return cm_err_wrap (err, "image `%s`", dir);
    }
  return 0;
}
