/* Passing one file descriptor over a unix socket (SCM_RIGHTS): the pty
 * master to --console-socket, the seccomp listener to listenerPath, and
 * the runtime's own receivers. */
#ifndef SANDLOCK_COMMON_FDPASS_H
#define SANDLOCK_COMMON_FDPASS_H

#include <stddef.h>
#include <sys/uio.h>

/* Sends |fd| with the bytes of |iov| (at least one byte in all: a stream
 * socket would drop an empty message), MSG_NOSIGNAL.  Returns 0, or -1
 * with errno set (EINVAL for an empty payload). */
int cm_send_fd (int sock, int fd, const struct iovec *iov, size_t iovcnt);

/* cm_send_fd with the string |text| (not empty) as the payload. */
int cm_send_fd_str (int sock, int fd, const char *text);

/* Receives one message and the fd it carries (O_CLOEXEC).  Its bytes go
 * to |buf| (|*len| in: room, out: received; both may be NULL for a
 * scratch buffer).  |flags| are recvmsg's (MSG_DONTWAIT); EINTR is
 * retried.  Returns the
 * fd, or -1 with errno set: EBADMSG when the message carries none, ENODATA
 * at end of file.  An fd beyond the first is closed at once. */
int cm_recv_fd (int sock, void *buf, size_t *len, int flags);

#endif
