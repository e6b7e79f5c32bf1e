/* uname(2) in the view: there is no UTS namespace, so config.json's
 * `hostname` and `domainname` are drawn here — the kernel's struct with
 * nodename and domainname replaced, written into the caller.  Nothing is
 * read from the caller, so there is nothing to re-validate before acting. */
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "vroot-sup.h"

static void
put (char *field, size_t size, const char *value)
{
  if (value == NULL)
    return;
  memset (field, 0, size);
  strncpy (field, value, size - 1);
}

int64_t
vr_do_uname (struct vr_call *c)
{
  struct utsname u;
  if (uname (&u) < 0)
    return -errno;
  put (u.nodename, sizeof u.nodename, c->s->hostname);
  put (u.domainname, sizeof u.domainname, c->s->domainname);
  return vr_write_mem (c, c->req->data.args[0], &u, sizeof u);
}
