/* nouserns: runs a command where user namespaces are unavailable, as on a
 * host that restricts them (Ubuntu 24.04's AppArmor default, hardened
 * kernels with user.max_user_namespaces=0): a seccomp filter, inherited by
 * everything the command starts, makes unshare(CLONE_NEWUSER) and
 * clone(CLONE_NEWUSER) fail with EPERM and clone3 with ENOSYS (its flags
 * are in memory a filter cannot read; libc falls back to clone).
 * tests/integration/nsless.bats runs the runtime under it.
 *
 *   nouserns CMD [ARGS...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR offsetof (struct seccomp_data, nr)
#define ARG0 offsetof (struct seccomp_data, args[0])
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

int
main (int argc, char **argv)
{
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, NR),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, ERR (ENOSYS)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG0),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, ERR (EPERM)),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof f / sizeof f[0], f };
  if (argc < 2)
    {
      fprintf (stderr, "usage: nouserns CMD [ARGS...]\n");
      return 2;
    }
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
    {
      perror ("nouserns: seccomp");
      return 2;
    }
  execvp (argv[1], argv + 1);
  perror ("nouserns: exec");
  return 127;
}
