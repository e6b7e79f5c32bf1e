/* What a notify handler may call (runtime.h): the id check, the caller's
 * memory, fd injection.  Each is a system call or two; none keeps state. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime.h"

bool
rt_notify_id_valid (int listener_fd, uint64_t id)
{
  return ioctl (listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* /proc/PID/mem rather than process_vm_readv: the same access check, and
 * the one path that also reads what the caller cannot (FOLL_FORCE).  The
 * pid may have been reused by the time it is opened: the id check after
 * the read says the caller was still waiting in its system call, so the
 * pid was still its. */
ssize_t
rt_notify_read_mem (int listener_fd, const struct seccomp_notif *req,
                    uint64_t addr, void *buf, size_t len)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%u/mem", req->pid);
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t r = pread (fd, buf, len, (off_t) addr);
  if (r < 0)
    return -1;
  if (!rt_notify_id_valid (listener_fd, req->id))
    return errno = ESRCH, -1;
  return r;
}

int
rt_notify_addfd_send (int listener_fd, uint64_t id, int fd,
                      unsigned newfd_flags)
{
  struct seccomp_notif_addfd a = { .id = id, .srcfd = (unsigned) fd,
                                   .newfd_flags = newfd_flags,
                                   .flags = SECCOMP_ADDFD_FLAG_SEND };
  return ioctl (listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
}
