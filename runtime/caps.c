/* Capabilities and the user switch.  See runtime/caps.h and style §6.7. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "common/util.h"

#define BIT(c) (1ULL << (c))

struct rt_caps_plan
{
  /* One bit per capability number; an absent set is empty (runtime-spec). */
  uint64_t bounding, effective, permitted, inheritable, ambient;
  int last_cap;                 /* /proc/sys/kernel/cap_last_cap */
  /* SECBIT_NOROOT(+LOCKED): set for uid 0 when execve would otherwise hand
   * root capabilities beyond the configured permitted set. */
  bool noroot;
};

static int
read_last_cap (void)
{
  static int cached = -1;
  if (cached < 0)
    {
      char *s = NULL;
      size_t len;
      cached = CAP_LAST_CAP;
      if (cm_read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &s,
                           &len, NULL) == 0)
        {
          int v = atoi (s);
          if (v > 0 && v < 64)
            cached = v;
        }
      free (s);
    }
  return cached;
}

static int
parse_set (const char *set, char **names, size_t n, int last_cap,
           uint64_t *out, struct cm_err **err)
{
  *out = 0;
  for (size_t i = 0; i < n; i++)
    {
      cap_value_t v;
      if (!cm_startswith (names[i], "CAP_") || cap_from_name (names[i], &v) < 0
          || v < 0 || v > 63)
        return cm_err_set (err, 0, "process.capabilities.%s[%zu]: unknown "
                           "capability \"%s\"", set, i, names[i]);
      /* Known to libcap, unknown to this kernel: nothing to grant (runc). */
      if (v <= last_cap)
        *out |= BIT (v);
    }
  return 0;
}

static const char *
first_cap_name (uint64_t m, char *buf, size_t len)
{
  for (int c = 0; c < 64; c++)
    if (m & BIT (c))
      {
        char *n = cap_to_name (c);
        snprintf (buf, len, "%s", n ? n : "?");
        cap_free (n);
        for (char *p = buf; *p; p++)
          if (*p >= 'a' && *p <= 'z')
            *p = (char) (*p - 'a' + 'A');
        return buf;
      }
  return "?";
}

int
rt_caps_prepare (const struct rt_process *pr, struct rt_caps_plan **out,
                 struct cm_err **err)
{
  const struct rt_capabilities *caps = pr ? pr->capabilities : NULL;
  uint32_t uid = pr ? pr->user.uid : 0;
  struct rt_caps_plan p = { .last_cap = read_last_cap () };
  char name[64];

  if (caps
      && (parse_set ("bounding", caps->bounding, caps->bounding_len,
                     p.last_cap, &p.bounding, err) < 0
          || parse_set ("effective", caps->effective, caps->effective_len,
                        p.last_cap, &p.effective, err) < 0
          || parse_set ("permitted", caps->permitted, caps->permitted_len,
                        p.last_cap, &p.permitted, err) < 0
          || parse_set ("inheritable", caps->inheritable,
                        caps->inheritable_len, p.last_cap, &p.inheritable,
                        err) < 0
          || parse_set ("ambient", caps->ambient, caps->ambient_len,
                        p.last_cap, &p.ambient, err) < 0))
    return -1;
  if (p.effective & ~p.permitted)
    return cm_err_set (err, 0, "process.capabilities.effective: %s is not "
                       "in the permitted set",
                       first_cap_name (p.effective & ~p.permitted, name,
                                       sizeof name));
  if (p.ambient & ~(p.permitted & p.inheritable))
    return cm_err_set (err, 0, "process.capabilities.ambient: %s must also "
                       "be in permitted and inheritable",
                       first_cap_name (p.ambient & ~(p.permitted
                                                     & p.inheritable),
                                       name, sizeof name));
  /* execve as uid 0 sets permitted to inheritable | bounding (the file is
   * treated as fully capable).  When that is more than configured, only
   * SECBIT_NOROOT keeps "no capabilities" true across the exec. */
  p.noroot = uid == 0 && ((p.bounding | p.inheritable) & ~p.permitted) != 0;
  /* Under NOROOT nothing survives execve but ambient capabilities, so the
   * configured permitted set rides across as inheritable+ambient: the
   * program then holds exactly the permitted set (and effective, which
   * execve makes equal to it for a non-capability-aware binary). */
  if (p.noroot)
    {
      p.inheritable |= p.permitted;
      p.ambient |= p.permitted;
    }
  *out = xmalloc (sizeof p);
  **out = p;
  return 0;
}

void
rt_caps_free (struct rt_caps_plan *cp)
{
  free (cp);
}

void
rt_caps_plan_masks (const struct rt_caps_plan *cp, uint64_t *bounding,
                    uint64_t *effective, uint64_t *permitted,
                    uint64_t *inheritable, uint64_t *ambient, bool *noroot)
{
  *bounding = cp->bounding;
  *effective = cp->effective;
  *permitted = cp->permitted;
  *inheritable = cp->inheritable;
  *ambient = cp->ambient;
  *noroot = cp->noroot;
}

/* True when this process's supplementary groups are exactly |u|'s (in
 * order: what setgroups would set). */
static bool
same_groups (const struct rt_user *u)
{
  gid_t cur[64];
  int n = getgroups (ARRAY_SIZE (cur), cur);
  if (n < 0 || (size_t) n != u->additional_gids_len)
    return false;
  for (int i = 0; i < n; i++)
    if (cur[i] != u->additional_gids[i])
      return false;
  return true;
}

static int
set_ids (const struct rt_user *u, struct cm_err **err)
{
  /* setgroups needs CAP_SETGID even to set the same list: a namespace-less
   * exec's process may not have it (its groups are already these). */
  if (!same_groups (u)
      && setgroups (u->additional_gids_len,
                    (const gid_t *) u->additional_gids) < 0)
    {
      /* A user namespace with setgroups denied: nothing to drop when no
       * groups were asked for. */
      if (!(errno == EPERM && u->additional_gids_len == 0))
        return cm_err_set (err, errno, "process.user.additionalGids: "
                           "setgroups");
    }
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return cm_err_set (err, errno, "process.user.gid: setresgid(%u)", u->gid);
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return cm_err_set (err, errno, "process.user.uid: setresuid(%u)", u->uid);
  return 0;
}

static bool
has_noroot (void)
{
  int sb = prctl (PR_GET_SECUREBITS, 0, 0, 0, 0);
  unsigned want = SECBIT_KEEP_CAPS | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED;
  return sb >= 0 && ((unsigned) sb & want) == want;
}

int
rt_caps_child_apply (const struct rt_caps_plan *p, const struct rt_user *u,
                     bool no_new_privs, struct cm_err **err)
{
  /* Only what is there: dropping needs CAP_SETPCAP even for a capability
   * already gone, which a namespace-less exec's process may lack. */
  for (int c = 0; c <= p->last_cap; c++)
    if (!(p->bounding & BIT (c)) && prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1
        && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
      return cm_err_set (err, errno, "process.capabilities.bounding: drop "
                         "capability %d", c);
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  if (p->noroot && !has_noroot ()
      && prctl (PR_SET_SECUREBITS, SECBIT_KEEP_CAPS | SECBIT_NOROOT
                | SECBIT_NOROOT_LOCKED, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "prctl(PR_SET_SECUREBITS, NOROOT)");
  if (set_ids (u, err) < 0)
    return -1;

  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2] = {
    { (uint32_t) p->effective, (uint32_t) p->permitted,
      (uint32_t) p->inheritable },
    { (uint32_t) (p->effective >> 32), (uint32_t) (p->permitted >> 32),
      (uint32_t) (p->inheritable >> 32) },
  };
  if (syscall (SYS_capset, &h, d) < 0)
    return cm_err_set (err, errno, "process.capabilities: capset");

  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
      && !(errno == EINVAL && p->ambient == 0))
    return cm_err_set (err, errno, "process.capabilities.ambient: clear");
  for (int c = 0; c <= p->last_cap; c++)
    if ((p->ambient & BIT (c))
        && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
      return cm_err_set (err, errno, "process.capabilities.ambient: raise "
                         "capability %d", c);
  if (no_new_privs && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "process.noNewPrivileges: prctl");
  return 0;
}

struct rt_caps_plan *
rt_caps_plan_new (uint64_t bounding, uint64_t effective, uint64_t permitted,
                  uint64_t inheritable, uint64_t ambient, bool noroot)
{
  struct rt_caps_plan *p = xmalloc (sizeof *p);
  *p = (struct rt_caps_plan){ bounding, effective, permitted, inheritable,
                              ambient, read_last_cap (), noroot };
  return p;
}

/* This process's sets: [0] effective, [1] permitted, [2] inheritable,
 * [3] bounding. */
static int
current_sets (uint64_t cur[4], int last_cap)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2];
  if (syscall (SYS_capget, &h, d) < 0)
    return -1;
  cur[0] = d[0].effective | (uint64_t) d[1].effective << 32;
  cur[1] = d[0].permitted | (uint64_t) d[1].permitted << 32;
  cur[2] = d[0].inheritable | (uint64_t) d[1].inheritable << 32;
  cur[3] = 0;
  for (int c = 0; c <= last_cap; c++)
    if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1)
      cur[3] |= BIT (c);
  return 0;
}

bool
rt_caps_effective_has (int cap)
{
  uint64_t cur[4];
  return current_sets (cur, 0) == 0 && (cur[0] & BIT (cap));
}

static int
refuse (struct cm_err **err, const char *field, uint64_t m, const char *why)
{
  char name[64];
  return cm_err_set (err, 0, "process.capabilities.%s: %s %s", field,
                     first_cap_name (m, name, sizeof name), why);
}

int
rt_caps_fit_user (const struct rt_user *u, bool keep, struct cm_err **err)
{
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid (&r, &e, &s) < 0 || getresgid (&rg, &eg, &sg) < 0)
    return cm_err_set (err, errno, "process.user: getresuid");
  if (u->uid != r && u->uid != e && u->uid != s
      && !rt_caps_effective_has (CAP_SETUID))
    return cm_err_set (err, 0, "process.user.uid: %u, but the "
                       "container runs as %u without CAP_SETUID", u->uid, e);
  if (u->gid != rg && u->gid != eg && u->gid != sg
      && !rt_caps_effective_has (CAP_SETGID))
    return cm_err_set (err, 0, "process.user.gid: %u, but the "
                       "container runs as group %u without CAP_SETGID",
                       u->gid, eg);
  if ((!keep || u->additional_gids_len) && !same_groups (u)
      && !rt_caps_effective_has (CAP_SETGID))
    return cm_err_set (err, 0, "process.user.additionalGids: not the "
                       "container's groups, and it has no CAP_SETGID");
  return 0;
}

int
rt_caps_fit (struct rt_caps_plan *p, uint32_t uid, struct cm_err **err)
{
  uint64_t cur[4];
  uint64_t all = p->last_cap >= 63 ? ~0ULL : BIT (p->last_cap + 1) - 1;
  if (current_sets (cur, p->last_cap) < 0)
    return cm_err_set (err, errno, "process.capabilities: capget");
  if ((p->bounding | p->effective | p->permitted | p->inheritable
       | p->ambient) & ~all)
    return cm_err_set (err, EINVAL, "process.capabilities: a capability "
                       "above %d", p->last_cap);
  /* A NOROOT the container locked stays: root's execve then keeps only
   * the ambient set, so the permitted set rides across as ambient. */
  if (uid == 0 && has_noroot () && !p->noroot)
    {
      p->noroot = true;
      p->inheritable |= p->permitted;
      p->ambient |= p->permitted;
    }
  if (p->effective & ~p->permitted)
    return refuse (err, "effective", p->effective & ~p->permitted,
                   "is not in the permitted set");
  if (p->ambient & ~(p->permitted & p->inheritable))
    return refuse (err, "ambient", p->ambient & ~(p->permitted
                                                  & p->inheritable),
                   "must also be in permitted and inheritable");
  if (p->bounding & ~cur[3])
    return refuse (err, "bounding", p->bounding & ~cur[3],
                   "is not in the container's bounding set");
  if ((cur[3] & ~p->bounding) && !(cur[0] & BIT (CAP_SETPCAP)))
    return refuse (err, "bounding", cur[3] & ~p->bounding, "would be "
                   "dropped, which needs CAP_SETPCAP (the container has "
                   "not)");
  if (p->noroot && !has_noroot () && !(cur[0] & BIT (CAP_SETPCAP)))
    return refuse (err, "permitted", (p->bounding | p->inheritable)
                                         & ~p->permitted,
                   "is left out for uid 0, which needs SECBIT_NOROOT and "
                   "so CAP_SETPCAP (the container has not)");
  if (p->permitted & ~cur[1])
    return refuse (err, "permitted", p->permitted & ~cur[1],
                   "is not the container's (not in its permitted set)");
  if (p->inheritable & ~((cur[2] | cur[1]) & (cur[2] | p->bounding)))
    return refuse (err, "inheritable",
                   p->inheritable & ~((cur[2] | cur[1])
                                      & (cur[2] | p->bounding)),
                   "is not the container's to give");
  return 0;
}
