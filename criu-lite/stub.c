/* The restore stub: position-independent code that restore.c copies out of
 * section "cl_stub" into a mapping of its own, next to the plan, and jumps
 * to on a stack in that mapping.  From then on nothing of the restorer's
 * image exists: no libc, no globals, no string literals, no jump tables,
 * no sanitizer or stack-protector calls — only raw syscalls and the plan.
 *
 * Phases (the report value is phase << 16 | errno; the exit code on
 * failure is 120 + phase): 1 park vDSO/vvar, 2 unmap, 3 map, 4 read pages,
 * 5 protect, 6 place vDSO/vvar, 7 mm layout, 8 threads, 9 TLS/rseq,
 * 10 rt_sigreturn returned, 12 seal, 13 pending signals (11 is the
 * epolls' registrations, made by restore.c: CL_PHASE_EPOLL). */
#include <stdint.h>

#include "criu-lite/internal.h"

#if defined(__clang__)
#define CL_NOINSTR __attribute__ ((no_sanitize ("address", "undefined", "coverage")))
#else
#define CL_NOINSTR __attribute__ ((no_sanitize ("address", "undefined"),       \
                                   optimize ("no-tree-loop-distribute-patterns",     \
                                             "no-tree-vectorize",                  \
                                             "no-tree-slp-vectorize")))
#endif
#define STUB                                                                   \
  __attribute__ ((section ("cl_stub"), used, noinline, no_stack_protector,     \
                  no_instrument_function)) CL_NOINSTR
/* stub_thread_main is called by name from inline asm: no clone of it may
 * change its name or its arguments. */
#if defined(__clang__)
#define CL_NOIPA __attribute__ ((noinline))
#else
#define CL_NOIPA __attribute__ ((noipa))
#endif
#define INL static inline __attribute__ ((always_inline)) CL_NOINSTR

#define NR_read 0
#define NR_write 1
#define NR_close 3
#define NR_mmap 9
#define NR_mprotect 10
#define NR_munmap 11
#define NR_pread64 17
#define NR_madvise 28
#define NR_mremap 25
#define NR_exit 60
#define NR_arch_prctl 158
#define NR_prctl 157
#define NR_set_tid_address 218
#define NR_exit_group 231
#define NR_set_robust_list 273
#define NR_rseq 334
#define NR_clone 56
#define NR_clone3 435
#define NR_close_range 436
#define NR_rt_sigreturn 15
#define NR_futex 202
#define NR_getpid 39
#define NR_rt_sigqueueinfo 129
#define NR_rt_tgsigqueueinfo 297

INL long
sc (long n, long a, long b, long c, long d, long e, long f)
{
  register long r10 __asm__ ("r10") = d;
  register long r8 __asm__ ("r8") = e;
  register long r9 __asm__ ("r9") = f;
  long ret;
  __asm__ volatile ("syscall"
                    : "=a"(ret)
                    : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                    : "rcx", "r11", "memory");
  return ret;
}

INL void *
at (struct cl_plan *p, uint64_t off)
{
  return (char *) p + off;
}

static void STUB __attribute__ ((noreturn))
stub_fail (struct cl_plan *p, int phase, long ret)
{
  int32_t code = (int32_t) ((phase << 16) | (int) (-ret & 0xffff));
  if (p->report_fd >= 0)
    sc (NR_write, p->report_fd, (long) &code, 4, 0, 0, 0);
  for (;;)
    sc (NR_exit_group, 120 + phase, 0, 0, 0, 0, 0);
}

static void STUB
stub_move (struct cl_plan *p, int to_target)
{
  struct cl_stub_move *m = at (p, p->move_off);
  for (uint32_t i = 0; i < p->nmove; i++)
    {
      uint64_t from = to_target ? m[i].spare : m[i].from;
      uint64_t to = to_target ? m[i].to : m[i].spare;
      long r = sc (NR_mremap, (long) from, (long) m[i].len, (long) m[i].len,
                   3 /* MREMAP_MAYMOVE | MREMAP_FIXED */, (long) to, 0);
      if (r != (long) to)
        stub_fail (p, to_target ? 6 : 1, r < 0 ? r : -1);
    }
}

static void STUB
stub_map (struct cl_plan *p)
{
  struct cl_stub_vma *v = at (p, p->vma_off);
  for (uint32_t i = 0; i < p->nvma; i++)
    {
      long prot = v[i].prot | (v[i].has_pages ? 2 /* PROT_WRITE */ : 0);
      long r = sc (NR_mmap, (long) v[i].start, (long) v[i].len, prot,
                   v[i].mflags | 0x10 /* MAP_FIXED */, v[i].fd, (long) v[i].pgoff);
      if (r != (long) v[i].start)
        stub_fail (p, 3, r < 0 ? r : -1);
    }
}

static void STUB
stub_pages (struct cl_plan *p)
{
  struct cl_run *r = at (p, p->run_off);
  for (uint32_t i = 0; i < p->nrun; i++)
    {
      uint64_t done = 0;
      /* fault the run in with one call rather than one fault per page
       * inside pread (MADV_POPULATE_WRITE, 5.14; older kernels: EINVAL,
       * and pread faults them as before) */
      sc (NR_madvise, (long) r[i].addr, (long) r[i].len, 23, 0, 0, 0);
      while (done < r[i].len)
        {
          long n = sc (NR_pread64, p->pages_fd, (long) (r[i].addr + done),
                       (long) (r[i].len - done), (long) (r[i].off + done), 0, 0);
          if (n == -4 /* EINTR */)
            continue;
          if (n <= 0)
            stub_fail (p, 4, n < 0 ? n : -5 /* EIO */);
          done += (uint64_t) n;
        }
    }
}

static void STUB
stub_protect (struct cl_plan *p)
{
  struct cl_stub_vma *v = at (p, p->vma_off);
  for (uint32_t i = 0; i < p->nvma; i++)
    if (v[i].has_pages && !(v[i].prot & 2))
      {
        long r = sc (NR_mprotect, (long) v[i].start, (long) v[i].len, v[i].prot,
                     0, 0, 0);
        if (r < 0)
          stub_fail (p, 5, r);
      }
}

/* The caller's seal (criu.h), in this thread: the last confinement,
 * which would have forbidden building the tree (clone3 with set_tid). */
static void STUB
stub_seal (struct cl_plan *p)
{
  struct cl_stub_call *c = at (p, p->seal_off);
  for (uint32_t i = 0; i < p->nseal; i++)
    {
      long r = sc (c[i].nr, c[i].arg[0], c[i].arg[1], c[i].arg[2], c[i].arg[3],
                   c[i].arg[4], c[i].arg[5]);
      if (r < 0 && -r != c[i].ok_errno)
        stub_fail (p, 12, r);
    }
}

/* No thread runs saved code before every thread of the process is
 * sealed: the plan is in memory the saved code can write, and an
 * unsealed thread still reads its calls from there. */
static void STUB
stub_barrier (struct cl_plan *p)
{
  int32_t v;
  if (__atomic_sub_fetch (&p->unsealed, 1, __ATOMIC_SEQ_CST) == 0)
    {
      sc (NR_futex, (long) &p->unsealed, 129 /* FUTEX_WAKE_PRIVATE */,
          0x7fffffff, 0, 0, 0);
      return;
    }
  while ((v = __atomic_load_n (&p->unsealed, __ATOMIC_SEQ_CST)) != 0)
    sc (NR_futex, (long) &p->unsealed, 128 /* FUTEX_WAIT_PRIVATE */, v, 0, 0, 0);
}

/* Thread-local kernel state of the calling thread, the seal, then the
 * saved registers.  fs_base is not in the signal frame: glibc reads its
 * stack canary through %fs right after sigreturn.  The main thread
 * reports and closes the restorer's fds once it is sealed. */
static void STUB __attribute__ ((noreturn))
stub_resume (struct cl_plan *p, struct cl_stub_thread *t, int main_thread)
{
  int32_t zero = 0;
  long r;
  sc (NR_set_robust_list, 0, 24, 0, 0, 0, 0);
  sc (NR_set_tid_address, (long) t->tid_address, 0, 0, 0, 0, 0);
  r = sc (NR_arch_prctl, 0x1002 /* ARCH_SET_FS */, (long) t->fs_base, 0, 0, 0, 0);
  if (r == 0)
    r = sc (NR_arch_prctl, 0x1001 /* ARCH_SET_GS */, (long) t->gs_base, 0, 0, 0, 0);
  if (r == 0 && t->rseq_addr)
    r = sc (NR_rseq, (long) t->rseq_addr, t->rseq_len, 0, t->rseq_sig, 0, 0);
  if (r < 0)
    stub_fail (p, 9, r);
  stub_seal (p);
  if (main_thread)
    {
      if (p->report_fd >= 0)
        sc (NR_write, p->report_fd, (long) &zero, 4, 0, 0, 0);
      sc (NR_close_range, p->close_from, ~0u, 0, 0, 0, 0);
      p->report_fd = -1;
    }
  stub_barrier (p);
  __asm__ volatile ("mov %0, %%rsp\n\t"
                    "mov $15, %%eax\n\t"
                    "syscall"
                    :
                    : "r"(t->frame)
                    : "memory");
  stub_fail (p, 10, -1);
}

/* Entered by clone3 on the thread's stub stack with %rsp at the top of it:
 * the plan and the thread record were pushed there by stub_threads. */
static void STUB CL_NOIPA __attribute__ ((noreturn))
stub_thread_main (struct cl_plan *p, struct cl_stub_thread *t)
{
  stub_resume (p, t, 0);
}

/* clone3 (with set_tid when the saved tids can be had) or, where a
 * seccomp filter answers clone3 with ENOSYS, clone: the thread starts on
 * its stub stack, where the plan and its record were pushed. */
static long STUB
stub_clone (struct cl_plan *p, struct cl_stub_thread *t)
{
  struct cl_clone_args *a = &p->clone;
  uint64_t flags = 0x00000100 | 0x00000200 | 0x00000400 | 0x00000800
                   | 0x00010000 | 0x00040000;  /* VM FS FILES SIGHAND THREAD SYSVSEM */
  uint64_t *top = (uint64_t *) (t->stack_lo + t->stack_len);
  long r, nr = p->no_clone3 ? NR_clone : NR_clone3;
  long a0 = (long) a, a1 = sizeof *a;
  top[-1] = (uint64_t) (uintptr_t) t;
  top[-2] = (uint64_t) (uintptr_t) p;
  a->flags = flags;
  a->pidfd = a->child_tid = a->parent_tid = a->exit_signal = 0;
  a->stack = t->stack_lo;
  a->stack_size = t->stack_len - 16;
  a->tls = a->cgroup = 0;
  p->tid_scratch = t->tid;
  a->set_tid = p->use_set_tid ? (uint64_t) (uintptr_t) &p->tid_scratch : 0;
  a->set_tid_size = p->use_set_tid ? 1 : 0;
  if (p->no_clone3)
    {
      a0 = (long) flags;
      a1 = (long) (t->stack_lo + t->stack_len - 16);
    }
  {
    register long r10 __asm__ ("r10") = 0;
    register long r8 __asm__ ("r8") = 0;
    __asm__ volatile ("syscall\n\t"
                      "test %%rax, %%rax\n\t"
                      "jnz 1f\n\t"
                      "mov (%%rsp), %%rdi\n\t"
                      "mov 8(%%rsp), %%rsi\n\t"
                      "and $-16, %%rsp\n\t"
                      "call stub_thread_main\n\t"
                      "ud2\n"
                      "1:"
                      : "=a"(r)
                      : "a"(nr), "D"(a0), "S"(a1), "d"(0), "r"(r10), "r"(r8)
                      : "rcx", "r11", "memory");
  }
  return r;
}

static void STUB
stub_threads (struct cl_plan *p)
{
  struct cl_stub_thread *t = at (p, p->thread_off);
  for (uint32_t i = 1; i < p->nthread; i++)
    {
      long r = stub_clone (p, &t[i]);
      if (r == -38 /* ENOSYS */ && !p->no_clone3)
        {
          p->no_clone3 = 1;
          p->use_set_tid = 0;
          r = stub_clone (p, &t[i]);
        }
      if (r < 0)
        stub_fail (p, 8, r);
      t[i].tid = (int32_t) r;  /* the saved tid with set_tid */
    }
}

/* The signals pending at the checkpoint, queued again by the main
 * thread (the one whose tid is the process's: only it may queue a
 * kill()- or tgkill()-style siginfo to a sibling).  Every thread still
 * blocks everything: they stay pending until rt_sigreturn puts the saved
 * masks back. */
static void STUB
stub_signals (struct cl_plan *p)
{
  struct cl_stub_thread *t = at (p, p->thread_off);
  struct cl_stub_sig *s = at (p, p->sig_off);
  long pid = sc (NR_getpid, 0, 0, 0, 0, 0, 0);
  for (uint32_t i = 0; i < p->nsig; i++)
    {
      long r = s[i].thread < 0
                   ? sc (NR_rt_sigqueueinfo, pid, s[i].signo, (long) s[i].info,
                         0, 0, 0)
                   : sc (NR_rt_tgsigqueueinfo, pid, t[s[i].thread].tid,
                         s[i].signo, (long) s[i].info, 0, 0);
      if (r < 0)
        stub_fail (p, 13, r);
    }
}

void STUB __attribute__ ((noreturn))
cl_stub_entry (struct cl_plan *p)
{
  struct cl_stub_thread *main_thread = at (p, p->thread_off);
  long r;

  stub_move (p, 0);
  r = sc (NR_munmap, 0, (long) p->self_start, 0, 0, 0, 0);
  if (r == 0)
    r = sc (NR_munmap, (long) p->self_end, (long) (CL_TASK_TOP - p->self_end),
            0, 0, 0, 0);
  if (r < 0)
    stub_fail (p, 2, r);
  stub_map (p);
  stub_pages (p);
  stub_protect (p);
  stub_move (p, 1);
  r = sc (NR_prctl, 35 /* PR_SET_MM */, 14 /* PR_SET_MM_MAP */,
          (long) &p->mm_map, sizeof p->mm_map, 0, 0);
  if (r < 0)
    stub_fail (p, 7, r);
  /* the restorer's own parent-death signal is not the saved process's */
  sc (NR_prctl, 1 /* PR_SET_PDEATHSIG */, 0, 0, 0, 0, 0);
  stub_threads (p);
  stub_signals (p);
  stub_resume (p, main_thread, 1);
}
