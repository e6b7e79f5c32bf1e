/* The host's network in namespace-less mode.  A network namespace that
 * config.json lists cannot be made: the container shares the runtime's,
 * whose loopback services (a database, a registry, a desktop's daemons)
 * a namespaced container never sees.  So where config.json asks for a
 * private network namespace and gives no net_allow_* annotation, the view
 * keeps the host's network closed: Landlock handles TCP bind and connect
 * with no port allowed (the container's domain and the supervisor's), and
 * every address a connect, bind or send names is refused (EACCES) unless
 * it is a unix, netlink or unspecified one — Landlock has no right for
 * UDP, ICMP, SCTP or vsock, and each of those calls names its address in
 * a trapped call the supervisor does on-behalf.  With net_allow_* the
 * caller asked for the network: TCP follows its ports, the rest is open.
 *
 * TCP Fast Open connects inside sendto/sendmsg (MSG_FASTOPEN) without
 * passing Landlock's connect check: refused whenever TCP connect is
 * restricted.  listen(2) on an unbound inet socket binds an ephemeral
 * host port without Landlock's bind check: with the network closed it is
 * refused, done here on a dup of the caller's socket so that the socket
 * checked is the one that listens (a sibling's dup2 cannot swap it). */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"

#include "landlock.h"
#include "vroot-sup.h"

void
vr_inet_close (struct vr_sup *s, struct rt_ll_policy *ll)
{
  if (ll->netns_private && ll->handled_net == 0
      && ll->state[RT_LL_P_NET_TCP] == RT_LL_NOT_REQUESTED)
    {
      s->inet_closed = true;
      if (ll->abi >= 4)
        ll->handled_net = RT_LL_NET_BIND_TCP | RT_LL_NET_CONNECT_TCP;
    }
  s->netns = ll->netns_private;
  s->tcp_connect_closed = s->inet_closed
                          || (ll->handled_net & RT_LL_NET_CONNECT_TCP);
}

int
vr_inet_check (const struct vr_sup *s, int family, int msg_flags)
{
  if ((msg_flags & MSG_FASTOPEN) && s->tcp_connect_closed)
    return -EACCES;
  if (!s->inet_closed || family == AF_UNIX || family == AF_UNSPEC
      || family == AF_NETLINK)
    return 0;
  return -EACCES;
}

int64_t
vr_do_listen (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  int domain = 0;
  socklen_t len = sizeof domain;
  if (!c->s->inet_closed)
    return VR_CONTINUE;
  _cleanup_fd_ int fd = vr_caller_fd (c, c->task->tgid, (int) g[0]);
  if (fd < 0)
    return fd;
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
    return -errno;
  if (vr_inet_check (c->s, domain, 0) < 0)
    return -EACCES;
  return listen (fd, (int) g[1]) < 0 ? -errno : 0;
}
