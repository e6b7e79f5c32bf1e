/* Landlock IPC scopes by namespace: where a namespace already keeps the
 * container away from everyone outside its pod, the scope only cuts the
 * pod's containers (and exec sessions) off from each other.
 * docs/security.md "IPC scopes and namespaces". */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "internal.h"
#include "landlock.h"

#define ANN_SCOPE "run.oci.sandlock.scope"

static const struct rt_namespace *
find_ns (const struct rt_config *c, const char *type, const char *alias)
{
  for (size_t i = 0; i < c->namespaces_len; i++)
    {
      const char *t = c->namespaces[i].type;
      if (t && (strcmp (t, type) == 0 || (alias && strcmp (t, alias) == 0)))
        return &c->namespaces[i];
    }
  return NULL;
}

/* True when the container's namespace of |type| holds only its pod: it was
 * created for the container (no path), or the path names a namespace that
 * is neither the initial one (/proc/1/ns, the runtime's view of init) nor
 * the runtime's own.  A namespace that cannot be identified counts as
 * shared: the scope stays. */
static bool
ns_private (const struct rt_config *c, const char *type, const char *alias,
            const char *proc_name)
{
  const struct rt_namespace *ns = find_ns (c, type, alias);
  struct stat st;
  if (ns == NULL)
    return false;
  if (ns->path == NULL || ns->path[0] == '\0')
    return true;
  if (stat (ns->path, &st) < 0)
    return false;
  return rt_ns_is (&st, "1", proc_name) != 1
         && rt_ns_is (&st, "self", proc_name) != 1;
}

int
rt_ll_scope_by_namespace (const struct rt_config *c, struct rt_ll_policy *p,
                          struct cm_err **err)
{
  const char *v = rt_config_annotation (c, ANN_SCOPE);
  p->pidns_private = ns_private (c, "pid", NULL, "pid");
  p->netns_private = ns_private (c, "network", "net", "net");
  if (v && strcmp (v, "container") == 0)
    return 0;
  if (v && strcmp (v, "namespace") != 0)
    return cm_err_set (err, 0, "annotation %s: \"%s\" is not namespace or "
                       "container", ANN_SCOPE, v);
  if (p->pidns_private)
    p->scoped &= ~RT_LL_SCOPE_SIGNAL;
  if (p->netns_private)
    p->scoped &= ~RT_LL_SCOPE_ABSTRACT_UNIX;
  return 0;
}
