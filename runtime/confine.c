/* Landlock + seccomp confinement: the glue between runtime/landlock.c and
 * runtime/seccomp.c.  See runtime/confine.h and docs/security.md. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "confine.h"
#include "landlock.h"
#include "seccomp.h"

struct rt_confine
{
  struct rt_ll_policy ll;
  struct rt_sc_prog sc;
};

int
rt_confine_plan (const struct rt_config *c, struct rt_confine **out,
                 struct cm_err **err)
{
  struct rt_confine *cf = xcalloc (1, sizeof *cf);
  cf->sc.listener_sock = -1;
  cf->ll.pin_fd = -1;
  if (rt_ll_policy_build (c, rt_ll_abi (), &cf->ll, err) < 0)
    {
      rt_confine_free (cf);
      return -1;
    }
  *out = cf;
  return 0;
}

int
rt_confine_open (struct rt_confine *cf, const struct rt_config *c,
                 struct cm_err **err)
{
  return rt_sc_compile (c, cf->ll.seccomp_default_disabled, &cf->sc, err);
}

void
rt_confine_close (struct rt_confine *cf)
{
  if (cf == NULL)
    return;
  rt_sc_prog_clear (&cf->sc);
  cf->sc.listener_sock = -1;
  if (cf->ll.pin_record && cf->ll.pin_fd >= 0)
    close (cf->ll.pin_fd);
  cf->ll.pin_record = false;
  cf->ll.pin_fd = -1;
}

int
rt_confine_prepare (const struct rt_config *c, struct rt_confine **out,
                    struct cm_err **err)
{
  struct rt_confine *cf = NULL;
  if (rt_confine_plan (c, &cf, err) < 0)
    return -1;
  if (rt_confine_open (cf, c, err) < 0)
    {
      rt_confine_free (cf);
      return -1;
    }
  *out = cf;
  return 0;
}

int
rt_confine_child_landlock (const struct rt_confine *cf, struct cm_err **err)
{
  if (rt_ll_child_apply (&cf->ll, err) < 0)
    return -1;
  /* The capability drop comes next: a filter that cannot wait for execve
   * goes in now (rt_confine_child_seccomp_early). */
  return rt_confine_child_seccomp_early (cf, err);
}

int
rt_confine_child_landlock_only (const struct rt_confine *cf,
                                struct cm_err **err)
{
  return rt_ll_child_apply (&cf->ll, err);
}

int
rt_confine_child_seccomp_early (const struct rt_confine *cf,
                                struct cm_err **err)
{
  if (!rt_sc_needs_early_load (&cf->sc))
    return 0;
  return rt_sc_child_load (&cf->sc, "creating", err);
}

int
rt_confine_child_seccomp (const struct rt_confine *cf, struct cm_err **err)
{
  return rt_sc_child_load (&cf->sc, "running", err);
}

void
rt_confine_set_container (struct rt_confine *cf, const char *id,
                          const char *bundle)
{
  rt_sc_set_state (&cf->sc, id, bundle);
}

int
rt_confine_listener_fd (const struct rt_confine *cf)
{
  return cf->sc.listener_sock;
}

void
rt_confine_child_set_host_pid (struct rt_confine *cf, int pid)
{
  cf->sc.host_pid = pid;
}

const struct rt_ll_policy *
rt_confine_landlock_policy (const struct rt_confine *cf)
{
  return &cf->ll;
}

const struct rt_sc_prog *
rt_confine_seccomp_prog (const struct rt_confine *cf)
{
  return &cf->sc;
}

void
rt_confine_for_exec (struct rt_confine *cf, bool own_pidns, bool own_netns)
{
  cm_strv_free (cf->ll.masks);
  cf->ll.masks = NULL;
  cf->ll.masks_len = 0;
  /* A namespace joined by path may be the host's: only one that holds
   * just the pod bounds the reach (runtime/landlock-scope.c). */
  if (own_pidns && cf->ll.pidns_private)
    cf->ll.scoped &= ~RT_LL_SCOPE_SIGNAL;
  if (own_netns && cf->ll.netns_private)
    cf->ll.scoped &= ~RT_LL_SCOPE_ABSTRACT_UNIX;
}

int
rt_confine_record_pins (struct rt_confine *cf, struct cm_err **err)
{
  return rt_ll_pins_record (&cf->ll, err);
}

int
rt_confine_pins_fd (const struct rt_confine *cf)
{
  return cf->ll.pin_record ? cf->ll.pin_fd : -1;
}

int
rt_confine_take_pins (struct rt_confine *cf, char **out, size_t *len,
                      struct cm_err **err)
{
  return rt_ll_pins_take (&cf->ll, out, len, err);
}

int
rt_confine_use_pins (struct rt_confine *cf, const char *rec, size_t len,
                     struct cm_err **err)
{
  return rt_ll_pins_use (&cf->ll, rec, len, err);
}

int
rt_confine_set_default (bool disable, const char *value, const char *origin,
                        int rank, struct cm_err **err)
{
  return rt_ll_set_default (disable, value, origin, rank, err);
}

void
rt_confine_lock_annotations (const char *origin)
{
  rt_ll_lock_annotations (origin);
}

void
rt_confine_set_cache_dir (const char *dir)
{
  rt_sc_cache_set_dir (dir);
}

void
rt_confine_free (struct rt_confine *cf)
{
  if (cf == NULL)
    return;
  rt_ll_policy_clear (&cf->ll);
  rt_sc_prog_clear (&cf->sc);
  free (cf);
}

char *
rt_confine_describe_host (void)
{
  _cleanup_free_ char *ll = rt_ll_describe_host ();
  return xasprintf ("%sseccomp: available (filter%s)\n", ll,
                    rt_kfeat (RT_KF_SECCOMP)->seccomp_notify
                        ? ", user notification" : "");
}
