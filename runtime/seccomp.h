/* seccomp for one container: linux.seccomp (or sandlock-oci's default
 * blocklist) compiled with libseccomp in the parent into a classic BPF
 * program; loaded with a raw seccomp(2) in the child.  Internal to
 * runtime/; the public face is runtime/confine.h.  docs/security.md. */
#ifndef SANDLOCK_RUNTIME_SECCOMP_H
#define SANDLOCK_RUNTIME_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"
#include "config.h"

struct rt_sc_prog
{
  struct sock_filter *insns;    /* NULL: no filter at all */
  size_t len;
  unsigned flags;               /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
  bool is_default;              /* sandlock-oci's own blocklist */
  bool notify;                  /* some rule is SCMP_ACT_NOTIFY */
  bool nnp;                     /* process.noNewPrivileges */
  bool keeps_sys_admin;         /* CAP_SYS_ADMIN stays effective */
  int listener_sock;            /* connected to listenerPath; -1 */
  /* containerProcessState around the two pid fields, built in the parent
   * so the child only writes digits: head PID mid PID tail. */
  char *state_head, *state_mid, *state_tail;
  char *state_parts;            /* version \0 metadata \0 annotations (JSON) */
  pid_t host_pid;               /* 0: the child uses getpid() */
};

/* One entry of the default blocklist, for docs and tests. */
struct rt_sc_block
{
  const char *name;
  int errno_;
  bool unless_privileged;       /* allowed when CAP_SYS_ADMIN is bounded */
  const char *reason;
};

/* The default blocklist (NULL-name terminated). */
extern const struct rt_sc_block rt_sc_default_blocklist[];

/* Compiles c->seccomp or, when absent and |default_disabled| is false, the
 * default blocklist.  Unknown syscall names are skipped; every other bad
 * value fails naming its JSON path.  Connects to listenerPath when the
 * profile notifies. */
int rt_sc_compile (const struct rt_config *c, bool default_disabled,
                   struct rt_sc_prog *out, struct cm_err **err);

/* True when the filter must be loaded before the capability drop: without
 * no_new_privs seccomp(2) needs CAP_SYS_ADMIN, which the drop removes. */
bool rt_sc_needs_early_load (const struct rt_sc_prog *p);

/* Records id/bundle/annotations for the listener's state (parent side). */
void rt_sc_set_state (struct rt_sc_prog *p, const char *id,
                      const char *bundle);

/* Child: loads the program with raw seccomp(2); with a listener, sends the
 * listener fd and the state over listener_sock.  |status| is the state's
 * "status".  Idempotent within one process. */
int rt_sc_child_load (const struct rt_sc_prog *p, const char *status,
                      struct cm_err **err);

void rt_sc_prog_clear (struct rt_sc_prog *p);

/* Compiled-profile cache (runtime/seccomp-cache.c).  |dir| NULL disables
 * it.  load: 1 and p->insns/len/flags/notify set on a hit, 0 on a miss. */
void rt_sc_cache_set_dir (const char *dir);
int rt_sc_cache_load (const struct rt_seccomp *s, struct rt_sc_prog *p);
void rt_sc_cache_store (const struct rt_seccomp *s, const struct rt_sc_prog *p);

#endif
