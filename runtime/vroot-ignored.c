/* What the namespace-less mode ignores in a config.json, said once per
 * field at create (docs/nsless.md "config.json in namespace-less mode"):
 * what it cannot have is refused elsewhere (rt_vroot_plan, vroot-config.c);
 * what it can do without is named here, so that nothing is dropped
 * silently. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "config.h"
#include "runtime.h"
#include "vroot.h"

/* Options the view honours: ro/rw and noexec are drawn (supervisor and
 * Landlock), nosuid holds because the mode always runs with
 * no_new_privs, bind/rbind name the kind.  nodev holds where no device
 * node can be: a tmpfs (a private directory where mknod of a device is
 * refused) and the host's /proc. */
static bool
honoured (const char *type, const char *opt)
{
  static const char *const all[] = { "bind", "rbind", "ro", "rw", "noexec",
                                     "nosuid", NULL };
  for (size_t i = 0; all[i]; i++)
    if (strcmp (opt, all[i]) == 0)
      return true;
  return strcmp (opt, "nodev") == 0
         && (strcmp (type, "tmpfs") == 0 || strcmp (type, "proc") == 0);
}

/* Appends |item| (between |quote|s) to the ", "-separated |*list|. */
static void
list_add (char **list, const char *item, const char *quote)
{
  char *l = xasprintf ("%s%s%s%s%s", *list, **list ? ", " : "", quote, item,
                       quote);
  free (*list);
  *list = l;
}

static void
namespaces (const struct rt_config *c, rt_hook_warn_fn warn, const void *ud)
{
  _cleanup_free_ char *list = xstrdup ("");
  for (size_t i = 0; i < c->namespaces_len; i++)
    {
      const struct rt_namespace *n = &c->namespaces[i];
      if (n->path && *n->path)
        continue;               /* refused by rt_vroot_plan */
      list_add (&list, n->type ? n->type : "?", "");
    }
  if (*list == '\0')
    return;
  _cleanup_free_ char *w = xasprintf (
      "linux.namespaces: %s not created: namespace-less mode shares the "
      "runtime's (the view stands for the mount namespace)", list);
  warn (ud, w);
}

static void
mount_options (const struct rt_mount *m, size_t i, const char *type,
               rt_hook_warn_fn warn, const void *ud)
{
  _cleanup_free_ char *list = xstrdup ("");
  for (size_t k = 0; k < m->options_len; k++)
    {
      if (honoured (type, m->options[k]))
        continue;
      list_add (&list, m->options[k], "\"");
    }
  if (*list == '\0')
    return;
  _cleanup_free_ char *w = xasprintf (
      "mounts[%zu].options (%s): %s not honoured in namespace-less mode "
      "(nothing is mounted: only ro, rw, noexec, nosuid%s are drawn)", i,
      m->destination ? m->destination : "", list,
      strcmp (type, "bind") == 0 ? "" : ", nodev");
  warn (ud, w);
}

static void
mounts (const struct rt_config *c, rt_hook_warn_fn warn, const void *ud)
{
  for (size_t i = 0; i < c->mounts_len; i++)
    {
      const struct rt_mount *m = &c->mounts[i];
      const char *t = vr_mount_type (m);
      _cleanup_free_ char *w = NULL;
      if (vr_mount_left_out (t))
        w = xasprintf ("mounts[%zu] (%s, type %s): left out in "
                       "namespace-less mode: the destination is the "
                       "rootfs's own directory", i,
                       m->destination ? m->destination : "", t);
      else if (m->uid_mappings_len || m->gid_mappings_len)
        w = xasprintf ("mounts[%zu].uidMappings/gidMappings: ignored in "
                       "namespace-less mode (nothing is mounted, so "
                       "nothing is id-mapped)", i);
      if (w)
        warn (ud, w);
      if (!vr_mount_left_out (t))
        mount_options (m, i, t, warn, ud);
    }
}

void
rt_vroot_ignored (const struct rt_config *c, rt_hook_warn_fn warn,
                  const void *ud)
{
  namespaces (c, warn, ud);
  if (c->time_offsets_present)
    warn (ud, "linux.timeOffsets: ignored: no time namespace in "
              "namespace-less mode");
  if (c->rootfs_propagation && *c->rootfs_propagation)
    warn (ud, "linux.rootfsPropagation: ignored: nothing is mounted in "
              "namespace-less mode");
  mounts (c, warn, ud);
}
