/* The namespace-less supervisor's own Landlock domain (issue 15): no wider
 * than the union of the container's grants, so that what it does on the
 * container's behalf — with its own credentials, outside the container's
 * domain (sandlock-notes §3.5 item 7) — cannot reach beyond the view
 * either.  On top of the entries' rights it keeps what servicing needs:
 * /proc (the callers' status, and mem for the exec rewrite) and the exec
 * directory's symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "landlock.h"
#include "vroot.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

struct vr_ll_beneath
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

struct vr_ll_attr
{
  uint64_t fs, net, scoped;
};

struct vr_ll_port
{
  uint64_t allowed_access;
  uint64_t port;
};

static uint64_t
handled (int abi)
{
  uint64_t h = RT_LL_FS_V1;
  if (abi >= 2)
    h |= RT_LL_FS_REFER;
  if (abi >= 3)
    h |= RT_LL_FS_TRUNCATE;
  if (abi >= 5)
    h |= RT_LL_FS_IOCTL_DEV;
  return h;
}

static int
add (int rfd, int fd, uint64_t access, uint64_t h, const char *what,
     struct cm_err **err)
{
  struct vr_ll_beneath pb = { .allowed_access = access & h, .parent_fd = fd };
  if (pb.allowed_access == 0)
    return 0;
  if (syscall (__NR_landlock_add_rule, rfd, 1, &pb, 0) < 0)
    return cm_err_set (err, errno, "landlock: rule for %s", what);
  return 0;
}

static int
ports (int rfd, const uint16_t *p, size_t n, uint64_t access,
       struct cm_err **err)
{
  for (size_t i = 0; access && i < n; i++)
    {
      struct vr_ll_port np = { .allowed_access = access, .port = p[i] };
      if (syscall (__NR_landlock_add_rule, rfd, 2, &np, 0) < 0)
        return cm_err_set (err, errno, "landlock: TCP port %u", p[i]);
    }
  return 0;
}

/* The ruleset: fs always; TCP when the container's domain restricts it
 * (on-behalf connect and bind then obey the same ports); abstract unix
 * scope where the kernel has it (an on-behalf connect to an abstract
 * socket reaches only the supervisor's domain and those nested in it). */
static int
ruleset (int abi, const struct vr_net *net, struct cm_err **err)
{
  struct vr_ll_attr a = { .fs = handled (abi) };
  size_t size = 8;
  int rfd;
  if (net && net->tcp && abi >= 4)
    a.net = net->handled ? net->handled
                         : RT_LL_NET_BIND_TCP | RT_LL_NET_CONNECT_TCP,
    size = 16;
  if (abi >= 6)
    a.scoped = RT_LL_SCOPE_ABSTRACT_UNIX, size = 24;
  rfd = (int) syscall (__NR_landlock_create_ruleset, &a, size, 0);
  if (rfd < 0)
    return cm_err_set (err, errno, "landlock: supervisor ruleset");
  if (a.net && (ports (rfd, net->bind, net->nbind,
                       a.net & RT_LL_NET_BIND_TCP, err) < 0
                || ports (rfd, net->connect, net->nconnect,
                          a.net & RT_LL_NET_CONNECT_TCP, err) < 0))
    {
      close (rfd);
      return -1;
    }
  return rfd;
}

int
vr_landlock_self (const struct vroot *v, int exec_dir, const struct vr_net *net,
                  struct cm_err **err)
{
  return vr_landlock_self_with (v, exec_dir, net, NULL, 0, err);
}

int
vr_landlock_self_with (const struct vroot *v, int exec_dir,
                       const struct vr_net *net,
                       const struct vr_ll_extra *extra, size_t n,
                       struct cm_err **err)
{
  int abi = rt_ll_abi ();
  uint64_t h = handled (abi);
  if (abi < 1)
    return cm_err_set (err, EOPNOTSUPP, "namespace-less mode needs Landlock");
  if (net && net->tcp && abi < 4)
    return cm_err_set (err, EOPNOTSUPP, "landlock: TCP rules need ABI 4");
  _cleanup_fd_ int rfd = ruleset (abi, net, err);
  if (rfd < 0)
    return -1;
  _cleanup_fd_ int proc = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0)
    return cm_err_set (err, errno, "landlock: open /proc");
  for (size_t i = 0; i < v->n; i++)
    if (add (rfd, v->e[i].fd, vr_landlock_access (&v->e[i]), h, v->e[i].dest,
             err) < 0)
      return -1;
  if (add (rfd, proc, RT_LL_FS_READ_FILE | RT_LL_FS_READ_DIR
           | RT_LL_FS_WRITE_FILE, h, "/proc", err) < 0
      || add (rfd, exec_dir, RT_LL_FS_MAKE_SYM | RT_LL_FS_MAKE_DIR
              | RT_LL_FS_READ_DIR, h,
              "the exec directory", err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (add (rfd, extra[i].fd, extra[i].access, h, extra[i].what, err) < 0)
      return -1;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || syscall (__NR_landlock_restrict_self, rfd, 0) < 0)
    return cm_err_set (err, errno, "landlock: restrict the supervisor");
  return 0;
}
