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

static int
set_ids (const struct rt_user *u, struct cm_err **err)
{
  if (setgroups (u->additional_gids_len, (const gid_t *) u->additional_gids)
      < 0)
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

int
rt_caps_child_apply (const struct rt_caps_plan *p, const struct rt_user *u,
                     bool no_new_privs, struct cm_err **err)
{
  for (int c = 0; c <= p->last_cap; c++)
    if (!(p->bounding & BIT (c)) && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0
        && errno != EINVAL)
      return cm_err_set (err, errno, "process.capabilities.bounding: drop "
                         "capability %d", c);
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return cm_err_set (err, errno, "prctl(PR_SET_KEEPCAPS)");
  if (p->noroot
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
