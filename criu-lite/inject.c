/* Syscall injection into a stopped thread, for what a process can only
 * tell about itself (signal actions, sigaltstack, clear_child_tid,
 * itimers).  The thread is pointed at a `syscall` instruction of its own
 * vDSO and run from syscall-entry to syscall-exit stop under
 * PTRACE_SYSCALL; nothing of its memory is written.  Results land in a
 * scratch page mapped (and unmapped again) by an injected mmap.  Put back
 * afterwards: the registers as seized, except that a thread caught inside
 * an interruptible syscall is set to re-issue it — what the kernel itself
 * would have done on resuming it. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/internal.h"

#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

void
cl_normalize_restart (struct user_regs_struct *r)
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
wait_syscall_stop (struct cl_dump *d, size_t t, struct cm_err **err)
{
  pid_t tid = d->tids[t];
  int st;
  for (;;)
    {
      if (waitpid (tid, &st, __WALL) < 0)
        {
          if (errno == EINTR)
            continue;
          return cm_err_set (err, errno, "thread %d: wait during injection", tid);
        }
      if (!WIFSTOPPED (st))
        return cm_err_set (err, 0, "thread %d died during injection", tid);
      if (WSTOPSIG (st) == (SIGTRAP | 0x80))
        return 0;
      /* A signal for the thread: hold it, re-send it when letting go. */
      if ((st >> 16) == 0 && WSTOPSIG (st) != SIGTRAP)
        d->tr[t].held_signal = WSTOPSIG (st);
      if (ptrace (PTRACE_SYSCALL, tid, NULL, NULL) < 0)
        return cm_err_set (err, errno, "thread %d: resume during injection", tid);
    }
}

int
cl_inject (struct cl_dump *d, size_t t, long nr, const long a[6], long *ret,
           struct cm_err **err)
{
  pid_t tid = d->tids[t];
  struct user_regs_struct r = d->tr[t].orig;

  r.rip = d->syscall_ip;
  r.rax = (unsigned long long) nr;
  r.orig_rax = (unsigned long long) -1;  /* no restart fix-ups on resume */
  r.rdi = (unsigned long long) a[0], r.rsi = (unsigned long long) a[1];
  r.rdx = (unsigned long long) a[2], r.r10 = (unsigned long long) a[3];
  r.r8 = (unsigned long long) a[4], r.r9 = (unsigned long long) a[5];
  d->tr[t].touched = true;
  if (ptrace (PTRACE_SETREGS, tid, NULL, &r) < 0
      || ptrace (PTRACE_SYSCALL, tid, NULL, NULL) < 0)
    return cm_err_set (err, errno, "thread %d: inject syscall %ld", tid, nr);
  if (wait_syscall_stop (d, t, err) < 0)
    return -1;
  if (ptrace (PTRACE_SYSCALL, tid, NULL, NULL) < 0)
    return cm_err_set (err, errno, "thread %d: inject syscall %ld", tid, nr);
  if (wait_syscall_stop (d, t, err) < 0)
    return -1;
  if (ptrace (PTRACE_GETREGS, tid, NULL, &r) < 0)
    return cm_err_set (err, errno, "thread %d: injected syscall %ld result", tid, nr);
  *ret = (long) r.rax;
  return 0;
}

int
cl_peek (struct cl_dump *d, uint64_t addr, void *out, size_t n,
         struct cm_err **err)
{
  struct iovec local = { out, n }, remote = { (void *) addr, n };
  if (process_vm_readv (d->pid, &local, 1, &remote, 1, 0) != (ssize_t) n)
    return cm_err_set (err, errno, "read %zu bytes of process %d at %#llx", n,
                       d->pid, (unsigned long long) addr);
  return 0;
}

static int
find_syscall (struct cl_dump *d, struct cm_err **err)
{
  _cleanup_free_ unsigned char *v = xmalloc (d->proc.vdso_len);
  if (cl_peek (d, d->proc.vdso, v, d->proc.vdso_len, err) < 0)
    return -1;
  for (uint64_t i = 0; i + 1 < d->proc.vdso_len; i++)
    if (v[i] == 0x0f && v[i + 1] == 0x05)
      {
        d->syscall_ip = d->proc.vdso + i;
        return 0;
      }
  return cm_err_set (err, 0, "no syscall instruction in the vDSO of %d", d->pid);
}

int
cl_inject_prepare (struct cl_dump *d, struct cm_err **err)
{
  long a[6] = { 0, (long) CL_PAGE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 };
  long ret;
  if (find_syscall (d, err) < 0 || cl_inject (d, 0, SYS_mmap, a, &ret, err) < 0)
    return -1;
  if (ret < 0 && ret > -4096)
    return cm_err_set (err, (int) -ret, "process %d: map a scratch page", d->pid);
  d->scratch = (uint64_t) ret;
  return 0;
}

/* Scratch page gone, registers put back; called before detaching. */
void
cl_inject_finish (struct cl_dump *d)
{
  if (d->scratch && d->ntids)
    {
      long a[6] = { (long) d->scratch, (long) CL_PAGE, 0, 0, 0, 0 }, ret;
      struct cm_err *e = NULL;
      cl_inject (d, 0, SYS_munmap, a, &ret, &e);
      cm_err_free (&e);
      d->scratch = 0;
    }
  for (size_t t = 0; t < d->ntids; t++)
    if (d->tr && d->tr[t].touched)
      {
        struct user_regs_struct r = d->tr[t].orig;
        cl_normalize_restart (&r);
        r.orig_rax = (unsigned long long) -1;
        ptrace (PTRACE_SETREGS, d->tids[t], NULL, &r);
      }
}
