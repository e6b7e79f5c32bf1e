/* execve in the view.  A notify supervisor cannot change the registers of
 * the call, and the kernel resolves an exec path (and an ELF's PT_INTERP,
 * and a script's #! line) against the host root.  So:
 *
 *  - the binary is resolved and opened here, gated on X_OK, and injected
 *    at VR_EXEC_FD (close-on-exec: the new program does not inherit it);
 *  - the path string in the caller is overwritten in place with its own
 *    last name, which is never longer, and which the kernel resolves
 *    against the caller's kernel cwd: the supervisor's exec directory,
 *    where NAME -> /proc/self/fd/VR_EXEC_FD.  argv[0], often the same
 *    buffer, keeps its last name (busybox dispatches on it);
 *  - a dynamic ELF runs as a sealed memfd copy whose PT_INTERP names
 *    /proc/self/fd/VR_INTERP_FD, the view's interpreter (sandlock-notes
 *    §4.2); a script as a memfd copy whose #! line names the view's
 *    interpreter, the path written being /dev/fd/VR_SCRIPT_FD (resolved in
 *    the view when the interpreter opens it), or ENOEXEC when the caller's
 *    string is too short for it (a POSIX shell then runs it itself).
 *
 * Then the call CONTINUEs: the kernel re-reads the path, so a sibling
 * thread that rewrites it in between gets a host path — which Landlock,
 * granting EXECUTE on the rootfs and mounts only, refuses.  A memfd exec
 * is invisible to Landlock, hence the X_OK gate here. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot-sup.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static int gate (struct vr_call *c, const struct vr_path *p);

static int
inject_at (struct vr_call *c, int fd, int num, bool cloexec)
{
  struct seccomp_notif_addfd a = {
    .id = c->req->id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .srcfd = (uint32_t) fd,
    .newfd = (uint32_t) num, .newfd_flags = cloexec ? O_CLOEXEC : 0,
  };
  return ioctl (c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 ? -errno : 0;
}

/* PT_INTERP of the ELF |fd|: 1 with its text, offset and size; 0 when
 * there is none (static, or not an ELF: the kernel decides); -errno. */
static int
elf_interp (int fd, char out[256], uint64_t *off, uint64_t *size)
{
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  if (pread (fd, &eh, sizeof eh, 0) != (ssize_t) sizeof eh
      || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return 0;
  if (eh.e_phentsize != sizeof ph || eh.e_phnum > 128)
    return -ENOEXEC;
  for (unsigned i = 0; i < eh.e_phnum; i++)
    {
      if (pread (fd, &ph, sizeof ph, (off_t) (eh.e_phoff + i * sizeof ph))
          != (ssize_t) sizeof ph)
        return -ENOEXEC;
      if (ph.p_type != PT_INTERP)
        continue;
      if (ph.p_filesz < 2 || ph.p_filesz > 256
          || pread (fd, out, ph.p_filesz, (off_t) ph.p_offset)
             != (ssize_t) ph.p_filesz || out[ph.p_filesz - 1] != '\0')
        return -ENOEXEC;
      *off = ph.p_offset, *size = ph.p_filesz;
      return 1;
    }
  return 0;
}

/* A sealed, executable memfd copy of |fd| with |len| bytes at |off|
 * replaced by |text| (NUL-padded). */
static int
patched_copy (int fd, uint64_t off, const char *text, size_t len,
              const char *name)
{
  struct stat st;
  char pad[256] = { 0 };
  _cleanup_fd_ int m = memfd_create (name, MFD_CLOEXEC | MFD_EXEC
                                     | MFD_ALLOW_SEALING);
  off_t in = 0;
  if (m < 0 || fstat (fd, &st) < 0)
    return -errno;
  while (in < st.st_size)
    if (sendfile (m, fd, &in, (size_t) (st.st_size - in)) <= 0)
      return -EIO;
  snprintf (pad, sizeof pad, "%s", text);
  if (pwrite (m, pad, len, (off_t) off) != (ssize_t) len
      || fcntl (m, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK
                | F_SEAL_SEAL) < 0)
    return -errno;
  return cm_steal_fd (&m);
}

/* The copy of a file the caller may execute and not read (mode 0711),
 * made in the supervisor's own credentials (vr_cred_out): a memfd owned
 * by it, mode 0111, handed out as a file opened with access mode 3 —
 * neither read nor write: read, mmap and sendfile of it are EBADF or
 * EACCES, a reopen through /proc is refused by the mode, and with no
 * writer an exec of it is not ETXTBSY.  Exec'ing a file it may not read
 * makes the kernel mark the new image non-dumpable (would_dump), as for
 * the original: no /proc/<pid>/mem, no ptrace.  Its metadata cannot be
 * changed through the view (vr_fd_writable): its owner may be the
 * caller's uid. */
static int
exec_only_copy (int fd, uint64_t off, const char *text, size_t len)
{
  char link[64];
  int x = -1;
  bool was = vr_cred_out ();
  _cleanup_fd_ int m = patched_copy (fd, off, text, len, VR_EXEC_ONLY_MEMFD);
  if (m >= 0)
    {
      snprintf (link, sizeof link, "/proc/self/fd/%d", m);
      x = open (link, O_RDWR | O_WRONLY | O_CLOEXEC);
      if (x >= 0 && fchmod (m, 0111) < 0)
        close (x), x = -1;
    }
  int e = m < 0 ? -m : errno;
  vr_cred_back (was);
  return x < 0 ? -e : x;
}

/* The file |path| names, for exec: the mount's noexec and X_OK checked on
 * the very inode then read (an O_PATH fd of it, in the caller's
 * credentials: a file swapped in afterwards is not what is read), read in
 * the caller's credentials — or, where they allow exec and not read, in
 * the supervisor's own (*xonly): only a root runtime's can (an ordinary
 * user's has the caller's very ids, EACCES).  A read Landlock refuses
 * (access(2) says R_OK) stays refused. */
static int
open_exec (struct vr_call *c, int dirfd, const char *path, int flags,
           struct vr_path *p, bool *xonly)
{
  char link[64];
  struct stat st;
  int r, fd;
  *xonly = false;
  if ((r = vr_resolve_at (c, dirfd, path, flags, p)) < 0)
    return r;
  if (p->ent && p->type == S_IFLNK)
    return -ELOOP;              /* execveat's AT_SYMLINK_NOFOLLOW */
  if (p->ent == NULL || p->type != S_IFREG || p->ent->noexec)
    return -EACCES;             /* noexec: Landlock has no EXECUTE there */
  _cleanup_fd_ int pfd = vr_open (p, O_PATH, 0);
  if (pfd < 0)
    return pfd;
  if (fstat (pfd, &st) < 0 || !S_ISREG (st.st_mode))
    return -EACCES;
  if (syscall (SYS_faccessat2, pfd, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) < 0)
    return -errno;
  snprintf (link, sizeof link, "/proc/self/fd/%d", pfd);
  if ((fd = open (link, O_RDONLY | O_CLOEXEC)) >= 0 || errno != EACCES)
    return fd < 0 ? -errno : fd;
  if (syscall (SYS_faccessat2, pfd, "", R_OK, AT_EACCESS | AT_EMPTY_PATH) == 0
      || errno != EACCES)
    return -EACCES;
  bool was = vr_cred_out ();
  fd = open (link, O_RDONLY | O_CLOEXEC);
  vr_cred_back (was);
  *xonly = fd >= 0;
  return fd < 0 ? -EACCES : fd;
}

static int
open_in_view_at (struct vr_call *c, int dirfd, const char *path, int flags,
                 struct vr_path *p)
{
  int r = vr_resolve_at (c, dirfd, path, flags, p);
  if (r < 0)
    return r;
  if (p->ent && p->type == S_IFLNK)
    return -ELOOP;              /* execveat's AT_SYMLINK_NOFOLLOW */
  if (p->ent == NULL || p->type != S_IFREG)
    return -EACCES;
  return vr_open (p, O_RDONLY, 0);
}

static int
open_in_view (struct vr_call *c, const char *path, int flags, struct vr_path *p)
{
  return open_in_view_at (c, AT_FDCWD, path, flags, p);
}

/* What the kernel should exec for the ELF |fd|: itself, or a copy whose
 * interpreter is the view's, injected at |interp_num|; for a file the
 * caller may not read (|xonly|), always an exec-only copy. */
static int
prepare_elf (struct vr_call *c, int fd, int interp_num, bool xonly)
{
  char interp[256], text[32];
  uint64_t off, size;
  struct vr_path ip;
  int r = elf_interp (fd, interp, &off, &size);
  if (r == 0 && xonly)
    return exec_only_copy (fd, 0, "", 0);
  if (r <= 0)
    return r < 0 ? r : fcntl (fd, F_DUPFD_CLOEXEC, 0);
  _cleanup_fd_ int ifd = open_in_view (c, interp, 0, &ip);
  if (ifd < 0)
    return ifd == -EACCES ? -ENOENT : ifd;
  snprintf (text, sizeof text, "/proc/self/fd/%d", interp_num);
  if (strlen (text) + 1 > size)
    return -ENOEXEC;
  if ((r = inject_at (c, ifd, interp_num, true)) < 0)
    return r;
  if (xonly)
    return exec_only_copy (fd, off, text, size);
  return patched_copy (fd, off, text, size, "vroot-exec");
}

/* "#!interp [arg]" of the script |fd| → the interpreter's path, and the
 * offset of the line's end. */
static int
shebang (int fd, char interp[256], size_t *eol)
{
  char line[256];
  ssize_t n = pread (fd, line, sizeof line - 1, 0);
  char *p, *end, *nl;
  if (n < 2 || line[0] != '#' || line[1] != '!')
    return 0;
  line[n] = '\0';
  if ((nl = strchr (line, '\n')) == NULL)
    return -ENOEXEC;
  *eol = (size_t) (nl - line);
  for (p = line + 2; *p == ' ' || *p == '\t'; p++)
    ;
  end = p + strcspn (p, " \t\n");
  if (end == p)
    return -ENOEXEC;
  snprintf (interp, 256, "%.*s", (int) (end - p), p);
  return 1;
}

/* The script: its interpreter injected at VR_EXEC_FD and named on a
 * copy's #! line by its last name, which the kernel resolves in the exec
 * directory (so busybox sees argv[0] "sh", not "/proc/self/fd/N"); the
 * copy at VR_SCRIPT_FD, exec'd and then opened by the interpreter as
 * /dev/fd/VR_SCRIPT_FD (the view's /dev/fd). */
static int
prepare_script (struct vr_call *c, const struct vr_exec_fds *x, int fd,
                size_t eol, const char *interp, size_t path_len, int num,
                bool cloexec)
{
  char line[300], text[32], head[256], rel[NAME_MAX + 4];
  const char *name = strrchr (interp, '/');
  struct vr_path ip;
  struct stat st;
  off_t in = (off_t) eol;
  int r;
  snprintf (text, sizeof text, "/dev/fd/%d", x->script);
  if (path_len < strlen (text))
    return -ENOEXEC;
  name = name ? name + 1 : interp;
  _cleanup_fd_ int ifd = open_in_view (c, interp, 0, &ip);
  if (ifd < 0)
    return ifd == -EACCES ? -ENOENT : ifd;
  if ((r = gate (c, &ip)) < 0)
    return r;
  _cleanup_fd_ int efd = prepare_elf (c, ifd, x->interp, false);
  if (efd < 0)
    return efd;
  if ((r = inject_at (c, efd, x->exec, true)) < 0
      || (r = vr_exec_link (c, name, x->exec, rel)) < 0)
    return r;
  if (pread (fd, head, eol, 0) != (ssize_t) eol)
    return -EIO;
  head[eol] = '\0';
  char *arg = head + 2 + strspn (head + 2, " \t");
  arg += strcspn (arg, " \t");
  snprintf (line, sizeof line, "#!%s%s", rel, arg);
  _cleanup_fd_ int m = memfd_create ("vroot-script", MFD_CLOEXEC
                                     | MFD_ALLOW_SEALING);
  if (m < 0 || fstat (fd, &st) < 0
      || write (m, line, strlen (line)) != (ssize_t) strlen (line))
    return -EIO;
  while (in < st.st_size)
    if (sendfile (m, fd, &in, (size_t) (st.st_size - in)) <= 0)
      return -EIO;
  return inject_at (c, m, num, cloexec);
}

static int
gate (struct vr_call *c, const struct vr_path *p)
{
  char name[NAME_MAX + 1];
  int empty;
  if (p->ent->noexec)
    return -EACCES;             /* the mount's noexec (Landlock: no EXECUTE) */
  _cleanup_fd_ int fd = vr_at (c, p, name, &empty);
  if (fd < 0)
    return fd;
  if (syscall (SYS_faccessat2, fd, name, X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW
               | empty) < 0)
    return -errno;
  return 0;
}

/* The path string becomes its last name, resolved by the kernel in the
 * exec directory: never longer than the string, and argv[0], often the
 * same buffer, keeps the name programs dispatch on. */
static int
rewrite_to_name (struct vr_call *c, const struct vr_exec_fds *x,
                 uint64_t addr, const char *path)
{
  const char *name = strrchr (path, '/');
  char rel[NAME_MAX + 4];
  int r;
  name = name ? name + 1 : path;
  if ((r = vr_exec_link (c, name, x->exec, rel)) < 0)
    return r;
  /* Under a low fd limit, "XX/NAME": no room in "/x" or "x". */
  if (strlen (rel) > strlen (path))
    return -EMFILE;
  return vr_poke_mem (c, addr, rel, strlen (rel) + 1);
}

/* With a dirfd the kernel resolves a relative rewrite against it, not the
 * exec directory: the string becomes the absolute /dev/fd/VR_EXEC_FD
 * (the host's /dev/fd, as for scripts), or ENOEXEC when it is shorter. */
static int
rewrite_abs (struct vr_call *c, const struct vr_exec_fds *x, uint64_t addr,
             const char *path)
{
  char text[32];
  snprintf (text, sizeof text, "/dev/fd/%d", x->exec);
  if (strlen (path) < strlen (text))
    return -ENOEXEC;
  return vr_poke_mem (c, addr, text, strlen (text) + 1);
}

/* O_CLOEXEC of the caller's fd |fd| (its fdinfo: the supervisor's own
 * read, a ptrace-class one). */
static bool
caller_cloexec (struct vr_call *c, int fd)
{
  char path[64], buf[256], *f;
  snprintf (path, sizeof path, "/proc/%d/fdinfo/%d", (int) c->task->tgid, fd);
  bool was = vr_cred_out ();
  _cleanup_fd_ int i = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = i < 0 ? -1 : read (i, buf, sizeof buf - 1);
  vr_cred_back (was);
  if (n <= 0)
    return true;
  buf[n] = '\0';
  f = strstr (buf, "flags:");
  return f == NULL || (strtoul (f + 6, NULL, 8) & O_CLOEXEC);
}

/* The file of the caller's fd, for execveat(fd, "", AT_EMPTY_PATH):
 * readable (reopened: the fd may be O_PATH), and gated as a path exec is
 * when it lies in the view; a memfd is the container's own code; any
 * other object outside the view is refused (a copy of it would pass
 * Landlock's EXECUTE check, which the kernel makes on the original). */
static int
fd_file (struct vr_call *c, int dirfd, char vpath[PATH_MAX])
{
  char link[64], host[PATH_MAX];
  struct vr_path p;
  ssize_t n;
  int r;
  _cleanup_fd_ int dup = vr_caller_fd (c, c->task->tgid, dirfd);
  if (dup < 0)
    return dup;
  snprintf (link, sizeof link, "/proc/self/fd/%d", dup);
  if ((n = readlink (link, host, PATH_MAX - 1)) < 0)
    return -errno;
  host[n] = '\0';
  vpath[0] = '\0';
  if (host[0] == '/' && vr_host_to_virtual (c->s->v, host, vpath) == 0)
    {
      if ((r = vr_resolve (c->s->v, &c->ctx, "/", vpath, VR_NOFOLLOW, &p)) < 0)
        return r;
      if (p.ent == NULL || p.type != S_IFREG)
        return -EACCES;
      if ((r = gate (c, &p)) < 0)
        return r;
    }
  else if (!cm_startswith (host, "/memfd:"))
    return -EACCES;
  else if (syscall (SYS_faccessat2, dup, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) < 0)
    return -errno;
  r = open (link, O_RDONLY | O_CLOEXEC);
  return r < 0 ? -errno : r;
}

/* execveat(fd, "", AT_EMPTY_PATH): the kernel execs the fd's file.  A
 * static ELF goes as it is; a dynamic one, or a script, is replaced at
 * that fd number by the copy a path exec would run (its interpreter the
 * view's), keeping the fd's close-on-exec flag. */
static int64_t
exec_fd (struct vr_call *c, const struct vr_exec_fds *x, int dirfd)
{
  char interp[256], vpath[PATH_MAX];
  uint64_t off, size;
  size_t eol = 0;
  int r;
  _cleanup_fd_ int fd = fd_file (c, dirfd, vpath);
  if (fd < 0)
    return fd;
  bool cloexec = caller_cloexec (c, dirfd);
  if ((r = shebang (fd, interp, &eol)) < 0)
    return r;
  if (r > 0)
    r = prepare_script (c, x, fd, eol, interp, SIZE_MAX, dirfd, cloexec);
  else if ((r = elf_interp (fd, interp, &off, &size)) > 0)
    {
      _cleanup_fd_ int efd = prepare_elf (c, fd, x->interp, false);
      r = efd < 0 ? efd : inject_at (c, efd, dirfd, cloexec);
    }
  if (r < 0)
    return r;
  free (c->task->exe);
  c->task->exe = vpath[0] ? xstrdup (vpath) : NULL;
  return VR_CONTINUE;
}

int64_t
vr_do_exec (struct vr_call *c)
{
  const __u64 *g = c->req->data.args;
  char path[PATH_MAX], interp[256], text[32];
  bool at = c->req->data.nr == SYS_execveat;
  int dirfd = at ? (int) g[0] : AT_FDCWD, flags = at ? (int) g[4] : 0;
  uint64_t addr = at ? g[1] : g[0];
  struct vr_exec_fds x;
  struct vr_path p;
  size_t eol = 0;
  bool xonly;
  int r;

  if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
    return -EINVAL;
  if ((r = vr_read_path (c, addr, path)) < 0 || (r = vr_exec_fds (c, &x)) < 0)
    return r;
  if (path[0] == '\0')
    return (flags & AT_EMPTY_PATH) ? exec_fd (c, &x, dirfd) : -ENOENT;
  _cleanup_fd_ int fd = open_exec (c, dirfd, path, (flags & AT_SYMLINK_NOFOLLOW)
                                   ? VR_NOFOLLOW : 0, &p, &xonly);
  if (fd < 0)
    return fd;
  if ((r = shebang (fd, interp, &eol)) < 0)
    return r;
  if (r > 0 && xonly)
    return -EACCES;             /* its interpreter could not read it */
  if (r > 0)
    {
      if ((r = prepare_script (c, &x, fd, eol, interp, strlen (path),
                               x.script, false)) < 0)
        return r;
      snprintf (text, sizeof text, "/dev/fd/%d", x.script);
      r = vr_poke_mem (c, addr, text, strlen (text) + 1);
    }
  else
    {
      _cleanup_fd_ int efd = prepare_elf (c, fd, x.interp, xonly);
      if (efd < 0)
        return efd;
      if ((r = inject_at (c, efd, x.exec, true)) == 0)
        r = dirfd == AT_FDCWD ? rewrite_to_name (c, &x, addr, path)
                              : rewrite_abs (c, &x, addr, path);
    }
  if (r < 0)
    return r;
  free (c->task->exe);
  c->task->exe = xstrdup (p.vpath);
  return VR_CONTINUE;
}
