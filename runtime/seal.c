/* RT_PAYLOAD_FN_SEAL (runtime.h): the container's confinement that a
 * normal start applies in the init before execve — groups, ids, bounding
 * set, securebits, capabilities, ambient set, no_new_privs, the seccomp
 * filter — written down as raw system calls, for a payload that must make
 * them itself in every thread it creates (docs/architecture.md "Payload").
 * The same calls, in the same order, as rt_caps_child_apply and
 * rt_sc_child_load; built in the init before Landlock. */
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "seal.h"
#include "seccomp.h"

#define CAP_BIT(c) (1ULL << (c))
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

struct build
{
  struct rt_seal pub;
  struct rt_seal_call *calls[2];
  size_t ncalls[2];
  char *data;
  size_t len;
  size_t *relocs;
  size_t nrelocs;
};

/* |len| bytes appended at an 8-byte boundary: their offset. */
static long
add_data (struct build *b, const void *p, size_t len)
{
  size_t off = (b->len + 7) & ~(size_t) 7;
  b->data = xrealloc (b->data, off + len + 8);
  memset (b->data + b->len, 0, off - b->len);
  memcpy (b->data + off, p, len);
  b->len = off + len;
  return (long) off;
}

static void
add_call (struct build *b, int list, long nr, long a0, long a1, long a2,
          unsigned ptr_args, int ok_errno)
{
  struct rt_seal_call *c;
  b->calls[list] = xrealloc (b->calls[list],
                             (b->ncalls[list] + 1) * sizeof **b->calls);
  c = &b->calls[list][b->ncalls[list]++];
  memset (c, 0, sizeof *c);
  c->nr = nr;
  c->arg[0] = a0, c->arg[1] = a1, c->arg[2] = a2;
  c->ptr_args = ptr_args;
  c->ok_errno = ok_errno;
}

enum { NARROW, SEAL };

/* The permitted (and effective) set an execve of a plain file — no file
 * capabilities, not set-id — leaves after the start's capset
 * (cap_bprm_creds_from_file): root, unless SECBIT_NOROOT, gets its
 * inheritable and bounding sets; anyone else its ambient set.  A sealed
 * payload never execs: without this a non-root container process would
 * keep the configured permitted set, which its execve drops. */
static uint64_t
after_exec (const struct rt_process *pr, uint64_t bnd, uint64_t prm,
            uint64_t inh, uint64_t amb, bool noroot)
{
  if (pr->user.uid == 0 && !noroot)
    return (inh | bnd) & prm;
  return amb & prm;
}

static void
add_capset (struct build *b, int list, uint64_t eff, uint64_t prm, uint64_t inh)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2] = {
    { (uint32_t) eff, (uint32_t) prm, (uint32_t) inh },
    { (uint32_t) (eff >> 32), (uint32_t) (prm >> 32), (uint32_t) (inh >> 32) },
  };
  long ho = add_data (b, &h, sizeof h), dof = add_data (b, d, sizeof d);
  add_call (b, list, SYS_capset, ho, dof, 0, 3, 0);
}

static void
add_groups (struct build *b, int list, const struct rt_user *u)
{
  long g = add_data (b, u->additional_gids ? (const void *) u->additional_gids
                                           : (const void *) "",
                     u->additional_gids_len * sizeof (uint32_t));
  /* a user namespace with setgroups denied: nothing to drop when no
   * groups were asked for (rt_caps_child_apply) */
  add_call (b, list, SYS_setgroups, (long) u->additional_gids_len, g, 0, 2,
            u->additional_gids_len ? 0 : EPERM);
}

/* The fs ids, groups and effective set of the container, CAP_SYS_ADMIN
 * kept effective and the permitted set kept whole so that the seal can
 * still run: what a process opening files for the container holds. */
static int
build_narrow (struct build *b, uint64_t eff, const struct rt_user *u,
              struct cm_err **err)
{
  /* |eff|: the effective set the container's process starts with */
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2];
  uint64_t prm, inh;
  if (syscall (SYS_capget, &h, d) < 0)
    return cm_err_set (err, errno, "capget");
  prm = d[0].permitted | (uint64_t) d[1].permitted << 32;
  inh = d[0].inheritable | (uint64_t) d[1].inheritable << 32;
  /* the seal starts from the setup's effective set again: dropping from
   * the bounding set and setting securebits need CAP_SETPCAP */
  add_capset (b, SEAL, prm, prm, inh);
  add_groups (b, NARROW, u);
  add_call (b, NARROW, SYS_setfsgid, u->gid, 0, 0, 0, 0);
  add_call (b, NARROW, SYS_setfsuid, u->uid, 0, 0, 0, 0);
  add_capset (b, NARROW, (eff | CAP_BIT (CAP_SYS_ADMIN)) & prm, prm, inh);
  return 0;
}

static void
add_seccomp (struct build *b, const struct rt_sc_prog *sc)
{
  struct
  {
    uint64_t len;             /* unsigned short, padded */
    uint64_t filter;          /* offset of the insns: relocated */
  } prog = { sc->len, 0 };
  unsigned flags = sc->flags & ~(unsigned) (SECCOMP_FILTER_FLAG_TSYNC
                                            | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
  long insns = add_data (b, sc->insns, sc->len * sizeof *sc->insns);
  long po;
  prog.filter = (uint64_t) insns;
  po = add_data (b, &prog, sizeof prog);
  b->relocs = xrealloc (b->relocs, (b->nrelocs + 1) * sizeof *b->relocs);
  b->relocs[b->nrelocs++] = (size_t) po + 8;
  /* every thread loads its own copy: TSYNC is not needed */
  add_call (b, SEAL, SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, po, 4, 0);
}

/* rt_caps_child_apply's order, the filter before it when it cannot wait
 * for the drop (rt_sc_needs_early_load), after it otherwise. */
static void
build_seal (struct build *b, const struct rt_plan *p)
{
  const struct rt_process *pr = p->c->process;
  const struct rt_sc_prog *sc = rt_confine_seccomp_prog (p->confine);
  bool early = rt_sc_needs_early_load (sc), noroot;
  uint64_t bnd, eff, prm, inh, amb;
  rt_caps_plan_masks (p->caps, &bnd, &eff, &prm, &inh, &amb, &noroot);
  if (early)
    add_seccomp (b, sc);
  for (int c = 0; c < 64; c++)
    if (!(bnd & CAP_BIT (c)))
      add_call (b, SEAL, SYS_prctl, PR_CAPBSET_DROP, c, 0, 0, EINVAL);
  add_call (b, SEAL, SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0);
  if (noroot)
    add_call (b, SEAL, SYS_prctl, PR_SET_SECUREBITS,
              SECBIT_KEEP_CAPS | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0);
  add_groups (b, SEAL, &pr->user);
  add_call (b, SEAL, SYS_setresgid, pr->user.gid, pr->user.gid, pr->user.gid,
            0, 0);
  add_call (b, SEAL, SYS_setresuid, pr->user.uid, pr->user.uid, pr->user.uid,
            0, 0);
  add_capset (b, SEAL, eff, prm, inh);
  add_call (b, SEAL, SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0,
            amb ? 0 : EINVAL);
  for (int c = 0; c < 64; c++)
    if (amb & CAP_BIT (c))
      add_call (b, SEAL, SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0);
  /* as the execve that a sealed payload does not make would leave them */
  {
    uint64_t ex = after_exec (pr, bnd, prm, inh, amb, noroot);
    add_capset (b, SEAL, ex, ex, inh);
    if (pr->user.uid == 0 && !noroot)
      add_call (b, SEAL, SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL,
                0, 0, EINVAL);
  }
  if (pr->no_new_privileges)
    add_call (b, SEAL, SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (!early && sc->insns)
    add_seccomp (b, sc);
}

int
rt_seal_build (const struct rt_plan *p, const struct rt_seal **out,
               struct cm_err **err)
{
  const struct rt_sc_prog *sc = rt_confine_seccomp_prog (p->confine);
  struct build *b;
  uint64_t bnd, eff, prm, inh, amb;
  bool noroot;
  if (sc->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
    return cm_err_set (err, 0, "linux.seccomp.listenerPath: not supported by "
                       "this payload (its filter is loaded by every restored "
                       "thread, and one listener cannot be handed over for "
                       "each)");
  b = xcalloc (1, sizeof *b);
  rt_caps_plan_masks (p->caps, &bnd, &eff, &prm, &inh, &amb, &noroot);
  eff = after_exec (p->c->process, bnd, prm, inh, amb, noroot);
  if (build_narrow (b, eff, &p->c->process->user, err) < 0)
    return -1;
  build_seal (b, p);
  b->pub.narrow = (struct rt_seal_list) { b->calls[NARROW], b->ncalls[NARROW] };
  b->pub.seal = (struct rt_seal_list) { b->calls[SEAL], b->ncalls[SEAL] };
  b->pub.data = b->data;
  b->pub.data_len = b->len;
  b->pub.relocs = b->relocs;
  b->pub.nrelocs = b->nrelocs;
  *out = &b->pub;
  return 0;
}
