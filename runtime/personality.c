/* linux.personality: the execution domain the container's programs run in.
 * The runtime-spec names two domains, LINUX and LINUX32; any other is an
 * error rather than silently the host's.  It defines no flag values, so a
 * flag is refused rather than dropped.  The init and every `exec`'d process
 * set the persona before Landlock and seccomp (the default profile allows
 * exactly these two); it survives execve. */
#include <errno.h>
#include <string.h>
#include <sys/personality.h>

#include "common/util.h"
#include "internal.h"

int
rt_personality_plan (const struct rt_config *c, long *out,
                     struct cm_err **err)
{
  *out = -1;
  if (c->personality_domain == NULL)
    return 0;
  if (strcmp (c->personality_domain, "LINUX") == 0)
    *out = PER_LINUX;
  else if (strcmp (c->personality_domain, "LINUX32") == 0)
    *out = PER_LINUX32;
  else
    return cm_err_set (err, 0, "linux.personality.domain: unknown \"%s\" "
                       "(LINUX or LINUX32)", c->personality_domain);
  if (c->personality_flags_len > 0)
    return cm_err_set (err, 0, "linux.personality.flags[0]: \"%s\" is not "
                       "supported (the runtime-spec defines no flags)",
                       c->personality_flags[0]);
  return 0;
}

int
rt_personality_apply (long per, struct cm_err **err)
{
  if (per >= 0 && personality ((unsigned long) per) < 0)
    return cm_err_set (err, errno, "linux.personality: set %#lx", per);
  return 0;
}
