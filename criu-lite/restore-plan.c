/* Building the stub mapping for a restore: where it goes (a hole in both
 * the saved layout and the current one), the code copied into it, and the
 * plan: mappings, page runs, vDSO moves, one rt_sigframe per thread. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/util.h"
#include "criu-lite/restore.h"

#define UC_FP_XSTATE 1
#define UC_SIGCONTEXT_SS 2
#define UC_STRICT_RESTORE_SS 4
#define CL_FP_MAGIC1 0x46505853u
#define CL_FP_MAGIC2 0x46505845u
#define XFEATURE_XTILEDATA (1ull << 18)
#define MAIN_STACK (64u << 10)
#define THREAD_STACK (16u << 10)

static uint64_t
page_up (uint64_t n)
{
  return (n + CL_PAGE - 1) & ~(CL_PAGE - 1);
}

/* The linker's bounds of section cl_stub (two symbols, not one object). */
static size_t
stub_len (void)
{
  return (size_t) ((uintptr_t) __stop_cl_stub - (uintptr_t) __start_cl_stub);
}

static uint64_t
frame_size (const struct cl_image *img)
{
  return (sizeof (struct cl_sigframe) + 64 + img->hdr.xstate_size + 64 + 63)
         & ~63ull;
}

/* Sizes of the parts of the stub mapping. */
static void
layout (struct cl_restore *r)
{
  const struct cl_image *img = r->img;
  uint64_t n = img->proc->nthreads, data;
  r->code_len = page_up (stub_len ());
  data = sizeof (struct cl_plan) + 64;
  data += img->nvmas * sizeof (struct cl_stub_vma) + 64;
  data += img->nruns * sizeof (struct cl_run) + 64;
  data += 3 * sizeof (struct cl_stub_move) + 64;
  data += n * sizeof (struct cl_stub_thread) + 64;
  data += sizeof img->proc->auxv + 64;
  data += n * frame_size (img);
  data += img->nsigs * sizeof (struct cl_stub_sig) + 64;
  if (r->seal)
    data += r->seal->ncalls * sizeof (struct cl_stub_call) + 64
            + r->seal->data_len + 64;
  r->data_len = page_up (data);
  r->stack_len = MAIN_STACK + (n - 1) * THREAD_STACK;
  r->spare_len = 0;
  for (int i = 0; i < 3; i++)
    r->spare_len += r->cur[i].len;
  r->total = r->code_len + r->data_len + r->stack_len + r->spare_len;
}

static bool
try_at (struct cl_restore *r, uint64_t addr)
{
  void *m = mmap ((void *) addr, r->total, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (m == MAP_FAILED)
    return false;
  if ((uint64_t) m != addr)
    {
      munmap (m, r->total);
      return false;
    }
  r->base = addr;
  return true;
}

/* The holes of the saved layout, highest first; in each a few positions
 * that the current layout may leave free. */
static int
place (struct cl_restore *r, struct cm_err **err)
{
  const struct cl_image *img = r->img;
  uint64_t hi = CL_TASK_TOP - (1ull << 30);
  for (size_t i = img->nvmas + 1; i-- > 0;)
    {
      uint64_t lo = i ? img->vmas[i - 1].end : 1ull << 20;
      uint64_t top = i < img->nvmas ? img->vmas[i].start : hi;
      for (int k = 0; k < 3; k++)
        {
          uint64_t s = r->saved[k].addr, e = s + r->saved[k].len;
          if (r->saved[k].len && s < top && e > lo)
            {
              /* a vDSO part inside this hole: keep above it only */
              lo = e > lo ? e : lo;
            }
        }
      if (top <= lo || top - lo < r->total + 4 * CL_PAGE)
        continue;
      for (int frac = 2; frac <= 16; frac *= 2)
        {
          uint64_t room = top - lo - r->total - 2 * CL_PAGE;
          uint64_t a = (lo + CL_PAGE + room / (uint64_t) frac) & ~(CL_PAGE - 1);
          if (try_at (r, a))
            return 0;
        }
    }
  return cm_err_set (err, ENOMEM, "no room for the restore stub in the saved "
                     "address space");
}

static uint32_t
xstate_user_size (uint64_t bv)
{
  uint32_t size = 576;
  for (int i = 2; i < 63; i++)
    if (bv & (1ull << i))
      {
        uint32_t a, b, c, d;
        __asm__ volatile ("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
                          : "a"(0xd), "c"(i));
        if (b + a > size)
          size = b + a;
      }
  return size;
}

/* The frame rt_sigreturn reads: registers, signal mask, and the XSAVE
 * image framed the way the kernel checks it (fpx_sw_bytes + MAGIC2). */
static void
build_frame (struct cl_restore *r, const struct cl_thread *t, char *at,
             struct cl_stub_thread *st)
{
  struct cl_sigframe *f = (void *) at;
  const struct user_regs_struct *g = &t->regs;
  struct cl_sigcontext *mc = &f->uc.mc;
  char *xs = (char *) (((uintptr_t) (f + 1) + 63) & ~(uintptr_t) 63);
  uint64_t bv;
  uint32_t size;

  memset (f, 0, sizeof *f);
  f->uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
  /* rt_sigreturn installs uc_stack as the thread's sigaltstack */
  f->uc.ss_sp = t->altstack_sp;
  f->uc.ss_flags = t->altstack_flags & ~SS_ONSTACK;
  f->uc.ss_size = t->altstack_size;
  mc->r8 = g->r8, mc->r9 = g->r9, mc->r10 = g->r10, mc->r11 = g->r11;
  mc->r12 = g->r12, mc->r13 = g->r13, mc->r14 = g->r14, mc->r15 = g->r15;
  mc->rdi = g->rdi, mc->rsi = g->rsi, mc->rbp = g->rbp, mc->rbx = g->rbx;
  mc->rdx = g->rdx, mc->rax = g->rax, mc->rcx = g->rcx, mc->rsp = g->rsp;
  mc->rip = g->rip, mc->eflags = g->eflags;
  mc->cs = 0x33, mc->ss = 0x2b;
  f->uc.sigmask = t->sigmask;

  memcpy (xs, t + 1, t->xstate_len);
  memcpy (&bv, xs + 512, 8);
  bv &= r->img->hdr.xcr0 & cl_xcr0 () & ~XFEATURE_XTILEDATA;
  memcpy (xs + 512, &bv, 8);
  memset (xs + 520, 0, 8);                       /* standard format */
  size = xstate_user_size (bv);
  {
    uint32_t sw[12] = { CL_FP_MAGIC1, size + 4, (uint32_t) bv,
                        (uint32_t) (bv >> 32), size };
    memcpy (xs + 464, sw, sizeof sw);
  }
  {
    uint32_t m2 = CL_FP_MAGIC2;
    memcpy (xs + size, &m2, 4);
  }
  mc->fpstate = (uint64_t) (uintptr_t) xs;
  st->frame = (uint64_t) (uintptr_t) &f->uc;
  st->fs_base = g->fs_base;
  st->gs_base = g->gs_base;
  st->tid_address = t->tid_address;
  st->tid = (int32_t) t->tid;
  st->rseq_addr = t->rseq_addr;
  st->rseq_len = t->rseq_len;
  st->rseq_sig = t->rseq_sig;
}

static char *
take (char **cur, size_t n)
{
  char *p = (char *) (((uintptr_t) *cur + 63) & ~(uintptr_t) 63);
  *cur = p + n;
  return p;
}

static bool
has_pages (const struct cl_image *img, const struct cl_vma *v)
{
  for (size_t i = 0; i < img->nruns; i++)
    if (img->runs[i].addr >= v->start && img->runs[i].addr < v->end)
      return true;
  return false;
}

static void
fill_vmas (struct cl_restore *r, struct cl_stub_vma *sv)
{
  const struct cl_image *img = r->img;
  for (size_t i = 0; i < img->nvmas; i++)
    {
      const struct cl_vma *v = &img->vmas[i];
      sv[i].start = v->start;
      sv[i].len = v->end - v->start;
      sv[i].pgoff = v->pgoff;
      sv[i].prot = (int32_t) v->prot;
      sv[i].fd = r->vma_fd[i];
      sv[i].has_pages = has_pages (img, v);
      if (v->kind == CL_VMA_ANON)
        sv[i].mflags = MAP_PRIVATE | MAP_ANONYMOUS
                       | (v->flags & CL_VMA_GROWSDOWN ? MAP_GROWSDOWN : 0);
      else if (v->kind == CL_VMA_ANON_SHARED && sv[i].fd >= 0)
        {
          /* the tree's shared object: its content is in it already */
          sv[i].mflags = MAP_SHARED;
          sv[i].has_pages = 0;
        }
      else if (v->kind == CL_VMA_ANON_SHARED)
        sv[i].mflags = MAP_SHARED | MAP_ANONYMOUS;
      else
        sv[i].mflags = v->kind == CL_VMA_FILE ? MAP_PRIVATE : MAP_SHARED;
    }
}

/* The seal's calls with their pointers resolved to where its data now
 * lies: the stub mapping stays at this address in the restored process. */
static void
fill_seal (struct cl_restore *r, struct cl_plan *p, char **cur)
{
  const struct criu_seal *s = r->seal;
  struct cl_stub_call *c;
  char *data;
  if (s == NULL || s->ncalls == 0)
    return;
  c = (void *) take (cur, s->ncalls * sizeof *c);
  data = take (cur, s->data_len);
  memcpy (data, s->data, s->data_len);
  for (size_t i = 0; i < s->nrelocs; i++)
    {
      uint64_t v;
      memcpy (&v, data + s->relocs[i], 8);
      v += (uint64_t) (uintptr_t) data;
      memcpy (data + s->relocs[i], &v, 8);
    }
  for (size_t i = 0; i < s->ncalls; i++)
    {
      c[i].nr = s->calls[i].nr;
      c[i].ok_errno = s->calls[i].ok_errno;
      for (int k = 0; k < 6; k++)
        c[i].arg[k] = s->calls[i].arg[k]
                      + ((s->calls[i].ptr_args >> k) & 1
                             ? (int64_t) (uintptr_t) data : 0);
    }
  p->seal_off = (uint64_t) ((char *) c - (char *) p);
  p->nseal = (uint32_t) s->ncalls;
}

/* Pending signals, each to the thread it was queued to (by index: the
 * stub learns the tids it gets) or to the process. */
static void
fill_sigs (struct cl_restore *r, struct cl_plan *p, char **cur)
{
  const struct cl_image *img = r->img;
  size_t rec = cl_thread_rec_size (img->hdr.xstate_size);
  struct cl_stub_sig *s;
  if (img->nsigs == 0)
    return;
  s = (void *) take (cur, img->nsigs * sizeof *s);
  for (size_t i = 0; i < img->nsigs; i++)
    {
      s[i].thread = -1;
      for (uint32_t k = 0; img->sigs[i].tid && k < img->proc->nthreads; k++)
        if ((int32_t) ((const struct cl_thread *) (img->threads + k * rec))->tid
            == img->sigs[i].tid)
          s[i].thread = (int32_t) k;
      memcpy (&s[i].signo, img->sigs[i].info, sizeof s[i].signo);
      memcpy (s[i].info, img->sigs[i].info, sizeof s[i].info);
    }
  p->sig_off = (uint64_t) ((char *) s - (char *) p);
  p->nsig = (uint32_t) img->nsigs;
}

/* A run of a mapping of a shared object: read into the object by the
 * root restorer (restore-shm.c), not by the stub. */
static bool
in_shared_object (const struct cl_restore *r, const struct cl_run *run)
{
  const struct cl_image *img = r->img;
  for (size_t i = 0; i < img->nvmas; i++)
    if (run->addr >= img->vmas[i].start && run->addr < img->vmas[i].end)
      return img->vmas[i].kind == CL_VMA_ANON_SHARED && r->vma_fd[i] >= 0;
  return false;
}

static void
fill_plan (struct cl_restore *r)
{
  const struct cl_image *img = r->img;
  char *base = (char *) r->base, *cur = base + r->code_len;
  struct cl_plan *p = (void *) take (&cur, sizeof *p);
  struct cl_stub_vma *sv = (void *) take (&cur, img->nvmas * sizeof *sv);
  struct cl_run *runs = (void *) take (&cur, img->nruns * sizeof *runs);
  struct cl_stub_move *mv = (void *) take (&cur, 3 * sizeof *mv);
  uint32_t n = img->proc->nthreads;
  struct cl_stub_thread *st = (void *) take (&cur, n * sizeof *st);
  char *auxv = take (&cur, sizeof img->proc->auxv);
  uint64_t spare = r->base + r->code_len + r->data_len + r->stack_len;
  size_t rec = cl_thread_rec_size (img->hdr.xstate_size);

  r->plan = p;
  p->self_start = r->base;
  p->self_end = r->base + r->total;
  p->nvma = (uint32_t) img->nvmas;
  p->nrun = (uint32_t) img->nruns;
  p->nthread = n;
  p->vma_off = (uint64_t) ((char *) sv - (char *) p);
  p->run_off = (uint64_t) ((char *) runs - (char *) p);
  p->move_off = (uint64_t) ((char *) mv - (char *) p);
  p->thread_off = (uint64_t) ((char *) st - (char *) p);
  fill_vmas (r, sv);
  p->nrun = 0;
  for (size_t i = 0; i < img->nruns; i++)
    if (!in_shared_object (r, &img->runs[i]))
      runs[p->nrun++] = img->runs[i];
  for (int k = 0; k < 3; k++)
    if (r->cur[k].len)
      {
        mv[p->nmove].from = r->cur[k].addr;
        mv[p->nmove].len = r->cur[k].len;
        mv[p->nmove].spare = spare;
        mv[p->nmove].to = r->saved[k].addr;
        spare += r->cur[k].len;
        p->nmove++;
      }
  for (uint32_t i = 0; i < n; i++)
    {
      build_frame (r, (const void *) (img->threads + i * rec),
                   take (&cur, frame_size (img)), &st[i]);
      st[i].stack_lo = r->base + r->code_len + r->data_len + MAIN_STACK
                       + (uint64_t) (i ? i - 1 : 0) * THREAD_STACK;
      st[i].stack_len = THREAD_STACK;
    }
  memcpy (auxv, img->proc->auxv, img->proc->auxv_len);
  fill_seal (r, p, &cur);
  fill_sigs (r, p, &cur);
  p->unsealed = (int32_t) n;
  p->mm_map.mm = img->proc->mm;
  p->mm_map.auxv = (uint64_t) (uintptr_t) auxv;
  p->mm_map.auxv_size = img->proc->auxv_len;
  p->mm_map.exe_fd = (uint32_t) -1;
}

int
cl_restore_plan (struct cl_restore *r, struct cm_err **err)
{
  layout (r);
  if (place (r, err) < 0)
    return -1;
  memcpy ((void *) r->base, __start_cl_stub, stub_len ());
  if (mprotect ((void *) r->base, r->code_len, PROT_READ | PROT_EXEC) < 0)
    return cm_err_set (err, errno, "protect the restore stub");
  fill_plan (r);
  r->entry = r->base + ((uint64_t) (uintptr_t) cl_stub_entry
                        - (uint64_t) (uintptr_t) __start_cl_stub);
  r->stack_top = r->base + r->code_len + r->data_len + MAIN_STACK;
  return 0;
}
