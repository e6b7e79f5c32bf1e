/* Capabilities that would act on a host namespace (docs/nsless.md
 * "Capabilities and the host's namespaces").  Namespace-less mode creates
 * none of the namespaces linux.namespaces lists: the container shares the
 * runtime's.  A capability a namespaced container holds over ITS OWN
 * network or pid namespace then acts on the host's.  Where the config
 * lists the namespace, each such capability is refused at create (in any
 * set: the bounding set is what a later `exec --cap` may still give),
 * naming the field; where it does not, the config asked for the host's
 * namespace and the capability stays, as in a namespaced container that
 * shares it.  Only a capability the container would hold is refused: an
 * ordinary caller's container holds none (vroot-run.c), so its config's
 * list is moot.
 *
 * The rest of the audit is contained elsewhere, not here: CAP_KILL by
 * Landlock's signal scope, CAP_SYS_PTRACE by Landlock's ptrace rule,
 * CAP_SYS_ADMIN's mounts by Landlock and the trap filter, its
 * sethostname/setdomainname and CAP_IPC_OWNER's SysV IPC by the trap
 * filter's refusals (vroot-sup.c), CAP_NET_BIND_SERVICE by the closed
 * network (vroot-inet.c).
 *
 * Calls that name a process by pid reach every host process too, where
 * no pid namespace hides them: runtime/vroot-pid.c. */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>

#include "common/util.h"
#include "caps.h"
#include "vroot-run.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static const struct
{
  int cap;
  const char *name, *ns, *what;
} scoped[] = {
  { CAP_NET_RAW, "CAP_NET_RAW", "network",
    "network (packet and raw sockets: read and forge its traffic)" },
  { CAP_NET_ADMIN, "CAP_NET_ADMIN", "network",
    "network (its interfaces, routes and firewall)" },
  { CAP_SYS_BOOT, "CAP_SYS_BOOT", "pid",
    "processes (reboot(2) restarts the host, not the container)" },
  { CAP_SYS_NICE, "CAP_SYS_NICE", "pid",
    "processes (the priority, scheduler and CPUs of any host process)" },
  { CAP_SYS_RESOURCE, "CAP_SYS_RESOURCE", "pid",
    "processes (prlimit(2) on any host process)" },
  { CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE", "pid",
    "processes (the host's next pid: ns_last_pid)" },
};

static bool
listed (const struct rt_config *c, const char *type)
{
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (strcmp (c->namespaces[i].type, type) == 0)
      return true;
  return false;
}

static bool
in (char *const *set, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcasecmp (set[i], name) == 0)
      return true;
  return false;
}

/* The first set of process.capabilities that names |name|, or NULL. */
static const char *
set_of (const struct rt_capabilities *k, const char *name)
{
  if (in (k->bounding, k->bounding_len, name))
    return "bounding";
  if (in (k->effective, k->effective_len, name))
    return "effective";
  if (in (k->permitted, k->permitted_len, name))
    return "permitted";
  if (in (k->inheritable, k->inheritable_len, name))
    return "inheritable";
  if (in (k->ambient, k->ambient_len, name))
    return "ambient";
  return NULL;
}

int
vr_caps_check (const struct rt_config *c, struct cm_err **err)
{
  const struct rt_capabilities *k = c->process->capabilities;
  if (k == NULL)
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (scoped); i++)
    {
      const char *set = set_of (k, scoped[i].name);
      if (set == NULL || !listed (c, scoped[i].ns)
          || !rt_caps_effective_has (scoped[i].cap))
        continue;
      return cm_err_set (err, 0, "process.capabilities.%s: %s would act on "
                         "the host's %s: namespace-less mode does not "
                         "create the %s namespace that linux.namespaces "
                         "lists", set, scoped[i].name, scoped[i].what,
                         scoped[i].ns);
    }
  return 0;
}
