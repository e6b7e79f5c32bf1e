/* Pending signals: what is queued to each thread and to the process,
 * read with PTRACE_PEEKSIGINFO (nothing is dequeued: --leave-running
 * leaves them pending), plus a signal an injection caught and holds for
 * the thread (inject.c).  Restore queues them again (stub.c); image.c
 * checks the section. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "criu-lite/internal.h"

#ifndef PTRACE_PEEKSIGINFO
#define PTRACE_PEEKSIGINFO 0x4209
#endif
#ifndef PTRACE_PEEKSIGINFO_SHARED
#define PTRACE_PEEKSIGINFO_SHARED 1
#endif

struct peek_args
{
  uint64_t off;
  uint32_t flags;
  int32_t nr;
};

static int
peek_queue (struct cl_dump *d, pid_t tid, int32_t ns_tid, uint32_t flags,
            struct cm_err **err)
{
  siginfo_t si[32];
  struct peek_args a = { 0, flags, 32 };
  for (;;)
    {
      long n = ptrace (PTRACE_PEEKSIGINFO, tid, &a, si);
      if (n < 0)
        return cm_err_set (err, errno, "thread %d: read its pending signals", tid);
      if (n == 0)
        return 0;
      for (long i = 0; i < n; i++)
        {
          struct cl_sigpend p = { .tid = ns_tid };
          if (si[i].si_signo == SIGKILL || si[i].si_signo == SIGSTOP)
            continue;
          memcpy (p.info, &si[i], sizeof p.info);
          cl_buf_add (&d->sigs, &p, sizeof p);
          if (d->sigs.len / sizeof p > CL_SIGPEND_MAX)
            return cm_err_set (err, 0, "more than %u pending signals",
                               CL_SIGPEND_MAX);
        }
      a.off += (uint64_t) n;
    }
}

int
cl_dump_pending (struct cl_dump *d, struct cm_err **err)
{
  for (size_t i = 0; i < d->ntids; i++)
    {
      int32_t ns = cl_ns_tid (d->pid, d->tids[i]);
      if (peek_queue (d, d->tids[i], ns, 0, err) < 0)
        return -1;
      if (d->tr[i].held_signal)
        {
          /* caught while injecting: as if sent by tgkill */
          struct cl_sigpend p = { .tid = ns };
          siginfo_t si;
          memset (&si, 0, sizeof si);
          si.si_signo = d->tr[i].held_signal;
          si.si_code = SI_TKILL;
          memcpy (p.info, &si, sizeof p.info);
          cl_buf_add (&d->sigs, &p, sizeof p);
        }
    }
  return peek_queue (d, d->tids[0], 0, PTRACE_PEEKSIGINFO_SHARED, err);
}
