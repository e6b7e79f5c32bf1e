/* Device nodes bind-mounted into a container (`-v /dev/kvm:/dev/kvm`):
 * which of them the configuration lets the container use, so Landlock
 * grants their ioctls as it does for linux.devices[].  docs/security.md. */
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cgroup-internal.h"
#include "common/util.h"
#include "landlock.h"

static bool
is_bind (const struct rt_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (size_t i = 0; i < m->options_len; i++)
    if (strcmp (m->options[i], "bind") == 0
        || strcmp (m->options[i], "rbind") == 0)
      return true;
  return false;
}

static bool
listed_device (const struct rt_config *c, unsigned maj, unsigned min)
{
  for (size_t i = 0; i < c->devices_len; i++)
    {
      const struct rt_device *d = &c->devices[i];
      char t = d->type ? d->type[0] : 'c';
      if ((t == 'c' || t == 'u') && d->major == (int64_t) maj
          && d->minor == (int64_t) min)
        return true;
    }
  return false;
}

/* What the device cgroup lets the container open (runtime/cgroup-devices.c:
 * deny-all, the config's rules, the spec's default devices; the last
 * matching rule decides): reading or writing is enough to need ioctls. */
static bool
cgroup_allows (const struct rt_config *c, unsigned maj, unsigned min)
{
  _cleanup_free_ struct cg_dev_rule *v = NULL;
  struct cm_err *err = NULL;
  size_t n;
  if (cg_dev_rules (c->resources, &v, &n, &err) < 0)
    {
      cm_err_free (&err);       /* create reports the bad rule itself */
      return false;
    }
  return cg_dev_match (v, n, 'c', maj, min, CG_DEV_R)
         || cg_dev_match (v, n, 'c', maj, min, CG_DEV_W);
}

uint64_t
rt_ll_bound_device (const struct rt_config *c, size_t i)
{
  const struct rt_mount *m = &c->mounts[i];
  struct stat st;
  /* The host path the mount binds, followed as mount(2) follows it. */
  if (!is_bind (m) || m->source == NULL || m->source[0] != '/'
      || stat (m->source, &st) < 0 || !S_ISCHR (st.st_mode))
    return 0;
  unsigned maj = major (st.st_rdev), min = minor (st.st_rdev);
  if (!listed_device (c, maj, min) && !cgroup_allows (c, maj, min))
    return 0;
  return (uint64_t) st.st_rdev;
}
