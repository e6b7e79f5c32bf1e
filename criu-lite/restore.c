/* criu_restore: verify the image, reopen what it names, reset the calling
 * process's own kernel state that would outlive its memory (signal
 * handlers, timers, rseq, fds), then hand over to the stub (stub.c).
 * Everything that can fail with a message happens before the first step
 * that cannot be undone. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/criu.h"
#include "criu-lite/restore.h"
#include "criu-lite/seal.h"
#include "criu-lite/tree.h"

static const char *const special_names[3] = { "[vvar]", "[vvar_vclock]", "[vdso]" };

static int
current_specials (struct cl_special cur[3], struct cm_err **err)
{
  _cleanup_free_ char *maps = NULL;
  char *save = NULL;
  memset (cur, 0, 3 * sizeof *cur);
  if (cm_read_file_at (AT_FDCWD, "/proc/self/maps", 64u << 20, &maps, NULL, err) < 0)
    return -1;
  for (char *l = strtok_r (maps, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      unsigned long long s, e;
      char name[64] = "";
      if (sscanf (l, "%llx-%llx %*s %*s %*s %*s %63s", &s, &e, name) < 2)
        continue;
      for (int k = 0; k < 3; k++)
        if (strcmp (name, special_names[k]) == 0)
          cur[k] = (struct cl_special) { s, e - s };
    }
  return 0;
}

/* Same kernel, same vDSO: each part the same size, the same distance
 * from [vdso] (its code reaches the data pages by fixed offsets). */
static int
check_specials (struct cl_restore *r, struct cm_err **err)
{
  const struct cl_proc *p = r->img->proc;
  r->saved[0] = (struct cl_special) { p->vvar, p->vvar_len };
  r->saved[1] = (struct cl_special) { p->vclock, p->vclock_len };
  r->saved[2] = (struct cl_special) { p->vdso, p->vdso_len };
  if (current_specials (r->cur, err) < 0)
    return -1;
  for (int k = 0; k < 3; k++)
    if (r->cur[k].len != r->saved[k].len
        || (r->cur[k].len
            && r->cur[k].addr - r->cur[2].addr != r->saved[k].addr - r->saved[2].addr))
      return cm_err_set (err, 0, "image: %s of %llu bytes, this kernel has %llu "
                         "at another offset from [vdso]", special_names[k],
                         (unsigned long long) r->saved[k].len,
                         (unsigned long long) r->cur[k].len);
  return 0;
}

static int
max_open_fd (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *e;
  int m = 2;
  if (d == NULL)
    return 1023;
  while ((e = readdir (d)) != NULL)
    if (atoi (e->d_name) > m)
      m = atoi (e->d_name);
  closedir (d);
  return m;
}

/* Moves |fd|, an fd of |what| just opened or duplicated (< 0, errno
 * set, when that failed), to the high range, closing the original. */
static int
lift (struct cl_restore *r, int fd, const char *what, struct cm_err **err)
{
  int hi;
  if (fd < 0)
    return cm_err_set (err, errno, "duplicate %s", what);
  hi = fcntl (fd, F_DUPFD_CLOEXEC, r->base_fd);
  if (hi < 0)
    {
      int e = errno;
      close (fd);
      return cm_err_set (err, e, "move %s above fd %d", what, r->base_fd);
    }
  close (fd);
  return hi;
}

/* A file replaced since the checkpoint would run other code at the saved
 * addresses (or SIGBUS past a shortened end). */
static bool
changed (int fd, const struct cl_vma *v)
{
  struct stat st;
  if (v->fsize == 0 && v->fmtime_ns == 0)
    return false;
  if (fstat (fd, &st) < 0)
    return true;
  return (uint64_t) st.st_size != v->fsize
         || (uint64_t) st.st_mtim.tv_sec * 1000000000ull
                + (uint64_t) st.st_mtim.tv_nsec != v->fmtime_ns;
}

static int
open_vma_files (struct cl_restore *r, struct cm_err **err)
{
  const struct cl_image *img = r->img;
  r->vma_fd = xmalloc ((img->nvmas + 1) * sizeof *r->vma_fd);
  for (size_t i = 0; i < img->nvmas; i++)
    {
      const struct cl_vma *v = &img->vmas[i];
      const char *path = cl_image_str (img, v->path);
      int flags = v->kind == CL_VMA_FILE_SHARED && (v->prot & PROT_WRITE) ? O_RDWR
                                                                          : O_RDONLY;
      r->vma_fd[i] = -1;
      if (v->kind == CL_VMA_ANON_SHARED && cl_shm_fd (img, v) >= 0)
        {
          /* the tree's object, shared with the other processes mapping it */
          r->vma_fd[i] = lift (r, dup (cl_shm_fd (img, v)), "shared memory", err);
          if (r->vma_fd[i] < 0)
            return -1;
          continue;
        }
      if (v->kind != CL_VMA_FILE && v->kind != CL_VMA_FILE_SHARED)
        continue;
      if (i && img->vmas[i - 1].path == v->path && r->vma_fd[i - 1] >= 0
          && img->vmas[i - 1].kind == v->kind)
        {
          r->vma_fd[i] = r->vma_fd[i - 1];
          continue;
        }
      r->vma_fd[i] = open (path, flags | O_CLOEXEC);
      if (r->vma_fd[i] < 0)
        return cm_err_set (err, errno, "open `%s` mapped at %#llx", path,
                           (unsigned long long) v->start);
      if (changed (r->vma_fd[i], v))
        return cm_err_set (err, 0, "`%s` mapped at %#llx changed since the "
                           "checkpoint (size or mtime)", path,
                           (unsigned long long) v->start);
      r->vma_fd[i] = lift (r, r->vma_fd[i], path, err);
      if (r->vma_fd[i] < 0)
        return -1;
    }
  return 0;
}

/* A listener's connections waiting to be accepted at the checkpoint are
 * not carried (that needs TCP repair): said, with the skipped fds, by the
 * fd that holds its record (once per socket). */
static void
report_queued (const struct cl_image *img, const struct cl_fd *f,
               const struct criu_restore_opts *o)
{
  const struct cl_fdx *x = cl_image_fdx (img, f->fd);
  const struct cl_fdx_listen *s;
  char what[160];
  if (f->kind != CL_FD_LISTEN || x == NULL || o->skipped == NULL)
    return;
  s = (const void *) (x + 1);
  if (s->queued == 0)
    return;
  snprintf (what, sizeof what, "fd %d: listener with %u unaccepted "
            "connection%s; they are dropped", f->fd, s->queued,
            s->queued == 1 ? "" : "s");
  o->skipped (o->skipped_arg, what);
}

static int
open_saved_fds (struct cl_restore *r, const struct criu_restore_opts *o,
                struct cm_err **err)
{
  const struct cl_image *img = r->img;
  r->fd_tmp = xmalloc ((img->nfds + 1) * sizeof *r->fd_tmp);
  for (size_t i = 0; i < img->nfds; i++)
    {
      const struct cl_fd *f = &img->fds[i];
      const char *path = cl_image_str (img, f->path);
      int fd;
      r->fd_tmp[i] = -1;
      if (f->kind == CL_FD_SKIPPED && o->skipped)
        o->skipped (o->skipped_arg, path);
      report_queued (img, f, o);
      if (f->kind == CL_FD_INHERIT && f->pos != (uint64_t) f->fd)
        {
          /* another number for the same stdio: a dup of ours */
          char what[64];
          if (fcntl ((int) f->pos, F_GETFD) < 0)
            continue;
          snprintf (what, sizeof what, "stdio %d for fd %d", (int) f->pos, f->fd);
          r->fd_tmp[i] = lift (r, dup ((int) f->pos), what, err);
          if (r->fd_tmp[i] < 0)
            return -1;
          continue;
        }
      if (f->kind == CL_FD_INHERIT || f->kind == CL_FD_SKIPPED)
        continue;
      if (f->kind == CL_FD_PIPE || f->kind == CL_FD_FIFO)
        {
          /* the tree's pipe, inherited from the root restorer */
          fd = dup (cl_pipes_end (f));
          if (fd < 0)
            return cm_err_set (err, errno, "fd %d: its pipe", f->fd);
          r->fd_tmp[i] = lift (r, fd, path, err);
          if (r->fd_tmp[i] < 0)
            return -1;
          continue;
        }
      if (f->kind >= CL_FD_EVENTFD && f->kind <= CL_FD_LISTEN)
        {
          /* the tree's object, inherited from the root restorer */
          fd = dup (cl_fdx_fd (f));
          if (fd < 0)
            return cm_err_set (err, errno, "fd %d: its object", f->fd);
          if ((r->fd_tmp[i] = lift (r, fd, "its object", err)) < 0)
            return -1;
          continue;
        }
      fd = open (path, (int) (f->flags & ~(uint32_t) (O_CREAT | O_EXCL | O_TRUNC))
                           | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        return cm_err_set (err, errno, "fd %d: reopen `%s`", f->fd, path);
      if (f->kind == CL_FD_FILE && lseek (fd, (off_t) f->pos, SEEK_SET) < 0)
        {
          int e = errno;
          close (fd);
          return cm_err_set (err, e, "fd %d: seek `%s` to %llu", f->fd, path,
                             (unsigned long long) f->pos);
        }
      r->fd_tmp[i] = lift (r, fd, path, err);
      if (r->fd_tmp[i] < 0)
        return -1;
    }
  return 0;
}

static bool
inherited (const struct cl_image *img, int fd)
{
  for (size_t i = 0; i < img->nfds; i++)
    if (img->fds[i].fd == fd && img->fds[i].kind == CL_FD_INHERIT
        && img->fds[i].pos == (uint64_t) fd)
      return true;
  return false;
}

/* Past the point of no return: the caller's own fds go, the saved ones
 * take their numbers. */
static void
install_fds (struct cl_restore *r)
{
  const struct cl_image *img = r->img;
  for (int fd = 0; fd < r->base_fd; fd++)
    if (!inherited (img, fd))
      close (fd);
  for (size_t i = 0; i < img->nfds; i++)
    if (r->fd_tmp[i] >= 0)
      dup3 (r->fd_tmp[i], img->fds[i].fd, img->fds[i].flags & O_CLOEXEC);
}

/* The epolls' registrations, the fds at their numbers.  The image was
 * checked (every watched fd is restored), so this fails only if the
 * kernel refuses what it once accepted: reported like a stub failure. */
static void
epoll_fill (struct cl_restore *r)
{
  int e = cl_fdx_epoll_fill (r->img);
  int32_t code = (CL_PHASE_EPOLL << 16) | (e & 0xffff);
  if (e == 0)
    return;
  if (r->report_fd >= 0 && write (r->report_fd, &code, 4) < 0)
    e = errno;
  _exit (120 + CL_PHASE_EPOLL);
}

/* Signal actions as saved (every signal is blocked until rt_sigreturn
 * installs the saved mask, so none can run before its code is back), the
 * saved interval timers, umask and name. */
static void
reset_process (const struct cl_proc *p)
{
  uint64_t all = ~0ull;
  syscall (SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, 8);
  for (int s = 1; s <= 64; s++)
    if (s != SIGKILL && s != SIGSTOP)
      syscall (SYS_rt_sigaction, s, p->sigaction[s - 1], NULL, 8);
  for (int w = 0; w < 3; w++)
    syscall (SYS_setitimer, w, p->itimer[w], NULL);
  umask (p->umask);
  prctl (PR_SET_NAME, p->comm, 0, 0, 0);
}

static void
set_rlimits (const struct cl_proc *p)
{
  for (int i = 0; i < 16; i++)
    {
      struct rlimit rl = { p->rlim[i][0], p->rlim[i][1] }, cur;
      if (setrlimit (i, &rl) == 0 || getrlimit (i, &cur) < 0)
        continue;
      /* A hard limit above ours cannot be raised: keep ours, never more. */
      if (rl.rlim_max > cur.rlim_max)
        rl.rlim_max = cur.rlim_max;
      if (rl.rlim_cur > rl.rlim_max)
        rl.rlim_cur = rl.rlim_max;
      setrlimit (i, &rl);
    }
}

/* glibc registered rseq for this thread at an address that is about to be
 * unmapped; the kernel would write there on every preemption. */
static void
rseq_unregister (void)
{
  /* glibc's __rseq_offset/__rseq_size live in ld.so: read through dlsym,
   * so the binary does not name ld-linux as a needed library. */
  const ptrdiff_t *off = dlsym (RTLD_DEFAULT, "__rseq_offset");
  const unsigned int *size = dlsym (RTLD_DEFAULT, "__rseq_size");
  char *area;
  if (off == NULL || size == NULL || *size == 0)
    return;
  area = (char *) __builtin_thread_pointer () + *off;
  if (syscall (SYS_rseq, area, *size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) < 0)
    syscall (SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
}

/* Every saved fd number must fit under the caller's open-file limit
 * (the fds go to their numbers past the point of no return, where a
 * failure would only lose one). */
static int
check_fd_numbers (const struct cl_image *img, struct cm_err **err)
{
  struct rlimit nofile;
  int top = img->nfds ? img->fds[img->nfds - 1].fd : -1;
  if (top < 0 || getrlimit (RLIMIT_NOFILE, &nofile) < 0
      || (rlim_t) top < nofile.rlim_cur)
    return 0;
  return cm_err_set (err, 0, "fd %d: at or above the restoring process's "
                     "open-file limit (RLIMIT_NOFILE %llu)", top,
                     (unsigned long long) nofile.rlim_cur);
}

static int
prepare (struct cl_restore *r, const struct criu_restore_opts *o,
         struct cm_err **err)
{
  const struct cl_image *img = r->img;
  int maxfd = max_open_fd ();
  if (check_fd_numbers (img, err) < 0)
    return -1;
  if (img->nfds && img->fds[img->nfds - 1].fd > maxfd)
    maxfd = img->fds[img->nfds - 1].fd;
  r->base_fd = maxfd + 1;
  if (check_specials (r, err) < 0)
    return -1;
  r->pages_fd = lift (r, dup (img->pages_fd), "pages.img", err);
  if (r->pages_fd < 0)
    return -1;
  if (o->report_fd >= 0)
    {
      r->report_fd = lift (r, dup (o->report_fd), "the report fd", err);
      if (r->report_fd < 0)
        return -1;
    }
  if (open_vma_files (r, err) < 0 || open_saved_fds (r, o, err) < 0)
    return -1;
  if (chdir (cl_image_str (img, img->proc->cwd)) < 0)
    return cm_err_set (err, errno, "chdir `%s`", cl_image_str (img, img->proc->cwd));
  if ((uint32_t) personality (0xffffffff) != img->proc->personality
      && personality (img->proc->personality) < 0)
    return cm_err_set (err, errno, "personality %#x", img->proc->personality);
  return cl_restore_plan (r, err);
}

/* Nothing of the caller is gone yet: close what was opened. */
static void
restore_abort (struct cl_restore *r, struct cl_image *img)
{
  for (int fd = r->base_fd; fd > 0 && fd < r->base_fd + 4096; fd++)
    if (fcntl (fd, F_GETFD) >= 0)
      close (fd);
  if (r->base)
    munmap ((void *) r->base, r->total);
  free (r->vma_fd);
  free (r->fd_tmp);
}

/* Everything that can fail with a message, for one process. */
static int
restore_prepare (struct cl_restore *r, struct cl_image *img, pid_t saved,
                 int report_fd, const struct criu_restore_opts *o,
                 struct cm_err **err)
{
  struct criu_restore_opts one = *o;
  memset (r, 0, sizeof *r);
  r->img = img;
  r->report_fd = -1;
  r->seal = o->seal;
  one.report_fd = report_fd;
  if (cl_seal_run (o->narrow, "narrow", err) < 0)
    return cm_err_wrap (err, "restore of process %d", saved);
  if (prepare (r, &one, err) < 0)
    {
      restore_abort (r, img);
      return cm_err_wrap (err, "restore of process %d", saved);
    }
  return 0;
}

/* The point of no return. */
static void __attribute__ ((noreturn))
restore_commit (struct cl_restore *r)
{
  const struct cl_image *img = r->img;
  r->plan->pages_fd = r->pages_fd;
  r->plan->report_fd = r->report_fd;
  r->plan->close_from = r->base_fd;
  r->plan->use_set_tid
      = getpid () == (pid_t) ((const struct cl_thread *) img->threads)->tid;
  reset_process (img->proc);
  install_fds (r);
  epoll_fill (r);
  set_rlimits (img->proc);
  rseq_unregister ();
  __asm__ volatile ("mov %0, %%rsp\n\t"
                    "mov %1, %%rdi\n\t"
                    "call *%2\n\t"
                    "ud2"
                    :
                    : "r"(r->stack_top), "r"(r->plan), "r"(r->entry)
                    : "memory");
  __builtin_unreachable ();
}

struct tree_ctx
{
  const struct criu_restore_opts *o;
  struct criu_image *ci;
  struct cl_tree_rec *recs;
  pid_t *now;                  /* the pid each saved process has now */
  size_t n;
  bool same_pids;
  int syncw;
};

static int
index_of (const struct tree_ctx *t, pid_t saved)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->recs[i].pid == saved)
      return (int) i;
  return -1;
}

/* Session and process group as saved, for process |i| (the caller). */
static int
set_ids (struct tree_ctx *t, size_t i, struct cm_err **err)
{
  const struct cl_tree_rec *r = &t->recs[i];
  int leader = index_of (t, r->pgid);
  if (r->sid == r->pid && getsid (0) != getpid () && setsid () < 0)
    return cm_err_set (err, errno, "process %d: setsid", r->pid);
  if (r->sid == r->pid || leader < 0 || getpgid (0) == t->now[leader])
    return 0;
  if (t->now[leader] <= 0)
    return cm_err_set (err, 0, "process %d: its group leader %d is not "
                       "restored before it", r->pid, r->pgid);
  if (setpgid (0, leader == (int) i ? 0 : t->now[leader]) < 0)
    return cm_err_set (err, errno, "process %d: join process group %d", r->pid,
                       r->pgid);
  return 0;
}

static pid_t
fork_as (const struct tree_ctx *t, pid_t saved)
{
  struct cl_clone_args a;
  pid_t want = saved;
  if (!t->same_pids)
    return fork ();
  memset (&a, 0, sizeof a);
  a.exit_signal = SIGCHLD;
  a.set_tid = (uint64_t) (uintptr_t) &want;
  a.set_tid_size = 1;
  {
    pid_t pid = (pid_t) syscall (SYS_clone3, &a, sizeof a);
    /* a seccomp filter that answers clone3 with ENOSYS (the container's):
     * the process comes back under another pid */
    if (pid < 0 && errno == ENOSYS)
      return fork ();
    return pid;
  }
}

static void __attribute__ ((noreturn)) become (struct tree_ctx *t, size_t i);

/* Forks a restorer for every child of process |i|, each of which forks
 * its own children first: parent links come back as they were. */
static int
fork_children (struct tree_ctx *t, size_t i, struct cm_err **err)
{
  for (size_t j = i + 1; j < t->n; j++)
    {
      pid_t pid;
      if (t->recs[j].ppid != t->recs[i].pid)
        continue;
      pid = fork_as (t, t->recs[j].pid);
      if (pid < 0)
        return cm_err_set (err, errno, "fork the restorer of process %d%s",
                           t->recs[j].pid, t->same_pids ? " with its pid" : "");
      if (pid == 0)
        {
          t->now[j] = getpid ();
          become (t, j);
        }
      t->now[j] = pid;
    }
  return 0;
}

static void
become (struct tree_ctx *t, size_t i)
{
  struct cm_err *err = NULL;
  struct cl_restore r;
  int32_t fail = -1;

  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (set_ids (t, i, &err) == 0 && fork_children (t, i, &err) == 0
      && restore_prepare (&r, &t->ci->procs[i], t->recs[i].pid, t->syncw,
                          t->o, &err) == 0)
    restore_commit (&r);
  if (write (t->syncw, &fail, 4) == 4 && err)
    fail = (int32_t) write (t->syncw, err->msg, strlen (err->msg));
  _exit (1);
}

/* A restorer that failed before its children resumed takes them along
 * (theirs carry PR_SET_PDEATHSIG). */
static void
kill_children (struct tree_ctx *t)
{
  for (size_t i = 1; i < t->n; i++)
    if (t->now[i] > 0 && t->recs[i].ppid == t->recs[0].pid)
      kill (t->now[i], SIGKILL);
}

/* Waits for the n-1 descendants' reports: 0 each once resumed. */
static int
wait_descendants (struct tree_ctx *t, int syncr, struct cm_err **err)
{
  for (size_t k = 1; k < t->n; k++)
    {
      int32_t code = -2;
      if (cm_read_all (syncr, &code, 4) != 4)
        return cm_err_set (err, 0, "a restored process died before resuming");
      if (code == -1)
        {
          char msg[1024];
          ssize_t got = read (syncr, msg, sizeof msg - 1);
          msg[got > 0 ? got : 0] = '\0';
          return cm_err_set (err, 0, "%s", msg);
        }
      if (code != 0)
        return cm_err_set (err, 0, "a restored process failed in phase %d "
                           "(errno %d)", code >> 16, code & 0xffff);
    }
  return 0;
}

/* The root's children and theirs, before the root opens anything: the
 * read end of their report pipe in |*syncr|. */
static int
fork_tree (struct tree_ctx *t, int *syncr, struct cm_err **err)
{
  int sync[2];
  int r;
  *syncr = -1;
  if (t->n < 2)
    return 0;
  if (pipe2 (sync, O_CLOEXEC) < 0)
    return cm_err_set (err, errno, "pipe");
  t->syncw = sync[1];
  r = fork_children (t, 0, err);
  close (sync[1]);
  t->syncw = -1;
  *syncr = sync[0];
  if (r < 0)
    kill_children (t);
  return r;
}

int
criu_image_check (const char *image_dir, struct cm_err **err)
{
  struct cl_image img;
  _cleanup_free_ char *tree = xasprintf ("%s/tree.img", image_dir);
  if (access (tree, F_OK) == 0)
    {
      struct criu_image *ci = criu_image_open (image_dir, err);
      criu_image_free (ci);
      return ci ? 0 : -1;
    }
  if (cl_image_load (image_dir, &img, err) < 0)
    return -1;
  cl_image_free (&img);
  return 0;
}

static int
open_tmpfs (struct criu_image *ci, const char *dir, struct cm_err **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/tmpfs.img", dir);
  ci->tmpfs_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (ci->tmpfs_fd < 0)
    return cm_err_set (err, errno, "open `%s`", path);
  if (cl_tmpfs_check (ci->tmpfs_fd, err) < 0)
    return cm_err_wrap (err, "image `%s`", dir);
  return 0;
}

struct criu_image *
criu_image_open (const char *dir, struct cm_err **err)
{
  struct criu_image *ci = xcalloc (1, sizeof *ci);
  ci->tmpfs_fd = -1;
  if (cl_tree_load (dir, &ci->recs, &ci->n, err) < 0)
    {
      free (ci);
      return NULL;
    }
  if (open_tmpfs (ci, dir, err) < 0)
    {
      criu_image_free (ci);
      return NULL;
    }
  ci->procs = xcalloc (ci->n, sizeof *ci->procs);
  for (size_t i = 0; i < ci->n; i++)
    {
      _cleanup_free_ char *sub = xasprintf ("%s/%d", dir, ci->recs[i].pid);
      ci->procs[i].pages_fd = -1;
      if (cl_image_load (sub, &ci->procs[i], err) < 0)
        {
          criu_image_free (ci);
          return NULL;
        }
    }
  return ci;
}

void
criu_image_free (struct criu_image *ci)
{
  if (ci == NULL)
    return;
  for (size_t i = 0; ci->procs && i < ci->n; i++)
    cl_image_free (&ci->procs[i]);
  if (ci->tmpfs_fd >= 0)
    close (ci->tmpfs_fd);
  free (ci->procs);
  free (ci->recs);
  free (ci);
}

size_t
criu_image_nfds (const struct criu_image *ci)
{
  return ci->n + 1;
}

/* The image's fd number |i| of criu_image_nfds. */
static int *
image_fd (struct criu_image *ci, size_t i)
{
  return i < ci->n ? &ci->procs[i].pages_fd : &ci->tmpfs_fd;
}

int
criu_image_place_fds (struct criu_image *ci, int first, struct cm_err **err)
{
  size_t n = criu_image_nfds (ci);
  int above = first + (int) n;
  /* out of the way first: one of them may already sit in the range */
  for (size_t i = 0; i < n; i++)
    {
      int *fd = image_fd (ci, i), hi = fcntl (*fd, F_DUPFD_CLOEXEC, above);
      if (hi < 0)
        return cm_err_set (err, errno, "move an image fd above %d", above);
      close (*fd);
      *fd = hi;
    }
  for (size_t i = 0; i < n; i++)
    {
      int want = first + (int) i, *fd = image_fd (ci, i);
      if (dup3 (*fd, want, O_CLOEXEC) < 0)
        return cm_err_set (err, errno, "move an image fd to %d", want);
      close (*fd);
      *fd = want;
    }
  return 0;
}

/* The tmpfs contents are written with the rights of the processes that
 * will own them (the narrow list): in a helper process, since the root
 * restorer keeps its own to fork the tree.  The helper's pid is free
 * again, reaped, before any saved pid is asked for. */
static int
tmpfs_narrowed (int fd, const struct criu_restore_opts *o, struct cm_err **err)
{
  int p[2], st = 0;
  char msg[1024];
  ssize_t n;
  pid_t pid;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return cm_err_set (err, errno, "pipe");
  pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return cm_err_set (err, errno, "fork the tmpfs writer");
    }
  if (pid == 0)
    {
      struct cm_err *e = NULL;
      close (p[0]);
      if (cl_seal_run (o->narrow, "narrow", &e) == 0
          && cl_tmpfs_restore (fd, &e) == 0)
        _exit (0);
      if (write (p[1], e->msg, strlen (e->msg)) < 0)
        _exit (2);
      _exit (1);
    }
  close (p[1]);
  n = cm_read_all (p[0], msg, sizeof msg - 1);
  close (p[0]);
  msg[n > 0 ? n : 0] = '\0';
  while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (st) && WEXITSTATUS (st) == 0)
    return 0;
  return cm_err_set (err, 0, "%s", msg[0] ? msg : "the tmpfs writer died");
}

int
criu_restore_image (struct criu_image *ci, const struct criu_restore_opts *o,
                    struct cm_err **err)
{
  struct tree_ctx t = { .o = o, .ci = ci, .recs = ci->recs, .n = ci->n,
                        .syncw = -1 };
  struct cl_restore r;
  int ret;

  int syncr = -1;

  if (cl_seal_check (o->narrow, "narrow", err) < 0
      || cl_seal_check (o->seal, "seal", err) < 0)
    return -1;
  t.now = xcalloc (t.n, sizeof *t.now);
  t.now[0] = getpid ();
  t.same_pids = getpid () == t.recs[0].pid;
  ret = set_ids (&t, 0, err);
  /* the files first: a FIFO or file the processes hold may live there */
  if (ret == 0 && ci->tmpfs_fd >= 0)
    ret = tmpfs_narrowed (ci->tmpfs_fd, o, err);
  if (ret == 0)
    ret = cl_pipes_make (ci->procs, ci->n, err);
  if (ret == 0)
    ret = cl_fdx_make (ci->procs, ci->n, err);
  if (ret == 0)
    ret = cl_shm_make (ci->procs, ci->recs, ci->n, err);
  if (ret == 0)
    ret = fork_tree (&t, &syncr, err);
  if (ret == 0
      && (ret = restore_prepare (&r, &ci->procs[0], t.recs[0].pid,
                                 o->report_fd, o, err)) < 0)
    kill_children (&t);
  if (ret == 0 && syncr >= 0 && (ret = wait_descendants (&t, syncr, err)) < 0)
    {
      kill_children (&t);
      restore_abort (&r, &ci->procs[0]);
    }
  if (syncr >= 0)
    close (syncr);
  if (ret == 0)
    restore_commit (&r);
  cl_pipes_close ();
  cl_fdx_close ();
  cl_shm_close ();
  free (t.now);
  return ret;
}

int
criu_restore (const struct criu_restore_opts *o, struct cm_err **err)
{
  struct criu_image *ci = criu_image_open (o->image_dir, err);
  int ret;
  if (ci == NULL)
    return -1;
  ret = criu_restore_image (ci, o, err);
  criu_image_free (ci);
  return ret;
}
