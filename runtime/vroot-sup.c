/* The namespace-less supervisor: per-call plumbing (who is asking, their
 * memory and fds, the answer) and the dispatch to the handler files
 * (runtime/vroot-sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <seccomp.h>

#include "common/util.h"
#include "vroot-pid.h"
#include "vroot-sup.h"
#include "vroot-thread.h"
#include "vroot-xs.h"

const char *const vr_serviced_syscalls[] = {
  "open", "creat", "openat", "openat2", "execve", "execveat",
  "stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
  "readlink", "readlinkat", "statfs", "getcwd", "chdir", "fchdir",
  "mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "rename", "renameat",
  "renameat2", "symlink", "symlinkat", "link", "linkat", "chmod", "fchmodat",
  "fchmodat2", "chown", "lchown", "fchownat", "truncate", "utimensat",
  "mknod", "mknodat", "connect", "bind", "getdents64",
  "getxattr", "lgetxattr", "setxattr", "lsetxattr", "listxattr", "llistxattr",
  "removexattr", "lremovexattr", "uname",
  "fchmod", "fchown", "fsetxattr", "fremovexattr",
  "setxattrat", "getxattrat", "listxattrat", "removexattrat",
  "sendto", "sendmsg", "sendmmsg", "listen", "getsockname", "getpeername",
  NULL,
};

const char *const vr_refused_syscalls[] = {
  /* would resolve a path against the host root */
  "chroot", "pivot_root", "mount", "umount2", "open_tree", "open_tree_attr",
  "move_mount", "fsopen", "fspick", "mount_setattr", "name_to_handle_at",
  "open_by_handle_at", "inotify_add_watch", "fanotify_mark", "uselib",
  "swapon", "swapoff", "acct", "quotactl", "utime", "utimes", "futimesat",
  "getdents",
  "statmount", "listmount", "file_getattr", "file_setattr",
  /* io_uring does opens, stats and connects without system calls: none of
   * them would pass through the view */
  "io_uring_setup", "io_uring_enter", "io_uring_register",
  /* without an IPC namespace these are the host's */
  "mq_open", "mq_unlink", "shmget", "shmat", "shmdt", "shmctl", "msgget",
  "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semctl", "semtimedop",
  /* without a UTS namespace a root container would rename the host; the
   * names it sees are config.json's (uname is serviced) */
  "sethostname", "setdomainname",
  NULL,
};

/* Calls newer than the libseccomp the runtime is built with (Debian 12's
 * 2.5.4 knows none of these): their numbers, the same on every
 * architecture since the syscall tables were unified (424 on). */
static const struct
{
  const char *name;
  int nr;
} newer[] = {
  { "fchmodat2", 452 }, { "statmount", 457 }, { "listmount", 458 },
  { "setxattrat", 463 }, { "getxattrat", 464 }, { "listxattrat", 465 },
  { "removexattrat", 466 }, { "open_tree_attr", 467 },
  { "file_getattr", 468 }, { "file_setattr", 469 },
};

static int
syscall_nr (const char *name)
{
  int nr = seccomp_syscall_resolve_name (name);
  for (size_t i = 0; nr == __NR_SCMP_ERROR && i < ARRAY_SIZE (newer); i++)
    if (strcmp (newer[i].name, name) == 0)
      nr = newer[i].nr;
  return nr == __NR_SCMP_ERROR ? -1 : nr;
}

void
vr_sup_init (struct vr_sup *s, const struct vroot *v, pid_t init,
             const char *cwd, int exec_dir)
{
  memset (s, 0, sizeof *s);
  s->v = v;
  s->init = init;
  s->init_cwd = xstrdup (cwd);
  s->exec_dir = exec_dir;
  umask (0);                    /* the caller's umask is applied per call */
}

void
vr_sup_fini (struct vr_sup *s)
{
  vr_dcache_clear (&s->dcache);
  for (size_t i = 0; i < s->nt; i++)
    free (s->t[i].cwd), free (s->t[i].exe);
  free (s->t);
  free (s->init_cwd);
  vr_sockname_free (s);
  memset (s, 0, sizeof *s);
}

/* A process is the container's when its parent chain reaches the init
 * (the init is a subreaper: setsid and double forks stay under it) —
 * except the exec server and its handlers, the runtime's own, whose
 * processes are the container's again (vroot-xs.h). */
static bool
pid_ok (void *ud, pid_t pid)
{
  const struct vr_sup *s = ((struct vr_call *) ud)->s;
  pid_t below = 0;
  for (int i = 0; i < 64 && pid > 1; i++)
    {
      if (pid == s->init)
        return i == 0 || i > 2 || !vr_xs_is_server (below);
      below = pid;
      pid = (pid_t) vr_status_field (pid, "PPid:", 10);
    }
  return false;
}

/* Forgets the thread groups that are gone (checked when a new one
 * registers: the table stays as large as the container's live processes).
 * A pid reused by a new process of the container before the sweep would
 * take the old one's cwd: it is found, not registered (docs/nsless.md). */
static void
sweep (struct vr_sup *s)
{
  size_t out = 0;
  for (size_t i = 0; i < s->nt; i++)
    {
      if (kill (s->t[i].tgid, 0) < 0 && errno == ESRCH)
        {
          free (s->t[i].cwd), free (s->t[i].exe);
          continue;
        }
      s->t[out++] = s->t[i];
    }
  s->nt = out;
}

/* The thread group's entry; a new one starts from its parent's cwd and
 * exe (their values at the child's first serviced call: docs/nsless.md). */
static struct vr_task *
task_of (struct vr_sup *s, pid_t tgid)
{
  const char *cwd = s->init_cwd, *exe = NULL;
  pid_t ppid;
  for (size_t i = 0; i < s->nt; i++)
    if (s->t[i].tgid == tgid)
      return &s->t[i];
  ppid = (pid_t) vr_status_field (tgid, "PPid:", 10);
  sweep (s);
  for (size_t i = 0; i < s->nt; i++)
    if (s->t[i].tgid == ppid)
      cwd = s->t[i].cwd, exe = s->t[i].exe;
  s->t = xrealloc (s->t, (s->nt + 1) * sizeof *s->t);
  s->t[s->nt] = (struct vr_task) { .tgid = tgid, .cwd = xstrdup (cwd),
                                   .exe = exe ? xstrdup (exe) : NULL };
  return &s->t[s->nt++];
}

static int
magic (void *ud, pid_t pid, const char *name, char out[PATH_MAX])
{
  struct vr_call *c = ud;
  char link[64], host[PATH_MAX];
  ssize_t n;
  if (strcmp (name, "root") == 0)
    return snprintf (out, PATH_MAX, "/"), 0;
  if (strcmp (name, "cwd") == 0)
    {
      /* Looked up, never registered here: registering may move the table
       * under c->task. */
      const char *cwd = c->s->init_cwd;
      for (size_t i = 0; i < c->s->nt; i++)
        if (c->s->t[i].tgid == pid)
          cwd = c->s->t[i].cwd;
      return snprintf (out, PATH_MAX, "%s", cwd), 0;
    }
  if (strcmp (name, "exe") == 0 && pid == c->task->tgid && c->task->exe)
    return snprintf (out, PATH_MAX, "%s", c->task->exe), 0;
  if (strcmp (name, "exe") != 0 && !cm_startswith (name, "fd/"))
    return -EACCES;
  snprintf (link, sizeof link, "/proc/%d/%s", (int) pid, name);
  /* The caller reads its own links whatever its ids (the kernel lets a
   * thread group); another's only as its own credentials allow. */
  bool was = pid == c->task->tgid && vr_cred_out ();
  n = readlink (link, host, sizeof host - 1);
  int e = errno;
  vr_cred_back (was);
  if (n < 0)
    return -e;
  host[n] = '\0';
  if (host[0] != '/')           /* pipe:[…], socket:[…], anon_inode:… */
    return snprintf (out, PATH_MAX, "%s", host), 0;
  if (vr_host_to_virtual (c->s->v, host, out) == 0)
    return 0;
  /* An fd to something outside the view (inherited): named like the
   * kernel names what has no path, never by its host path. */
  struct stat st;
  if (!cm_startswith (name, "fd/") || stat (link, &st) < 0)
    return -EACCES;
  return snprintf (out, PATH_MAX, "file:[%llu]", (unsigned long long) st.st_ino), 0;
}

typedef int64_t (*vr_fn) (struct vr_call *c);

static vr_fn
handler_for (int nr)
{
  switch (nr)
    {
    case SYS_open: case SYS_creat: case SYS_openat: case SYS_openat2:
      return vr_do_open;
    case SYS_execve: case SYS_execveat:
      return vr_do_exec;
    case SYS_stat: case SYS_lstat: case SYS_newfstatat: case SYS_statx:
      return vr_do_stat;
    case SYS_access: case SYS_faccessat: case SYS_faccessat2:
      return vr_do_access;
    case SYS_readlink: case SYS_readlinkat:
      return vr_do_readlink;
    case SYS_statfs:
      return vr_do_statfs;
    case SYS_getcwd: case SYS_chdir: case SYS_fchdir:
      return vr_do_cwd;
    case SYS_connect: case SYS_bind:
      return vr_do_sock;
    case SYS_getdents64:
      return vr_do_getdents;
    case SYS_getxattr: case SYS_lgetxattr: case SYS_setxattr:
    case SYS_lsetxattr: case SYS_listxattr: case SYS_llistxattr:
    case SYS_removexattr: case SYS_lremovexattr:
    case 463: case 464: case 465: case 466:   /* the *xattrat calls */
      return vr_do_xattr;
    case SYS_uname:
      return vr_do_uname;
    case SYS_sendto: case SYS_sendmsg: case SYS_sendmmsg:
      return vr_do_send;
    case SYS_listen:
      return vr_do_listen;
    case SYS_getsockname: case SYS_getpeername:
      return vr_do_sockname;
    case SYS_fchmod: case SYS_fchown: case SYS_fsetxattr:
    case SYS_fremovexattr:
      return vr_do_fdmeta;
    default:
      return vr_do_write;
    }
}

static int64_t
refuse (struct vr_call *c)
{
  return -EPERM;
}

/* Resolved once per supervisor: a libseccomp name lookup per call would
 * cost more than the call. */
static bool
serviced (int nr)
{
  static int nrs[96];
  static size_t n;
  static bool done;
  if (!done)
    {
      for (size_t i = 0; vr_serviced_syscalls[i] && n < ARRAY_SIZE (nrs); i++)
        {
          int x = syscall_nr (vr_serviced_syscalls[i]);
          if (x >= 0)
            nrs[n++] = x;
        }
      done = true;
    }
  for (size_t i = 0; i < n; i++)
    if (nrs[i] == nr)
      return true;
  return false;
}

int
vr_sup_answer (struct vr_sup *s, int listener, const struct seccomp_notif *req,
               struct seccomp_notif_resp *resp)
{
  struct vr_call c = { .s = s, .listener = listener, .req = req,
                       .tid = (pid_t) req->pid };
  long tgid = -1;
  int64_t r;

  /* A thread group leader already known needs no /proc read, nor a
   * thread whose credentials are kept (vroot-thread.c). */
  for (size_t i = 0; i < s->nt && tgid < 0; i++)
    if (s->t[i].tgid == c.tid)
      tgid = c.tid;
  if (tgid < 0)
    tgid = vr_thread_tgid (c.tid);
  if (tgid < 0)
    tgid = vr_status_field (c.tid, "Tgid:", 10);

  if (tgid <= 0)
    {
      resp->error = -ESRCH;     /* gone: nobody reads the answer */
      return 0;
    }
  if (s->init == 0)
    s->init = (pid_t) tgid;     /* the filter is installed by the init */
  /* Credentials (and the umask) change by the container's own calls
   * (vroot-thread.c): the next call reads them again; the kernel does
   * this one. */
  if (vr_cred_syscall (req->data.nr))
    {
      vr_thread_changes (c.tid, req->data.nr);
      resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      return 0;
    }
  /* A call naming another process by pid (vroot-pid.c). */
  if (vr_pid_call (req->data.nr))
    {
      int e = vr_pid_check (s->init, c.tid, (pid_t) tgid, &req->data);
      if (e < 0)
        resp->error = e;
      else
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      return 0;
    }
  c.task = task_of (s, (pid_t) tgid);
  c.ctx = (struct vr_ctx) { .tgid = (pid_t) tgid, .tid = c.tid,
                            .cwd = c.task->cwd, .pid_ok = pid_ok,
                            .magic = magic, .ud = &c };
  vr_fn fn = serviced (req->data.nr) ? handler_for (req->data.nr) : refuse;
  /* Whose rights: the caller's (vroot-cred.c), kept after the call: the
   * next call of the same credentials switches nothing (vroot-run.c's
   * ops.idle gives them back before the supervisor acts on its own). */
  if ((r = vr_cred_enter (c.tid, false)) >= 0)
    r = fn (&c);
  if (fn == vr_do_exec)
    vr_thread_exec (c.tid, (pid_t) tgid);
  /* A name may now lead elsewhere, or a directory be searchable by fewer:
   * the pinned parents are forgotten (xattrs too: an ACL changes who may
   * search a directory; fchmod/fchown of a directory the same). */
  if (fn == vr_do_write || fn == vr_do_xattr || fn == vr_do_fdmeta)
    vr_dcache_clear (&s->dcache);
  if (r == VR_ANSWERED)
    return 1;
  if (r == VR_CONTINUE)
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  else if (r < 0)
    resp->error = (int32_t) r;
  else
    resp->val = r;
  return 0;
}

int
vr_sup_handle (struct vr_sup *s, int listener, const struct seccomp_notif *req)
{
  struct seccomp_notif_resp resp = { .id = req->id };
  if (vr_sup_answer (s, listener, req, &resp) == 1)
    return 0;
  if (ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
    return -errno;
  return 0;
}

size_t
vr_trapped_syscalls (int *out, size_t max)
{
  const char *const *lists[] = { vr_serviced_syscalls, vr_refused_syscalls };
  size_t n = 0;
  for (size_t l = 0; l < 2; l++)
    for (size_t i = 0; lists[l][i]; i++)
      {
        int nr = syscall_nr (lists[l][i]);
        if (nr >= 0 && n < max)
          out[n++] = nr;
      }
  for (size_t i = 0; vr_cred_syscalls[i] >= 0; i++)
    if (n < max)
      out[n++] = vr_cred_syscalls[i];
  return n;
}
