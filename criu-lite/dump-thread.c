/* Per-thread state of a stopped process: general registers (fs/gs base
 * included), the XSAVE area, the signal mask.  A thread stopped inside an
 * interruptible syscall is recorded as about to re-issue it, which is what
 * the kernel would have done on resuming it without a handler. */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

#define CL_PTRACE_GET_RSEQ_CONFIGURATION 0x420f

struct cl_rseq_conf
{
  uint64_t ptr;
  uint32_t size, sig, flags, pad;
};

static void
normalize_restart (struct user_regs_struct *r)
{
  long rax = (long) r->rax;
  if ((long) r->orig_rax < 0)
    return;
  if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND
      || rax == -ERESTART_RESTARTBLOCK)
    {
      /* restart_block is not saved: a restarted sleep starts over. */
      r->rax = r->orig_rax;
      r->rip -= 2;  /* the 2-byte `syscall` */
    }
}

static int
dump_one (struct cl_dump *d, pid_t tid, char *xbuf, struct rt_err **err)
{
  struct cl_thread t;
  struct iovec iov = { xbuf, CL_XSTATE_MAX };

  memset (&t, 0, sizeof t);
  t.tid = (uint32_t) tid;
  if (ptrace (PTRACE_GETREGS, tid, NULL, &t.regs) < 0)
    return rt_err_set (err, errno, "thread %d: read registers", tid);
  normalize_restart (&t.regs);
  if (ptrace (PTRACE_GETSIGMASK, tid, (void *) sizeof t.sigmask, &t.sigmask) < 0)
    return rt_err_set (err, errno, "thread %d: read signal mask", tid);
  {
    struct cl_rseq_conf rc = { 0 };
    if (ptrace (CL_PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *) sizeof rc, &rc)
        == (long) sizeof rc)
      {
        t.rseq_addr = rc.ptr;
        t.rseq_len = rc.size;
        t.rseq_sig = rc.sig;
      }
  }
  memset (xbuf, 0, CL_XSTATE_MAX);
  if (ptrace (PTRACE_GETREGSET, tid, (void *) NT_X86_XSTATE, &iov) < 0)
    return rt_err_set (err, errno, "thread %d: read xstate", tid);
  if (iov.iov_len < 576 || (d->xstate_size && iov.iov_len != d->xstate_size))
    return rt_err_set (err, 0, "thread %d: xstate of %zu bytes", tid, iov.iov_len);
  d->xstate_size = (uint32_t) iov.iov_len;
  t.xstate_len = d->xstate_size;
  cl_buf_add (&d->threads, &t, sizeof t);
  cl_buf_add (&d->threads, xbuf, t.xstate_len);
  cl_buf_pad (&d->threads, 64);
  return 0;
}

int
cl_dump_threads (struct cl_dump *d, struct rt_err **err)
{
  _cleanup_free_ char *xbuf = xmalloc (CL_XSTATE_MAX);
  for (size_t i = 0; i < d->ntids; i++)
    if (dump_one (d, d->tids[i], xbuf, err) < 0)
      return -1;
  d->proc.nthreads = (uint32_t) d->ntids;
  return 0;
}
