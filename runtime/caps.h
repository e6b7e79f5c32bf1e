/* process.capabilities and the user switch (style §6.7): names validated
 * with libcap in the parent, applied raw in the child in one fixed order.
 * docs/security.md. */
#ifndef SANDLOCK_RUNTIME_CAPS_H
#define SANDLOCK_RUNTIME_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "config.h"

struct rt_caps_plan
{
  /* One bit per capability number; an absent set is empty (runtime-spec). */
  uint64_t bounding, effective, permitted, inheritable, ambient;
  int last_cap;                 /* /proc/sys/kernel/cap_last_cap */
  /* SECBIT_NOROOT(+LOCKED): set for uid 0 when execve would otherwise hand
   * root capabilities beyond the configured permitted set. */
  bool noroot;
};

/* Validates every name ("process.capabilities.bounding[3]: unknown
 * capability \"CAP_FOO\""), that effective and ambient fit in permitted
 * (and ambient in inheritable), and fills |out|.  |caps| may be NULL (all
 * sets empty).  |uid| is process.user.uid. */
int rt_caps_prepare (const struct rt_capabilities *caps, uint32_t uid,
                     struct rt_caps_plan *out, struct rt_err **err);

/* In the container process, raw syscalls only, in this order: bounding
 * drop, PR_SET_KEEPCAPS (+ securebits), setgroups + setresgid, setresuid,
 * capset (v3), ambient clear + raise, PR_SET_NO_NEW_PRIVS when
 * |no_new_privs|.  Must start with full capabilities. */
int rt_caps_child_apply (const struct rt_caps_plan *plan,
                         const struct rt_user *user, bool no_new_privs,
                         struct rt_err **err);

#endif
