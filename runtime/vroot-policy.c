/* The container's Landlock policy in namespace-less mode.  rt_ll_policy_build
 * names container paths, which a mount namespace and pivot_root would have
 * made real; without them the container's kernel root is the host's, so
 * the grants must be the view's host objects: one rule per entry with
 * exactly its rights (Landlock is the boundary of the view), and each
 * fs_readable/fs_writable annotation resolved in the view to the host
 * object it names, never wider than the entry that holds it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "landlock.h"
#include "vroot.h"

static void
put (struct rt_ll_rule **rules, size_t *n, char *path, uint64_t access,
     enum rt_ll_origin origin)
{
  *rules = xrealloc (*rules, (*n + 1) * sizeof **rules);
  (*rules)[(*n)++] = (struct rt_ll_rule) { .path = path, .access = access,
                                           .origin = origin };
}

static char *
host_of (const struct vr_path *r)
{
  if (strcmp (r->rel, ".") == 0)
    return xstrdup (r->ent->host);
  return xasprintf ("%s%s%s", r->ent->host,
                    strcmp (r->ent->host, "/") == 0 ? "" : "/", r->rel);
}

/* A bound char device keeps the ioctl right the namespaced policy gives
 * it (rt_ll_bound_device: the config allows that device), found by its
 * container path; the default /dev nodes get none, as there.  Both the
 * container's domain and the supervisor's (an ancestor layer of it, which
 * handles IOCTL_DEV) grant it then (vr_landlock_access). */
static uint64_t
device_ioctl (const struct vroot *v, const struct vr_entry *e,
              const struct rt_ll_policy *p)
{
  struct stat st;
  if (e->dir || e == &v->e[0] || fstat (e->fd, &st) < 0
      || !S_ISCHR (st.st_mode))
    return 0;
  for (size_t i = 0; i < p->rules_len; i++)
    if (p->rules[i].path && p->rules[i].origin == RT_LL_O_DEVICE
        && strcmp (p->rules[i].path, e->dest) == 0)
      return p->rules[i].access & RT_LL_FS_IOCTL_DEV;
  return 0;
}

int
vr_ll_translate (struct vroot *v, struct rt_ll_policy *p,
                 struct cm_err **err)
{
  static const struct vr_ctx none = { 0 };
  struct rt_ll_rule *rules = NULL;
  size_t n = 0;

  if (p->masks_len > 0)
    return cm_err_set (err, 0, "annotation run.oci.sandlock.fs_denied: "
                       "\"%s\" lies under a granted tree and would be masked "
                       "by a mount, which needs a mount namespace: "
                       "namespace-less mode cannot deny it", p->masks[0]);
  if (p->handled_fs == 0)
    return 0;
  for (size_t i = 0; i < v->n; i++)
    {
      v->e[i].ioctl = device_ioctl (v, &v->e[i], p) != 0;
      put (&rules, &n, xstrdup (v->e[i].host),
           vr_landlock_access (&v->e[i]) & p->handled_fs,
           i == 0 ? RT_LL_O_ROOT : RT_LL_O_MOUNT);
    }
  for (size_t i = 0; i < p->rules_len; i++)
    {
      const struct rt_ll_rule *r = &p->rules[i];
      struct vr_path res;
      if (r->path == NULL || r->origin != RT_LL_O_ANNOTATION
          || vr_resolve (v, &none, "/", r->path, 0, &res) < 0
          || res.ent == NULL)
        continue;               /* absent: grants nothing, as at apply */
      uint64_t a = r->access & vr_landlock_access (res.ent);
      if (res.type != S_IFDIR)
        a &= RT_LL_FS_FILE;
      if (a)
        put (&rules, &n, host_of (&res), a, RT_LL_O_ANNOTATION);
    }
  for (size_t i = 0; i < p->rules_len; i++)
    free (p->rules[i].path);
  free (p->rules);
  free (p->index);
  p->index = NULL;
  p->index_cap = 0;
  p->rules = rules;
  p->rules_len = n;
  return 0;
}
