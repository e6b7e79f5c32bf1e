/* The loopback interface of a new network namespace starts down; crun and
 * runc bring it up (runtime-tools and crun's net-device-loopback test
 * expect 127.0.0.1 to work).  An ioctl on a socket of the namespace: no
 * external program, no netlink parsing. */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

int
rt_child_loopback_up (struct cm_err **err)
{
  struct ifreq ifr;
  _cleanup_fd_ int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return cm_err_set (err, errno, "loopback: socket");
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return cm_err_set (err, errno, "loopback: get flags of lo");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return cm_err_set (err, errno, "loopback: bring lo up");
  return 0;
}
