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
#define MAX_DENY 16
#define MAX_DENY_NE 24
/* The low 32 bits of args[0] (every architecture here is little-endian). */
#define ARG0_LO offsetof (struct seccomp_data, args[0])
#define ARG_LO(i) (offsetof (struct seccomp_data, args) + 8 * (size_t) (i))
_Static_assert (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "ARG0_LO is the low word on little-endian machines only");

static struct sock_filter
load_nr (void)
{
  return (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                        offsetof (struct seccomp_data, nr));
}

static int
check_deny (const struct rt_notify_ops *ops, struct cm_err **err)
{
  if (ops->deny_len > MAX_DENY || (ops->deny_len && !ops->deny))
    return cm_err_set (err, 0, "notify: %zu calls to deny (0 to %d)",
                       ops->deny_len, MAX_DENY);
  for (size_t i = 0; i < ops->deny_len; i++)
    {
      const struct rt_notify_deny *d = &ops->deny[i];
      if (d->nr < 0 || d->nr >= 4096 || d->errno_ <= 0 || d->errno_ > 4095)
        return cm_err_set (err, 0, "notify: deny[%zu]: call %d, errno %d",
                           i, d->nr, d->errno_);
    }
  return 0;
}

static int
check_deny_ne (const struct rt_notify_ops *ops, struct cm_err **err)
{
  if (ops->deny_ne_len > MAX_DENY_NE || (ops->deny_ne_len && !ops->deny_ne))
    return cm_err_set (err, 0, "notify: %zu calls to deny by argument (0 to "
                       "%d)", ops->deny_ne_len, MAX_DENY_NE);
  for (size_t i = 0; i < ops->deny_ne_len; i++)
    {
      const struct rt_notify_deny_ne *d = &ops->deny_ne[i];
      if (d->nr < 0 || d->nr >= 4096 || d->arg > 5 || d->errno_ < 0
          || d->errno_ > 4095)
        return cm_err_set (err, 0, "notify: deny_ne[%zu]: call %d, "
                           "argument %u, errno %d", i, d->nr,
                           (unsigned) d->arg, d->errno_);
    }
  return 0;
}

/* One deny_ne entry at f[k]: its number, its argument's low word
 * compared and the number loaded back, the error (errno 0: the trap to
 * the supervisor).  Returns the index after it. */
static size_t
deny_ne_block (struct sock_filter *f, size_t k,
               const struct rt_notify_deny_ne *d)
{
  uint32_t ret = d->errno_ == 0 ? SECCOMP_RET_USER_NOTIF
                 : SECCOMP_RET_ERRNO | ((uint32_t) d->errno_ & SECCOMP_RET_DATA);
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned) d->nr, 0, 4);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                          ARG_LO (d->arg));
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          d->value, 1, 0);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, ret);
  f[k++] = load_nr ();
  return k;
}

/* One deny entry at f[k]: its number, [its first argument's low word
 * (the flags of clone and unshare) tested and the number loaded back],
 * the error.  Returns the index after it. */
static size_t
deny_block (struct sock_filter *f, size_t k, const struct rt_notify_deny *d)
{
  uint32_t ret = SECCOMP_RET_ERRNO | ((uint32_t) d->errno_ & SECCOMP_RET_DATA);
  if (!d->arg0_any)
    {
      f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                              (unsigned) d->nr, 0, 1);
      f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, ret);
      return k;
    }
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned) d->nr, 0, 4);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                          ARG0_LO);
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K,
                                          d->arg0_any, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, ret);
  f[k++] = load_nr ();
  return k;
}

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
  if (check_syscalls (ops, err) < 0 || check_deny (ops, err) < 0
      || check_deny_ne (ops, err) < 0)
    return -1;
  /* Layout: arch check and its KILL, [x32 check and its KILL], the deny
   * blocks, n JEQs, ALLOW, NOTIF.  Each KILL sits next to its check and
   * every jump is forward and short (BPF's are 8-bit). */
  size_t n = ops->syscalls_len, k = 0, total = 4 + n + 2;
#ifdef X32_BIT
  total += 2;
#endif
  for (size_t i = 0; i < ops->deny_len; i++)
    total += ops->deny[i].arg0_any ? 5 : 2;
  total += 5 * ops->deny_ne_len;
  size_t notif = total - 1;
  struct sock_filter *f = xcalloc (total, sizeof *f);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                          offsetof (struct seccomp_data,
                                                    arch));
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          NATIVE_ARCH, 1, 0);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                          SECCOMP_RET_KILL_PROCESS);
  f[k++] = load_nr ();
#ifdef X32_BIT
  /* Another ABI's numbers would pass the trap untouched: a process of the
   * container that uses one (i386's int 0x80 is caught by the arch check,
   * x32 here) is killed rather than left unsupervised. */
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, X32_BIT,
                                          0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                          SECCOMP_RET_KILL_PROCESS);
#endif
  for (size_t i = 0; i < ops->deny_len; i++)
    k = deny_block (f, k, &ops->deny[i]);
  for (size_t i = 0; i < ops->deny_ne_len; i++)
    k = deny_ne_block (f, k, &ops->deny_ne[i]);
  for (size_t i = 0; i < n; i++, k++)
    f[k] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                          (unsigned) ops->syscalls[i],
                                          (unsigned char) (notif - k - 1), 0);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                          SECCOMP_RET_USER_NOTIF);
  *out = f;
  *len = total;
  return 0;
#endif
}
