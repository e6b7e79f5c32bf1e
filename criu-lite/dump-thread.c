/* Per-thread state of a stopped process: general registers (fs/gs base
 * included), the XSAVE area, the signal mask.  A thread stopped inside an
 * interruptible syscall is recorded as about to re-issue it, which is what
 * the kernel would have done on resuming it without a handler. */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#define CL_PTRACE_GET_RSEQ_CONFIGURATION 0x420f

struct cl_rseq_conf
{
  uint64_t ptr;
  uint32_t size, sig, flags, pad;
};

/* sigaltstack and clear_child_tid: only the thread itself can say. */
static int
ask_thread (struct cl_dump *d, size_t i, struct cl_thread *t, struct cm_err **err)
{
  long a[6] = { 0, (long) d->scratch, 0, 0, 0, 0 }, ret;
  uint64_t ss[3];
  if (cl_inject (d, i, SYS_sigaltstack, a, &ret, err) < 0)
    return -1;
  if (ret < 0 || cl_peek (d, d->scratch, ss, sizeof ss, err) < 0)
    return ret < 0 ? cm_err_set (err, (int) -ret, "thread %d: sigaltstack",
                                 d->tids[i]) : -1;
  t->altstack_sp = ss[0];
  t->altstack_flags = (int32_t) ss[1];
  t->altstack_size = ss[2];
  a[0] = PR_GET_TID_ADDRESS;
  a[1] = (long) d->scratch;
  if (cl_inject (d, i, SYS_prctl, a, &ret, err) < 0)
    return -1;
  if (ret < 0)
    return cm_err_set (err, (int) -ret, "thread %d: PR_GET_TID_ADDRESS",
                       d->tids[i]);
  return cl_peek (d, d->scratch, &t->tid_address, 8, err);
}

static int
dump_one (struct cl_dump *d, size_t i, char *xbuf, struct cm_err **err)
{
  pid_t tid = d->tids[i];
  struct cl_thread t;
  struct iovec iov = { xbuf, CL_XSTATE_MAX };

  memset (&t, 0, sizeof t);
  t.tid = (uint32_t) cl_ns_tid (d->pid, tid);
  t.regs = d->tr[i].orig;
  if (ask_thread (d, i, &t, err) < 0)
    return -1;
  cl_normalize_restart (&t.regs);
  if (ptrace (PTRACE_GETSIGMASK, tid, (void *) sizeof t.sigmask, &t.sigmask) < 0)
    return cm_err_set (err, errno, "thread %d: read signal mask", tid);
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
    return cm_err_set (err, errno, "thread %d: read xstate", tid);
  if (iov.iov_len < 576 || (d->xstate_size && iov.iov_len != d->xstate_size))
    return cm_err_set (err, 0, "thread %d: xstate of %zu bytes", tid, iov.iov_len);
  d->xstate_size = (uint32_t) iov.iov_len;
  t.xstate_len = d->xstate_size;
  cl_buf_add (&d->threads, &t, sizeof t);
  cl_buf_add (&d->threads, xbuf, t.xstate_len);
  cl_buf_pad (&d->threads, 64);
  return 0;
}

int
cl_dump_threads (struct cl_dump *d, struct cm_err **err)
{
  _cleanup_free_ char *xbuf = xmalloc (CL_XSTATE_MAX);
  for (size_t i = 0; i < d->ntids; i++)
    if (dump_one (d, i, xbuf, err) < 0)
      return -1;
  d->proc.nthreads = (uint32_t) d->ntids;
  return 0;
}

/* Signal actions and interval timers, asked through the main thread. */
int
cl_dump_signals (struct cl_dump *d, struct cm_err **err)
{
  long ret;
  for (int sig = 1; sig <= 64; sig++)
    {
      long a[6] = { sig, 0, (long) d->scratch, 8, 0, 0 };
      if (sig == SIGKILL || sig == SIGSTOP)
        continue;
      if (cl_inject (d, 0, SYS_rt_sigaction, a, &ret, err) < 0)
        return -1;
      if (ret < 0)
        return cm_err_set (err, (int) -ret, "process %d: read the action of "
                           "signal %d", d->pid, sig);
      if (cl_peek (d, d->scratch, d->proc.sigaction[sig - 1], 32, err) < 0)
        return -1;
    }
  for (int w = 0; w < 3; w++)
    {
      long a[6] = { w, (long) d->scratch, 0, 0, 0, 0 };
      if (cl_inject (d, 0, SYS_getitimer, a, &ret, err) < 0)
        return -1;
      if (ret < 0)
        return cm_err_set (err, (int) -ret, "process %d: getitimer %d", d->pid, w);
      if (cl_peek (d, d->scratch, d->proc.itimer[w], 32, err) < 0)
        return -1;
    }
  return 0;
}
