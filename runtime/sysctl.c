/* linux.sysctl: which keys a container may set, and writing them.
 *
 * /proc/sys is mostly host-global: a write to kernel.core_pattern,
 * kernel.modprobe or vm.* from the container's setup changes the host (and
 * core_pattern with a pipe runs a host-root helper).  Only the keys the
 * kernel keeps per namespace are allowed, and only when the container has
 * that namespace to itself (runc's libcontainer/configs/validate rules):
 *   ipc  kernel.msgmax, msgmnb, msgmni, sem, shmall, shmmax, shmmni,
 *        shm_rmid_forced, fs.mqueue.*
 *   net  net.*
 *   uts  kernel.domainname (kernel.hostname is the OCI "hostname" field)
 * A namespace joined by path counts only if it is not the runtime's own.
 *
 * Key syntax is sysctl(8)'s, as runc reads it: names separated by '.', a
 * '/' inside a name standing for a '.' ("net.ipv4.conf.eth0/100.rp_filter"
 * is the eth0.100 interface), or the other way round when the first
 * separator is a '/' ("net/ipv4/conf/eth0.100/rp_filter").  No name may be
 * empty, "." or "..".  The child walks the names one at a time with
 * O_NOFOLLOW from a /proc/sys that must be procfs, so neither a ".." nor a
 * symlink planted in the rootfs (a /proc that is not procfs) can send the
 * write anywhere else. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

enum sysctl_ns
{
  SYSCTL_NS_NONE,
  SYSCTL_NS_IPC,
  SYSCTL_NS_NET,
  SYSCTL_NS_UTS,
};

static enum sysctl_ns
sysctl_class (const char *key)
{
  static const char *const ipc[] = {
    "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
    "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
    "kernel.shm_rmid_forced",
  };
  for (size_t i = 0; i < ARRAY_SIZE (ipc); i++)
    if (strcmp (key, ipc[i]) == 0)
      return SYSCTL_NS_IPC;
  if (cm_startswith (key, "fs.mqueue."))
    return SYSCTL_NS_IPC;
  if (cm_startswith (key, "net."))
    return SYSCTL_NS_NET;
  if (strcmp (key, "kernel.domainname") == 0)
    return SYSCTL_NS_UTS;
  return SYSCTL_NS_NONE;
}

/* The dotted form of |key|: '.' separates names, '/' inside a name is a
 * literal '.'.  A key whose first separator is '/' has the roles swapped. */
static char *
dotted (const char *key)
{
  char *d = xstrdup (key);
  size_t first = strcspn (d, "./");
  if (d[first] == '/')
    for (char *s = d; *s; s++)
      *s = *s == '/' ? '.' : *s == '.' ? '/' : *s;
  return d;
}

/* Splits the next name off a dotted key into |name| (with '/' turned back
 * into '.'); NULL when it is empty, ".", ".." or too long. */
static const char *
next_name (const char *d, char name[256])
{
  size_t n = strcspn (d, ".");
  if (n == 0 || n > 255)
    return NULL;
  for (size_t i = 0; i < n; i++)
    name[i] = d[i] == '/' ? '.' : d[i];
  name[n] = '\0';
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return NULL;
  return d[n] == '.' ? d + n + 1 : d + n;
}

static bool
key_shape_ok (const char *d)
{
  char name[256];
  if (*d == '\0')
    return false;
  while (*d)
    {
      const char *next = next_name (d, name);
      if (next == NULL || (*next == '\0' && next[-1] == '.'))
        return false;
      d = next;
    }
  return true;
}

/* Whether the container gets a namespace of |flag| that is not the
 * runtime's own: a new one, or one joined by path that differs from
 * /proc/self/ns/|name|. */
static int
own_namespace (const struct rt_plan *p, const struct rt_ns_fds *ns, int flag,
               const char *name, bool *own, struct cm_err **err)
{
  struct stat joined;
  bool fresh = (flag == CLONE_NEWIPC && p->new_ipc)
               || (flag == CLONE_NEWNET && p->new_net)
               || (flag == CLONE_NEWUTS && p->new_uts);
  int fd = rt_ns_joined_fd (ns, flag), r;

  *own = fresh;
  if (fresh || fd < 0)
    return 0;
  if (fstat (fd, &joined) < 0)
    return cm_err_set (err, errno, "stat joined %s namespace", name);
  r = rt_ns_is (&joined, "self", name);
  if (r < 0)
    return cm_err_set (err, errno, "stat `/proc/self/ns/%s`", name);
  *own = r == 0;
  return 0;
}

static int
check_one (const struct rt_plan *p, const struct rt_ns_fds *ns,
           const char *key, struct cm_err **err)
{
  _cleanup_free_ char *d = dotted (key);
  static const struct
  {
    int flag;
    const char *name, *json;
  } kinds[] = {
    [SYSCTL_NS_IPC] = { CLONE_NEWIPC, "ipc", "ipc" },
    [SYSCTL_NS_NET] = { CLONE_NEWNET, "net", "network" },
    [SYSCTL_NS_UTS] = { CLONE_NEWUTS, "uts", "uts" },
  };
  enum sysctl_ns k;
  bool own;

  if (!key_shape_ok (d))
    return cm_err_set (err, 0, "linux.sysctl.\"%s\": invalid key (names "
                       "under /proc/sys; none empty, \".\" or \"..\")", key);
  if (strcmp (d, "kernel.hostname") == 0)
    return cm_err_set (err, 0, "linux.sysctl.\"%s\": conflicts with the "
                       "\"hostname\" field; set that instead", key);
  k = sysctl_class (d);
  if (k == SYSCTL_NS_NONE)
    return cm_err_set (err, 0, "linux.sysctl.\"%s\": not a namespaced "
                       "sysctl: it would change the host (allowed: "
                       "kernel.msg*, kernel.sem, kernel.shm*, fs.mqueue.*, "
                       "net.*, kernel.domainname)", key);
  if (own_namespace (p, ns, kinds[k].flag, kinds[k].name, &own, err) < 0)
    return -1;
  if (!own)
    return cm_err_set (err, 0, "linux.sysctl.\"%s\": needs the container's "
                       "own \"%s\" namespace; without one it would change "
                       "the host's", key, kinds[k].json);
  return 0;
}

int
rt_plan_sysctl (const struct rt_plan *p, const struct rt_ns_fds *ns,
                struct cm_err **err)
{
  const struct rt_config *c = p->c;
  for (size_t i = 0; i < c->sysctl_len; i++)
    if (check_one (p, ns, c->sysctl[i].key, err) < 0)
      return -1;
  return 0;
}

/* /proc/sys of the current root, refused unless it is procfs. */
static int
open_proc_sys (struct cm_err **err)
{
  _cleanup_fd_ int proc = -1, sys = -1;
  struct statfs sf;

  proc = open ("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (proc < 0)
    return cm_err_set (err, errno, "open /proc");
  sys = openat (proc, "sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sys < 0)
    return cm_err_set (err, errno, "open /proc/sys");
  if (fstatfs (sys, &sf) < 0)
    return cm_err_set (err, errno, "statfs /proc/sys");
  if (sf.f_type != PROC_SUPER_MAGIC)
    return cm_err_set (err, EXDEV, "/proc/sys is not procfs (mount proc "
                       "on /proc to set sysctls)");
  return cm_steal_fd (&sys);
}

/* Opens the file of |key| (checked by rt_plan_sysctl) for writing. */
static int
open_key (int sysfd, const char *key, struct cm_err **err)
{
  _cleanup_free_ char *d = dotted (key);
  _cleanup_fd_ int dir = fcntl (sysfd, F_DUPFD_CLOEXEC, 0);
  char name[256];

  if (dir < 0)
    return cm_err_set (err, errno, "dup /proc/sys");
  for (const char *s = d; *s;)
    {
      s = next_name (s, name);
      if (s == NULL)
        return cm_err_set (err, EINVAL, "invalid key");
      int fd = openat (dir, name, (*s ? O_PATH | O_DIRECTORY : O_WRONLY)
                                      | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "open /proc/sys entry \"%s\"", name);
      close (dir);
      dir = fd;
    }
  return cm_steal_fd (&dir);
}

int
rt_child_sysctl (const struct rt_plan *p, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  _cleanup_fd_ int sysfd = -1;

  if (c->sysctl_len == 0)
    return 0;
  sysfd = open_proc_sys (err);
  if (sysfd < 0)
    return cm_err_wrap (err, "linux.sysctl");
  for (size_t i = 0; i < c->sysctl_len; i++)
    {
      const char *v = c->sysctl[i].value;
      _cleanup_fd_ int fd = open_key (sysfd, c->sysctl[i].key, err);
      if (fd < 0)
        return cm_err_wrap (err, "linux.sysctl.\"%s\"", c->sysctl[i].key);
      if (write (fd, v, strlen (v)) != (ssize_t) strlen (v))
        return cm_err_set (err, errno, "linux.sysctl.\"%s\": write \"%s\"",
                           c->sysctl[i].key, v);
    }
  return 0;
}
