/* The address space of a stopped process: every mapping from
 * /proc/PID/maps, and, through /proc/PID/pagemap, the pages that hold data
 * of their own (anonymous pages, private copies of file pages), read from
 * /proc/PID/mem into pages.img.  Pages never touched are not saved; clean
 * file pages come back from their file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/dump-writer.h"
#include "criu-lite/internal.h"

#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)
#define PM_FILE (1ull << 61)
#define COPY_CHUNK CL_WRITER_CHUNK
#define PM_CHUNK (8u << 20)      /* pagemap entries read at once: 4 GiB */

struct mm_ctx
{
  struct cl_dump *d;
  int mem_fd, pagemap_fd;
  struct cl_writer *w;         /* writes and hashes pages.img */
  uint64_t *pm;                /* pagemap entries of one chunk */
};

/* process_vm_readv copies straight from the target's pages, batches of
 * them pinned at once: half the time of /proc/PID/mem, which walks and
 * bounces one page at a time (docs/benchmarks.md).  It honours the
 * mapping's protection, though: a page with data under PROT_NONE (a
 * guard a program mprotected after writing) fails it, and is then read
 * through /proc/PID/mem, which reads regardless (FOLL_FORCE). */
static ssize_t
read_mem (struct mm_ctx *c, char *buf, uint64_t addr, size_t n)
{
  struct iovec local = { buf, n }, remote = { (void *) (uintptr_t) addr, n };
  ssize_t got = process_vm_readv (c->d->pid, &local, 1, &remote, 1, 0);
  if (got == (ssize_t) n)
    return got;
  return pread (c->mem_fd, buf, n, (off_t) addr);
}

/* Reads a run into the writer's buffers; the writer thread writes and
 * hashes each while the next is read. */
static int
copy_run (struct mm_ctx *c, uint64_t addr, uint64_t len, struct cm_err **err)
{
  struct cl_run run = { addr, len, c->d->pages_len };
  while (len > 0)
    {
      size_t n = len > COPY_CHUNK ? COPY_CHUNK : len;
      char *buf = cl_writer_buffer (c->w);
      ssize_t got = read_mem (c, buf, addr, n);
      cl_writer_queue (c->w, got == (ssize_t) n ? n : 0);
      if (got != (ssize_t) n)
        return cm_err_set (err, got < 0 ? errno : EIO,
                           "read memory at %#" PRIx64 " (%zu bytes)", addr, n);
      addr += n;
      len -= n;
      c->d->pages_len += n;
    }
  cl_buf_add (&c->d->runs, &run, sizeof run);
  return 0;
}

/* Saves the pages of [start,end) that |want| says hold data. */
static int
dump_pages (struct mm_ctx *c, uint64_t start, uint64_t end, bool all,
            struct cm_err **err)
{
  uint64_t run_start = 0, run_len = 0;
  if (all)
    return copy_run (c, start, end - start, err);
  for (uint64_t a = start; a < end;)
    {
      size_t npages = (end - a) / CL_PAGE, bytes;
      if (npages > PM_CHUNK / 8)
        npages = PM_CHUNK / 8;
      bytes = npages * 8;
      if (pread (c->pagemap_fd, c->pm, bytes, (off_t) (a / CL_PAGE * 8))
          != (ssize_t) bytes)
        return cm_err_set (err, errno ? errno : EIO, "read pagemap at %#" PRIx64, a);
      for (size_t i = 0; i < npages; i++, a += CL_PAGE)
        {
          uint64_t e = c->pm[i];
          bool data = (e & PM_SWAP) || ((e & PM_PRESENT) && !(e & PM_FILE));
          if (data && run_len && run_start + run_len == a)
            run_len += CL_PAGE;
          else if (data)
            {
              if (run_len && copy_run (c, run_start, run_len, err) < 0)
                return -1;
              run_start = a;
              run_len = CL_PAGE;
            }
        }
    }
  if (run_len && copy_run (c, run_start, run_len, err) < 0)
    return -1;
  return 0;
}

static bool
special (struct cl_proc *p, const char *name, uint64_t s, uint64_t e)
{
  if (strcmp (name, "[vdso]") == 0)
    p->vdso = s, p->vdso_len = e - s;
  else if (strcmp (name, "[vvar]") == 0)
    p->vvar = s, p->vvar_len = e - s;
  else if (strcmp (name, "[vvar_vclock]") == 0)
    p->vclock = s, p->vclock_len = e - s;
  else if (strcmp (name, "[vsyscall]") == 0)
    ;
  else
    return false;
  return true;
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t a = strlen (s), b = strlen (suffix);
  return a >= b && strcmp (s + a - b, suffix) == 0;
}

/* One line of /proc/PID/maps. */
static int
dump_vma (struct mm_ctx *c, const char *line, struct cm_err **err)
{
  uint64_t s, e, off;
  char perms[8], name[4096] = "";
  unsigned long ino;
  unsigned maj, min;
  struct cl_vma v;
  bool file, shared, all = false;

  if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %lu %4095[^\n]",
              &s, &e, perms, &off, &maj, &min, &ino, name) < 7)
    return cm_err_set (err, 0, "unparsable maps line `%s`", line);
  if (special (&c->d->proc, name, s, e))
    return 0;
  memset (&v, 0, sizeof v);
  v.start = s;
  v.end = e;
  v.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0)
           | (perms[2] == 'x' ? PROT_EXEC : 0);
  shared = perms[3] == 's';
  file = name[0] == '/' && ino != 0 && !ends_with (name, " (deleted)");
  if (file)
    {
      char mf[96];
      struct stat st;
      v.kind = shared ? CL_VMA_FILE_SHARED : CL_VMA_FILE;
      v.pgoff = off;
      v.path = cl_str_add (&c->d->strings, name);
      /* the file really mapped, whatever its path names now */
      snprintf (mf, sizeof mf, "%d/map_files/%" PRIx64 "-%" PRIx64, c->d->pid,
                s, e);
      if (fstatat (cl_proc_dir (), mf, &st, 0) == 0)
        {
          v.fsize = (uint64_t) st.st_size;
          v.fmtime_ns = (uint64_t) st.st_mtim.tv_sec * 1000000000ull
                        + (uint64_t) st.st_mtim.tv_nsec;
        }
    }
  else if (shared || ino != 0)
    {
      /* shared anonymous, memfd, SysV shm, a deleted file: by content */
      v.kind = CL_VMA_ANON_SHARED;
      all = true;
      if (shared && ino != 0)
        {
          v.pgoff = off;
          all = !cl_shm_note (c->d, &v, makedev (maj, min), ino);
        }
    }
  else
    {
      v.kind = CL_VMA_ANON;
      if (strcmp (name, "[stack]") == 0)
        v.flags |= CL_VMA_GROWSDOWN;
    }
  cl_buf_add (&c->d->vmas, &v, sizeof v);
  if (v.kind == CL_VMA_FILE_SHARED
      || (v.kind == CL_VMA_ANON_SHARED && !all))
    return 0;
  return dump_pages (c, s, e, all, err);
}

static int
read_mm_fields (struct cl_dump *d, struct cm_err **err)
{
  _cleanup_free_ char *stat = NULL;
  char path[64], *p;
  uint64_t f[53] = { 0 };
  int i = 3;
  struct cl_mm *m = &d->proc.mm;

  snprintf (path, sizeof path, "%d/stat", d->pid);
  if (cm_read_file_at (cl_proc_dir (), path, 1 << 16, &stat, NULL, err) < 0)
    return -1;
  p = strrchr (stat, ')');
  if (p == NULL)
    return cm_err_set (err, 0, "unparsable `%s`", path);
  p += 2;  /* field 3: state */
  for (p = strchr (p, ' '); p && i < 52; p = strchr (p + 1, ' '))
    f[++i] = strtoull (p + 1, NULL, 10);
  m->start_code = f[26], m->end_code = f[27], m->start_stack = f[28];
  m->start_data = f[45], m->end_data = f[46], m->start_brk = f[47];
  m->arg_start = f[48], m->arg_end = f[49], m->env_start = f[50];
  m->env_end = f[51];
  m->brk = m->start_brk;
  return 0;
}

static void
heap_end (struct cl_dump *d)
{
  const struct cl_vma *v = (const void *) d->vmas.p;
  size_t n = d->vmas.len / sizeof *v;
  for (size_t i = 0; i < n; i++)
    if (v[i].start <= d->proc.mm.start_brk && d->proc.mm.start_brk < v[i].end)
      d->proc.mm.brk = v[i].end;  /* page-aligned: >= the real brk */
}

static int
walk_maps (struct mm_ctx *c, struct cm_err **err)
{
  char path[64];
  _cleanup_free_ char *maps = NULL;
  char *save = NULL;

  snprintf (path, sizeof path, "%d/maps", c->d->pid);
  if (cm_read_file_at (cl_proc_dir (), path, 64u << 20, &maps, NULL, err) < 0)
    return -1;
  for (char *l = strtok_r (maps, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    if (dump_vma (c, l, err) < 0)
      return -1;
  return 0;
}

int
cl_dump_mm (struct cl_dump *d, struct cm_err **err)
{
  char path[64];
  _cleanup_fd_ int mem = -1, pagemap = -1;
  _cleanup_free_ uint64_t *pm = xmalloc (PM_CHUNK);
  struct mm_ctx c = { d, -1, -1, NULL, pm };
  int r;

  snprintf (path, sizeof path, "%d/mem", d->pid);
  mem = openat (cl_proc_dir (), path, O_RDONLY | O_CLOEXEC);
  if (mem < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  snprintf (path, sizeof path, "%d/pagemap", d->pid);
  pagemap = openat (cl_proc_dir (), path, O_RDONLY | O_CLOEXEC);
  if (pagemap < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  c.mem_fd = mem;
  c.pagemap_fd = pagemap;
  c.w = cl_writer_start (d->pages_fd, &d->pages_hash, err);
  if (c.w == NULL)
    return -1;
  r = read_mm_fields (d, err) < 0 || walk_maps (&c, err) < 0 ? -1 : 0;
  /* every write done (or failed) before the image or an error is made */
  if (cl_writer_finish (c.w, r < 0 ? NULL : err) < 0 || r < 0)
    return -1;
  heap_end (d);
  if (d->proc.vdso == 0)
    return cm_err_set (err, 0, "process %d has no [vdso] mapping", d->pid);
  return 0;
}
