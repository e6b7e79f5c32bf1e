/* The trap filter of the notify supervisor: a few lines of classic BPF,
 * built without libseccomp (it is tiny and fixed in shape).
 *
 * Stacked with the config's filter, it cannot weaken it: the kernel runs
 * every filter of a task and acts on the return value of highest
 * precedence (seccomp(2): KILL_PROCESS > KILL_THREAD > TRAP > ERRNO >
 * USER_NOTIF > TRACE > LOG > ALLOW), whatever the order of installation.
 * A system call the config kills or fails with ERRNO is killed or failed
 * without ever reaching the supervisor; only what the config allows (or
 * logs) is trapped here.  A config that asks for a listener of its own
 * (SCMP_ACT_NOTIFY, listenerPath) is refused at create: the kernel allows
 * one listener per filter tree (EBUSY). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "notify.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000U
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#endif

#define MAX_TRAPPED 250         /* BPF conditional jumps are 8-bit */

/* Any native call may be trapped: the init hands the listener over with
 * write and read, which nobody needs to trap (notify.c). */
static int
check_syscalls (const struct rt_notify_ops *ops, struct cm_err **err)
{
  if (ops->syscalls_len == 0 || ops->syscalls_len > MAX_TRAPPED)
    return cm_err_set (err, 0, "notify: %zu system calls to trap (1 to %d)",
                       ops->syscalls_len, MAX_TRAPPED);
  for (size_t i = 0; i < ops->syscalls_len; i++)
    {
      int nr = ops->syscalls[i];
      if (nr < 0 || nr >= 4096)
        return cm_err_set (err, 0, "notify: syscalls[%zu]: %d is not a "
                           "native system call number", i, nr);
    }
  return 0;
}

int
rt_notify_filter (const struct rt_notify_ops *ops, struct sock_filter **out,
                  size_t *len, struct cm_err **err)
{
#ifndef NATIVE_ARCH
  return cm_err_set (err, ENOSYS, "notify: no trap filter for this "
                     "architecture");
#else
  if (check_syscalls (ops, err) < 0)
    return -1;
  /* Layout: arch check, [x32 check], n JEQs, ALLOW, NOTIF, KILL. */
#ifdef X32_BIT
  size_t head = 4;
#else
  size_t head = 3;
#endif
  size_t n = ops->syscalls_len, k = 0, total = head + n + 3;
  size_t notif = head + n + 1, kill = notif + 1;
  struct sock_filter *f = xcalloc (total, sizeof *f);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                          offsetof (struct seccomp_data,
                                                    arch));
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          NATIVE_ARCH, 0,
                                          (unsigned char) (kill - 2));
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                          offsetof (struct seccomp_data, nr));
#ifdef X32_BIT
  /* Another ABI's numbers would pass the trap untouched: a process of the
   * container that uses one (i386's int 0x80 is caught by the arch check,
   * x32 here) is killed rather than left unsupervised. */
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, X32_BIT,
                                          (unsigned char) (kill - 4), 0);
#endif
  for (size_t i = 0; i < n; i++, k++)
    f[k] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned) ops->syscalls[i],
                                          (unsigned char) (notif - k - 1), 0);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                          SECCOMP_RET_USER_NOTIF);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                          SECCOMP_RET_KILL_PROCESS);
  *out = f;
  *len = total;
  return 0;
#endif
}
