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

int
vr_ll_translate (const struct vroot *v, struct rt_ll_policy *p,
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
    put (&rules, &n, xstrdup (v->e[i].host),
         vr_landlock_access (&v->e[i]) & p->handled_fs,
         i == 0 ? RT_LL_O_ROOT : RT_LL_O_MOUNT);
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
