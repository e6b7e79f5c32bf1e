/* The criu-lite image: core.img (a header, then sections) and pages.img
 * (page data, page-aligned).  Layout and checks: docs/checkpoint.md.
 * Everything read back is untrusted: every count, offset, address and
 * string is checked here so restore.c and the stub can trust the fields. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/criu.h"
#include "criu-lite/internal.h"

static const char *const sect_names[CL_S_COUNT + 1] = {
  [CL_S_PROC] = "proc", [CL_S_THREADS] = "threads", [CL_S_VMAS] = "vmas",
  [CL_S_PAGES] = "pages", [CL_S_FDS] = "fds", [CL_S_STRINGS] = "strings",
  [CL_S_PIPES] = "pipes", [CL_S_FDX] = "fdx", [CL_S_SIGNALS] = "signals",
  [CL_S_SHMEM] = "shmem",
};

void
cl_buf_add (struct cl_buf *b, const void *p, size_t n)
{
  if (b->len + n > b->cap)
    {
      b->cap = (b->len + n) * 2 + 256;
      b->p = xrealloc (b->p, b->cap);
    }
  memcpy (b->p + b->len, p, n);
  b->len += n;
}

void
cl_buf_pad (struct cl_buf *b, size_t align)
{
  static const char zero[64];
  while (b->len % align)
    cl_buf_add (b, zero, 1);
}

uint32_t
cl_str_add (struct cl_buf *strings, const char *s)
{
  uint32_t off;
  if (strings->len == 0)
    cl_buf_add (strings, "", 1);  /* offset 0 is "" */
  off = (uint32_t) strings->len;
  cl_buf_add (strings, s, strlen (s) + 1);
  return off;
}

size_t
cl_thread_rec_size (uint32_t xstate_len)
{
  return (sizeof (struct cl_thread) + xstate_len + 63) & ~(size_t) 63;
}

uint64_t
cl_xcr0 (void)
{
  uint32_t lo, hi;
  __asm__ volatile ("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t) hi << 32) | lo;
}

/* Only fails when libcrypto cannot be loaded: the digest is then all
 * ones, which no file has, so the check after it fails, naming the file. */
static void
sha256 (const void *p, size_t n, uint8_t out[32])
{
  struct cm_err *e = NULL;
  if (cm_sha256 (p, n, out, &e) < 0)
    memset (out, 0xff, 32);
  cm_err_free (&e);
}

/* pages.img's XXH64, read through a mapping: the check before restore. */
static int
pages_xxh64 (int fd, uint64_t len, uint64_t *out, struct cm_err **err)
{
  void *m;
  int r;
  if (len == 0)
    return cl_xxh64 ("", 0, out, err);
  m = mmap (NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED)
    return cm_err_set (err, errno, "pages.img: map for its checksum");
  r = cl_xxh64 (m, len, out, err);
  munmap (m, len);
  return r;
}

/* ---- writing --------------------------------------------------------- */

int
cl_image_write (int dirfd, struct cl_dump *d, struct cm_err **err)
{
  struct cl_header h;
  struct utsname u;
  struct cl_buf out = { 0 };
  struct cl_buf *parts[CL_S_COUNT + 1] = {
    [CL_S_THREADS] = &d->threads, [CL_S_VMAS] = &d->vmas,
    [CL_S_PAGES] = &d->runs, [CL_S_FDS] = &d->fds, [CL_S_STRINGS] = &d->strings,
    [CL_S_PIPES] = &d->pipes, [CL_S_FDX] = &d->fdx, [CL_S_SIGNALS] = &d->sigs,
    [CL_S_SHMEM] = &d->shms,
  };
  struct cl_buf proc = { .p = (char *) &d->proc, .len = sizeof d->proc };
  _cleanup_free_ char *buf = NULL;
  int r;

  parts[CL_S_PROC] = &proc;
  memset (&h, 0, sizeof h);
  memcpy (h.magic, CL_MAGIC, 8);
  h.version = CL_VERSION;
  h.nsect = CL_S_COUNT;
  uname (&u);
  snprintf (h.kernel, sizeof h.kernel, "%s", u.release);
  h.xcr0 = cl_xcr0 ();
  h.xstate_size = d->xstate_size;
  h.pages_len = d->pages_len;
  h.pages_xxh64 = cl_xxh64_digest (&d->pages_hash);  /* hashed as copied */

  cl_buf_add (&out, &h, sizeof h);
  for (unsigned i = 1; i <= CL_S_COUNT; i++)
    {
      struct cl_sect_desc *s = &h.sect[i - 1];
      cl_buf_pad (&out, 64);
      s->type = i;
      s->offset = out.len;
      s->length = parts[i]->len;
      sha256 (parts[i]->p, parts[i]->len, s->sha256);
      if (parts[i]->len)
        cl_buf_add (&out, parts[i]->p, parts[i]->len);
    }
  sha256 (&h, offsetof (struct cl_header, header_sha256), h.header_sha256);
  memcpy (out.p, &h, sizeof h);
  buf = out.p;
  r = cm_atomic_write_at (dirfd, "core.img", out.p, out.len, 0600, err);
  return r;
}

/* ---- reading --------------------------------------------------------- */

static int
check_header (struct cl_image *img, struct cm_err **err)
{
  struct cl_header *h = &img->hdr;
  uint8_t md[32];
  struct utsname u;

  if (img->core_len < sizeof *h)
    return cm_err_set (err, 0, "core.img: truncated header (%zu of %zu bytes)",
                       img->core_len, sizeof *h);
  memcpy (h, img->core, sizeof *h);
  if (memcmp (h->magic, CL_MAGIC, 8) != 0)
    return cm_err_set (err, 0, "core.img: not a criu-lite image (bad magic)");
  if (h->version != CL_VERSION)
    return cm_err_set (err, 0, "core.img: format version %u, this build reads %u",
                       h->version, CL_VERSION);
  sha256 (h, offsetof (struct cl_header, header_sha256), md);
  if (memcmp (md, h->header_sha256, 32) != 0)
    return cm_err_set (err, 0, "core.img: header checksum mismatch (corrupted)");
  if (h->nsect != CL_S_COUNT)
    return cm_err_set (err, 0, "core.img: %u sections, expected %u", h->nsect,
                       CL_S_COUNT);
  h->kernel[sizeof h->kernel - 1] = '\0';
  uname (&u);
  if (strcmp (h->kernel, u.release) != 0)
    return cm_err_set (err, 0, "core.img: captured on kernel %s, this is %s "
                       "(the vDSO differs between kernels)", h->kernel, u.release);
  if ((h->xcr0 & ~cl_xcr0 ()) != 0)
    return cm_err_set (err, 0, "core.img: the image needs CPU xstate features "
                       "%#llx, this CPU enables %#llx",
                       (unsigned long long) h->xcr0,
                       (unsigned long long) cl_xcr0 ());
  if (h->xstate_size > CL_XSTATE_MAX)
    return cm_err_set (err, 0, "core.img: xstate size %u too large", h->xstate_size);
  return 0;
}

static int
check_sections (struct cl_image *img, const void *sect[], size_t len[],
                struct cm_err **err)
{
  for (unsigned i = 1; i <= CL_S_COUNT; i++)
    {
      const struct cl_sect_desc *s = &img->hdr.sect[i - 1];
      uint8_t md[32];
      if (s->type != i)
        return cm_err_set (err, 0, "core.img: section %u has type %u", i, s->type);
      if (s->offset > img->core_len || s->length > img->core_len - s->offset)
        return cm_err_set (err, 0, "core.img: section %s truncated (%llu bytes "
                           "at %llu, file has %zu)", sect_names[i],
                           (unsigned long long) s->length,
                           (unsigned long long) s->offset, img->core_len);
      sha256 (img->core + s->offset, s->length, md);
      if (memcmp (md, s->sha256, 32) != 0)
        return cm_err_set (err, 0, "core.img: section %s checksum mismatch "
                           "(corrupted)", sect_names[i]);
      sect[i] = img->core + s->offset;
      len[i] = s->length;
    }
  return 0;
}

const char *
cl_image_str (const struct cl_image *img, uint32_t off)
{
  return img->strings + off;  /* bounds checked by check_str at load */
}

static bool
check_str (const struct cl_image *img, uint32_t off)
{
  return off < img->strings_len
         && memchr (img->strings + off, 0, img->strings_len - off) != NULL;
}

static int
check_vmas (struct cl_image *img, struct cm_err **err)
{
  uint64_t prev_end = 0;
  for (size_t i = 0; i < img->nvmas; i++)
    {
      const struct cl_vma *v = &img->vmas[i];
      if (v->start % CL_PAGE || v->end % CL_PAGE || v->start >= v->end
          || v->end > CL_TASK_TOP || v->start < prev_end)
        return cm_err_set (err, 0, "section vmas: mapping %zu (%#llx-%#llx) "
                           "out of order or outside user space", i,
                           (unsigned long long) v->start,
                           (unsigned long long) v->end);
      if (v->prot & ~7u || v->kind < CL_VMA_ANON || v->kind > CL_VMA_FILE_SHARED
          || v->pgoff % CL_PAGE || !check_str (img, v->path)
          || ((v->kind == CL_VMA_FILE || v->kind == CL_VMA_FILE_SHARED)
              && img->strings[v->path] != '/'))
        return cm_err_set (err, 0, "section vmas: mapping %zu (%#llx) has a bad "
                           "kind, protection or path", i,
                           (unsigned long long) v->start);
      prev_end = v->end;
    }
  return 0;
}

static const struct cl_vma *
vma_of (const struct cl_image *img, uint64_t addr, uint64_t len)
{
  for (size_t i = 0; i < img->nvmas; i++)
    if (addr >= img->vmas[i].start && addr + len <= img->vmas[i].end)
      return &img->vmas[i];
  return NULL;
}

static int
check_runs (struct cl_image *img, struct cm_err **err)
{
  for (size_t i = 0; i < img->nruns; i++)
    {
      const struct cl_run *r = &img->runs[i];
      if (r->addr % CL_PAGE || r->len % CL_PAGE || r->off % CL_PAGE
          || r->len == 0 || r->addr + r->len < r->addr
          || r->off > img->hdr.pages_len || r->len > img->hdr.pages_len - r->off
          || vma_of (img, r->addr, r->len) == NULL)
        return cm_err_set (err, 0, "section pages: run %zu (%#llx, %llu bytes) "
                           "lies outside the saved mappings or pages.img", i,
                           (unsigned long long) r->addr,
                           (unsigned long long) r->len);
    }
  return 0;
}

static int
check_threads (struct cl_image *img, struct cm_err **err)
{
  size_t rec = cl_thread_rec_size (img->hdr.xstate_size);
  if (img->proc->nthreads == 0 || img->proc->nthreads > CL_MAX_THREADS
      || img->threads_len != rec * img->proc->nthreads)
    return cm_err_set (err, 0, "section threads: %zu bytes for %u threads",
                       img->threads_len, img->proc->nthreads);
  for (uint32_t i = 0; i < img->proc->nthreads; i++)
    {
      const struct cl_thread *t = (const void *) (img->threads + i * rec);
      if (t->xstate_len != img->hdr.xstate_size || t->xstate_len < 576)
        return cm_err_set (err, 0, "section threads: thread %u xstate of %u "
                           "bytes", t->tid, t->xstate_len);
    }
  return 0;
}

/* Walks the pipes section: NULL when a record overruns it. */
static const struct cl_pipe *
pipe_next (const struct cl_image *img, size_t *off)
{
  const struct cl_pipe *p;
  size_t left = img->pipes_len - *off;
  if (left < sizeof *p)
    return NULL;
  p = (const void *) (img->pipes + *off);
  if (p->len > p->cap || p->cap > CL_PIPE_MAX || p->cap < CL_PAGE
      || p->len > left - sizeof *p)
    return NULL;
  *off += (sizeof *p + p->len + 7) & ~(size_t) 7;
  return p;
}

const struct cl_pipe *
cl_image_pipe (const struct cl_image *img, uint64_t id)
{
  size_t off = 0;
  const struct cl_pipe *p;
  while (off < img->pipes_len && (p = pipe_next (img, &off)) != NULL)
    if (p->id == id)
      return p;
  return NULL;
}

static int
check_pipes (struct cl_image *img, struct cm_err **err)
{
  size_t off = 0, n = 0;
  if ((uintptr_t) img->pipes % 8)
    return cm_err_set (err, 0, "section pipes: misaligned");
  for (; off < img->pipes_len; n++)
    if (pipe_next (img, &off) == NULL)
      return cm_err_set (err, 0, "section pipes: record %zu overruns the "
                         "section or has a bad size", n);
  return 0;
}

static bool
is_fdx_kind (uint32_t kind)
{
  return kind >= CL_FD_EVENTFD && kind <= CL_FD_LISTEN;
}

/* A FIFO is opened by its path; a pipe or FIFO end needs its bytes
 * record; an fdx kind its state record. */
static bool
fd_refs_ok (const struct cl_image *img, const struct cl_fd *f)
{
  const struct cl_fdx *x = cl_image_fdx (img, f->fd);
  if (f->kind == CL_FD_FIFO && img->strings[f->path] != '/')
    return false;
  if ((f->kind == CL_FD_PIPE || f->kind == CL_FD_FIFO)
      && cl_image_pipe (img, f->pos) == NULL)
    return false;
  if (!is_fdx_kind (f->kind) && x != NULL)
    return false;
  /* an object's owner holds its record; another holder refers to it by
   * id, checked when the tree's objects are made */
  return x == NULL || (x->kind == f->kind
                       && (uint32_t) f->pos == (uint32_t) f->fd);
}

static int
check_fds (struct cl_image *img, struct cm_err **err)
{
  for (size_t i = 0; i < img->nfds; i++)
    {
      const struct cl_fd *f = &img->fds[i];
      if (f->fd < 0 || f->fd >= CL_MAX_FD || f->kind < CL_FD_FILE
          || f->kind > CL_FD_KIND_MAX || !check_str (img, f->path)
          || !fd_refs_ok (img, f)
          || (i && f->fd <= img->fds[i - 1].fd)
          || (f->kind == CL_FD_INHERIT && f->pos > 2))
        return cm_err_set (err, 0, "section fds: entry %zu (fd %d) is invalid",
                           i, f->fd);
    }
  return 0;
}

static int
check_proc (struct cl_image *img, size_t len, struct cm_err **err)
{
  const struct cl_proc *p = img->proc;
  if (len != sizeof *p)
    return cm_err_set (err, 0, "section proc: %zu bytes, expected %zu", len,
                       sizeof *p);
  if (p->auxv_len > sizeof p->auxv || !check_str (img, p->cwd)
      || p->vdso % CL_PAGE || p->vvar % CL_PAGE || p->vclock % CL_PAGE
      || p->vdso_len % CL_PAGE || p->vvar_len % CL_PAGE
      || p->vclock_len % CL_PAGE || p->vdso == 0 || p->vdso_len == 0
      || p->vdso + p->vdso_len > CL_TASK_TOP || p->vvar + p->vvar_len > CL_TASK_TOP
      || p->vclock + p->vclock_len > CL_TASK_TOP)
    return cm_err_set (err, 0, "section proc: bad auxv, cwd or vDSO fields");
  return 0;
}

static bool
is_thread (const struct cl_image *img, int32_t tid)
{
  size_t rec = cl_thread_rec_size (img->hdr.xstate_size);
  for (uint32_t i = 0; i < img->proc->nthreads; i++)
    {
      const struct cl_thread *t = (const void *) (img->threads + i * rec);
      if ((int32_t) t->tid == tid)
        return true;
    }
  return false;
}

/* Signal numbers, threads, count of section signals. */
static int
check_sigs (const struct cl_image *img, struct cm_err **err)
{
  if (img->nsigs > CL_SIGPEND_MAX)
    return cm_err_set (err, 0, "section signals: %zu records, at most %u",
                       img->nsigs, CL_SIGPEND_MAX);
  for (size_t i = 0; i < img->nsigs; i++)
    {
      int32_t signo;
      memcpy (&signo, img->sigs[i].info, sizeof signo);
      if (signo < 1 || signo > 64 || signo == SIGKILL || signo == SIGSTOP)
        return cm_err_set (err, 0, "section signals: record %zu has signal %d",
                           i, signo);
      if (img->sigs[i].tid != 0 && !is_thread (img, img->sigs[i].tid))
        return cm_err_set (err, 0, "section signals: record %zu names thread "
                           "%d, which the image does not have", i,
                           img->sigs[i].tid);
    }
  return 0;
}

/* Every record names a shared anonymous mapping of this image, once. */
static int
check_shms (struct cl_image *img, struct cm_err **err)
{
  for (size_t i = 0; i < img->nshms; i++)
    {
      const struct cl_vma *v = vma_of (img, img->shms[i].start, CL_PAGE);
      if (v == NULL || v->start != img->shms[i].start
          || v->kind != CL_VMA_ANON_SHARED || img->shms[i].owner <= 0
          || (i && img->shms[i].start <= img->shms[i - 1].start))
        return cm_err_set (err, 0, "section shmem: record %zu (%#llx) names no "
                           "shared mapping of its own", i,
                           (unsigned long long) img->shms[i].start);
    }
  return 0;
}

static int
load_core (const char *dir, struct cl_image *img, struct cm_err **err)
{
  const void *sect[CL_S_COUNT + 1] = { 0 };
  size_t len[CL_S_COUNT + 1] = { 0 };
  _cleanup_free_ char *path = xasprintf ("%s/core.img", dir);

  if (cm_read_file_at (AT_FDCWD, path, 64u << 20, &img->core, &img->core_len,
                       err) < 0)
    return -1;
  if (check_header (img, err) < 0 || check_sections (img, sect, len, err) < 0)
    return -1;
  img->proc = sect[CL_S_PROC];
  img->threads = sect[CL_S_THREADS];
  img->threads_len = len[CL_S_THREADS];
  img->vmas = sect[CL_S_VMAS];
  img->nvmas = len[CL_S_VMAS] / sizeof (struct cl_vma);
  img->runs = sect[CL_S_PAGES];
  img->nruns = len[CL_S_PAGES] / sizeof (struct cl_run);
  img->fds = sect[CL_S_FDS];
  img->nfds = len[CL_S_FDS] / sizeof (struct cl_fd);
  img->strings = sect[CL_S_STRINGS];
  img->strings_len = len[CL_S_STRINGS];
  img->pipes = sect[CL_S_PIPES];
  img->pipes_len = len[CL_S_PIPES];
  img->fdx = sect[CL_S_FDX];
  img->fdx_len = len[CL_S_FDX];
  img->sigs = sect[CL_S_SIGNALS];
  img->nsigs = len[CL_S_SIGNALS] / sizeof (struct cl_sigpend);
  img->shms = sect[CL_S_SHMEM];
  img->nshms = len[CL_S_SHMEM] / sizeof (struct cl_shm);
  if (len[CL_S_VMAS] % sizeof (struct cl_vma) || len[CL_S_PAGES] % sizeof (struct cl_run)
      || len[CL_S_FDS] % sizeof (struct cl_fd)
      || len[CL_S_SIGNALS] % sizeof (struct cl_sigpend)
      || len[CL_S_SHMEM] % sizeof (struct cl_shm))
    return cm_err_set (err, 0, "core.img: a record section has a partial record");
  if (img->strings_len == 0 || img->strings[img->strings_len - 1] != '\0')
    return cm_err_set (err, 0, "section strings: not NUL-terminated");
  if (check_proc (img, len[CL_S_PROC], err) < 0 || check_threads (img, err) < 0
      || check_vmas (img, err) < 0 || check_runs (img, err) < 0
      || check_pipes (img, err) < 0 || cl_check_fdx (img, err) < 0
      || check_fds (img, err) < 0 || cl_check_epolls (img, err) < 0
      || check_sigs (img, err) < 0 || check_shms (img, err) < 0)
    return -1;
  return 0;
}

static int
load_pages (const char *dir, struct cl_image *img, struct cm_err **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/pages.img", dir);
  struct stat st;
  uint64_t md;

  img->pages_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (img->pages_fd < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  if (fstat (img->pages_fd, &st) < 0)
    return cm_err_set (err, errno, "stat `%s`", path);
  if ((uint64_t) st.st_size != img->hdr.pages_len)
    return cm_err_set (err, 0, "pages.img: %s (%llu of %llu bytes)",
                       (uint64_t) st.st_size < img->hdr.pages_len ? "truncated"
                                                                  : "too long",
                       (unsigned long long) st.st_size,
                       (unsigned long long) img->hdr.pages_len);
  if (pages_xxh64 (img->pages_fd, img->hdr.pages_len, &md, err) < 0)
    return -1;
  if (md != img->hdr.pages_xxh64)
    return cm_err_set (err, 0, "pages.img: checksum mismatch (corrupted)");
  return 0;
}

int
cl_image_load (const char *dir, struct cl_image *img, struct cm_err **err)
{
  memset (img, 0, sizeof *img);
  img->pages_fd = -1;
  if (load_core (dir, img, err) < 0 || load_pages (dir, img, err) < 0)
    {
      cm_err_wrap (err, "image `%s`", dir);
      cl_image_free (img);
      return -1;
    }
  return 0;
}

void
cl_image_free (struct cl_image *img)
{
  free (img->core);
  img->core = NULL;
  if (img->pages_fd >= 0)
    close (img->pages_fd);
  img->pages_fd = -1;
}

