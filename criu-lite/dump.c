/* criu_dump: stop the whole tree, read every process, write, let go
 * (criu-lite/criu.h).  Every process is stopped before the first one is
 * read, so the image is one instant of the tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/criu.h"
#include "criu-lite/tree.h"

/* criu_dump_opts.freeze, called directly or, from the chrooted helper,
 * by asking the caller over |sock| (dump_from_target_root). */
struct freezer
{
  const struct criu_dump_opts *o;
  int sock;
};

/* |keep|: frozen for good (leave_frozen), not only while seizing. */
static int
freezer_set (const struct freezer *f, bool frozen, bool keep,
             struct cm_err **err)
{
  char req = frozen ? (keep ? 'P' : 'F') : 'T';
  struct
  {
    int32_t code;
    char msg[1020];
  } rep;
  ssize_t n;
  if (f->o->freeze == NULL)
    return 0;
  if (f->sock < 0)
    return f->o->freeze (f->o->freeze_arg, frozen, err);
  memset (&rep, 0, sizeof rep);
  if (write (f->sock, &req, 1) != 1
      || (n = read (f->sock, &rep, sizeof rep - 1)) < (ssize_t) sizeof rep.code)
    return cm_err_set (err, EIO, "ask the caller to %s the tree",
                       frozen ? "freeze" : "thaw");
  if (rep.code == 0)
    return 0;
  return cm_err_set (err, rep.code, "%s", rep.msg);
}

/* The caller's side of freezer_set, until the helper exits; a helper
 * that died with the tree frozen for the seize leaves it thawed. */
static void
serve_freezer (const struct criu_dump_opts *o, int sock)
{
  char req;
  bool frozen = false;
  while (read (sock, &req, 1) == 1)
    {
      struct cm_err *e = NULL;
      struct
      {
        int32_t code;
        char msg[1020];
      } rep;
      memset (&rep, 0, sizeof rep);
      if (o->freeze (o->freeze_arg, req != 'T', &e) < 0)
        {
          rep.code = e && e->errno_ ? e->errno_ : EIO;
          snprintf (rep.msg, sizeof rep.msg, "%s", e ? e->msg : "freeze failed");
        }
      cm_err_free (&e);
      frozen = req == 'F' && rep.code == 0;
      if (write (sock, &rep, sizeof rep.code + strlen (rep.msg) + 1) < 0)
        break;
    }
  if (frozen)
    {
      struct cm_err *e = NULL;
      o->freeze (o->freeze_arg, false, &e);
      cm_err_free (&e);
    }
}

struct tree
{
  bool frozen;                 /* seize without waiting for the stops */
  struct cl_shm_tab shm;       /* shared memory seen so far */
  pid_t *host;                 /* host pid of each record */
  struct cl_dump *procs;
  struct cl_tree_rec *recs;
  size_t n;
};

static void
dump_free (struct cl_dump *d)
{
  free (d->threads.p);
  free (d->vmas.p);
  free (d->runs.p);
  free (d->fds.p);
  free (d->strings.p);
  free (d->pipes.p);
  free (d->fdx.p);
  free (d->sigs.p);
  free (d->shms.p);
  if (d->pages_fd >= 0)
    close (d->pages_fd);
  cl_xxh64_fini (&d->pages_hash);
}

static bool
listed (const struct tree *t, pid_t pid)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->host[i] == pid)
      return true;
  return false;
}

/* Fields 3 (state), 5 (pgrp), 6 (session) of /proc/PID/stat. */
static int
stat_ids (pid_t pid, char *state, int *pgid, int *sid, struct cm_err **err)
{
  char path[64];
  _cleanup_free_ char *s = NULL;
  char *p;
  snprintf (path, sizeof path, "%d/stat", pid);
  if (cm_read_file_at (cl_proc_dir (), path, 4096, &s, NULL, err) < 0)
    return -1;
  p = strrchr (s, ')');
  if (p == NULL || sscanf (p + 2, "%c %*d %d %d", state, pgid, sid) != 3)
    return cm_err_set (err, 0, "unparsable `%s`", path);
  return 0;
}

static int
add (struct tree *t, pid_t pid, pid_t ppid, struct cm_err **err)
{
  struct cl_dump *d;
  char state;
  int pgid, sid;
  if (stat_ids (pid, &state, &pgid, &sid, err) < 0)
    return -1;
  if (state == 'Z')
    return cm_err_set (err, 0, "process %d is a zombie its parent %d has not "
                       "reaped", pid, ppid);
  t->procs = xrealloc (t->procs, (t->n + 1) * sizeof *t->procs);
  t->host = xrealloc (t->host, (t->n + 1) * sizeof *t->host);
  t->host[t->n] = pid;
  t->recs = xrealloc (t->recs, (t->n + 1) * sizeof *t->recs);
  d = &t->procs[t->n];
  memset (d, 0, sizeof *d);
  d->pid = pid;
  d->pages_fd = -1;
  /* host pids until translate() */
  t->recs[t->n] = (struct cl_tree_rec) { pid, ppid, pgid, sid };
  t->n++;
  return t->frozen ? cl_seize_frozen (d, err) : cl_seize (d, err);
}

/* The children of every thread of process |i| not yet in the tree. */
static int
add_children (struct tree *t, size_t i, size_t *added, struct cm_err **err)
{
  pid_t pid = t->host[i];
  for (size_t k = 0; k < t->procs[i].ntids; k++)
    {
      char path[96];
      _cleanup_free_ char *list = NULL;
      char *save = NULL;
      snprintf (path, sizeof path, "%d/task/%d/children", pid,
                t->procs[i].tids[k]);
      if (cm_read_file_at (cl_proc_dir (), path, 1 << 20, &list, NULL, err) < 0)
        return -1;
      for (char *c = strtok_r (list, " \n", &save); c; c = strtok_r (NULL, " \n", &save))
        if (!listed (t, atoi (c)))
          {
            if (add (t, atoi (c), pid, err) < 0)
              return -1;
            (*added)++;
          }
    }
  return 0;
}

static pid_t
to_ns (const struct tree *t, pid_t host)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->host[i] == host)
      return cl_ns_tid (host, host);
  return 0;  /* outside the tree: not restored */
}

/* Host pids to the pids the processes have in their own namespace. */
static void
translate (struct tree *t)
{
  for (size_t i = 0; i < t->n; i++)
    {
      struct cl_tree_rec *r = &t->recs[i];
      r->pid = cl_ns_tid (t->host[i], t->host[i]);
      r->ppid = i ? to_ns (t, r->ppid) : 0;
      r->pgid = to_ns (t, r->pgid);
      r->sid = to_ns (t, r->sid);
    }
}

/* Stopped processes cannot fork, but one seized late may have forked
 * before, and an orphan may have moved to an ancestor: until stable. */
static int
add_descendants (struct tree *t, struct cm_err **err)
{
  size_t added;
  do
    {
      added = 0;
      for (size_t i = 0; i < t->n; i++)
        if (add_children (t, i, &added, err) < 0)
          return -1;
    }
  while (added > 0);
  return 0;
}

/* Frozen (when the caller can): every thread of the tree seized and
 * interrupted; thawed, each stops for us.  Then a last pass for what a
 * tree that could not be frozen created meanwhile. */
static int
seize_tree (struct tree *t, pid_t root, const struct freezer *fz,
            struct cm_err **err)
{
  int r;
  if (freezer_set (fz, true, false, err) < 0)
    return -1;
  t->frozen = fz->o->freeze != NULL;
  r = add (t, root, 0, err) < 0 || add_descendants (t, err) < 0 ? -1 : 0;
  if (t->frozen)
    {
      struct cm_err *e = NULL;
      if (freezer_set (fz, false, false, r == 0 ? err : &e) < 0)
        r = -1;
      cm_err_free (&e);
      t->frozen = false;
      /* every seized thread stops now: wait for it even after a failure,
       * a detach needs the stop */
      for (size_t i = 0; i < t->n; i++)
        if (cl_seize_finish (&t->procs[i], r == 0 ? err : &e) < 0)
          r = -1;
      cm_err_free (&e);
    }
  if (r < 0 || add_descendants (t, err) < 0)
    return -1;
  translate (t);
  return 0;
}

static int
capture (struct cl_dump *d, int dirfd, const struct criu_dump_opts *o,
         struct cm_err **err)
{
  char name[32];
  _cleanup_fd_ int sub = -1;
  snprintf (name, sizeof name, "%d", cl_ns_tid (d->pid, d->pid));
  if (mkdirat (dirfd, name, 0700) < 0 && errno != EEXIST)
    return cm_err_set (err, errno, "create `%s` in the image", name);
  sub = openat (dirfd, name, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (sub < 0)
    return cm_err_set (err, errno, "open `%s` in the image", name);
  cl_str_add (&d->strings, "");
  d->pages_fd = openat (sub, "pages.img", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
                        0600);
  if (d->pages_fd < 0)
    return cm_err_set (err, errno, "create %s/pages.img", name);
  if (cl_xxh64_init (&d->pages_hash, err) < 0)
    return -1;
  /* The memory first: the injections after it map a scratch page. */
  if (cl_dump_mm (d, err) < 0 || cl_inject_prepare (d, err) < 0
      || cl_dump_threads (d, err) < 0 || cl_dump_signals (d, err) < 0
      || cl_dump_files (d, o->skip_unsupported, err) < 0
      || cl_dump_locks (d, err) < 0
      || cl_dump_misc (d, err) < 0 || cl_dump_pending (d, err) < 0
      || cl_image_write (sub, d, err) < 0)
    return cm_err_wrap (err, "process %d", d->pid);
  return 0;
}

static void
remove_image (int dirfd, const struct tree *t)
{
  struct cm_err *e = NULL;
  unlinkat (dirfd, "tree.img", 0);
  unlinkat (dirfd, "tmpfs.img", 0);
  for (size_t i = 0; i < t->n; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "%d", t->recs[i].pid);
      cm_rm_rf_at (dirfd, name, &e);
      cm_err_free (&e);
    }
}

static int
dump_into (int dirfd, const struct criu_dump_opts *o, int sock,
           struct cm_err **err)
{
  struct tree t = { 0 };
  struct freezer fz = { o, sock };
  int r = seize_tree (&t, o->pid, &fz, err);
  for (int k = 0; r == 0 && o->stdio && k < 3; k++)
    {
      t.procs[0].stdio[k][0] = o->stdio[k].dev;
      t.procs[0].stdio[k][1] = o->stdio[k].ino;
      t.procs[0].stdio[k][2] = o->stdio[k].mnt_id;
    }
  if (r == 0 && o->stdio == NULL)
    cl_stdio_of_root (&t.procs[0]);
  for (size_t i = 0; r == 0 && i < t.n; i++)
    {
      memcpy (t.procs[i].stdio, t.procs[0].stdio, sizeof t.procs[0].stdio);
      t.procs[i].prev = t.procs;
      t.procs[i].nprev = i;
      t.procs[i].shm_seen = &t.shm;
      r = capture (&t.procs[i], dirfd, o, err);
    }
  /* every process stopped: the tmpfs contents are of the same instant */
  if (r == 0)
    r = cl_tmpfs_dump (dirfd, t.host[0], o->target_root ? o->tmpfs : NULL,
                       o->target_root ? o->ntmpfs : 0, err);
  if (r == 0)
    r = cl_tree_write (dirfd, t.recs, t.n, err);
  /* On failure the tree goes on as it was; on success it dies unless
   * asked to keep running, before anyone could see it move on: children
   * before parents, each dead (a zombie for its parent) when this
   * returns. */
  for (size_t i = t.n; i-- > 0;)
    cl_release (&t.procs[i], r == 0 && !o->leave_running);
  if (o->leave_frozen && (r < 0 || o->leave_running))
    {
      /* after the detach: a traced task frozen could not be detached */
      struct cm_err *e = NULL;
      if (freezer_set (&fz, true, true, r == 0 ? err : &e) < 0)
        r = -1;
      cm_err_free (&e);
    }
  if (r < 0)
    {
      remove_image (dirfd, &t);
      cm_err_wrap (err, "checkpoint of process %d", o->pid);
    }
  for (size_t i = 0; i < t.n; i++)
    dump_free (&t.procs[i]);
  free (t.procs);
  free (t.shm.v);
  free (t.recs);
  free (t.host);
  return r;
}

/* In a child whose root is the target's: d_path() renders every file
 * the target maps or holds relative to the reader's root, so the image
 * records the paths the restored process will open in its own root. */
static int
dump_from_target_root (int dirfd, const struct criu_dump_opts *o,
                       struct cm_err **err)
{
  int pfd[2], sv[2] = { -1, -1 }, st = 0;
  pid_t child;
  char msg[2048];
  ssize_t n;

  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return cm_err_set (err, errno, "pipe");
  if (o->freeze && socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return cm_err_set (err, errno, "socketpair");
  child = fork ();
  if (child < 0)
    return cm_err_set (err, errno, "fork");
  if (child == 0)
    {
      char root[64];
      struct cm_err *e = NULL;
      close (pfd[0]);
      if (sv[0] >= 0)
        close (sv[0]);
      snprintf (root, sizeof root, "%d/root", o->pid);
      if (fchdir (cl_proc_dir ()) < 0 || chroot (root) < 0)
        cm_err_set (&e, errno, "enter the root of process %d", o->pid);
      else if (dump_into (dirfd, o, sv[1], &e) == 0)
        _exit (0);
      if (write (pfd[1], e->msg, strlen (e->msg)) < 0)
        _exit (2);
      _exit (1);
    }
  close (pfd[1]);
  if (sv[0] >= 0)
    {
      close (sv[1]);
      serve_freezer (o, sv[0]);
      close (sv[0]);
    }
  n = cm_read_all (pfd[0], msg, sizeof msg - 1);
  close (pfd[0]);
  msg[n > 0 ? n : 0] = '\0';
  while (waitpid (child, &st, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (st) && WEXITSTATUS (st) == 0)
    return 0;
  return cm_err_set (err, 0, "%s", msg[0] ? msg : "the checkpoint helper died");
}

int
criu_dump (const struct criu_dump_opts *o, struct cm_err **err)
{
  _cleanup_fd_ int dirfd = -1;
  uint8_t warm[32];
  int r;

  if (o->pid <= 0)
    return cm_err_set (err, EINVAL, "checkpoint: no process");
  /* libcrypto (and OpenSSL's config) and libxxhash loaded here, before
   * any chroot */
  if (cm_sha256 ("", 0, warm, err) < 0 || cl_xxh64_load (err) < 0)
    return -1;
  if (cm_mkdir_p (o->image_dir, 0700, err) < 0)
    return -1;
  dirfd = open (o->image_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dirfd < 0)
    return cm_err_set (err, errno, "open image directory `%s`", o->image_dir);
  if (cl_proc_dir_open (err) < 0)
    return -1;
  r = o->target_root ? dump_from_target_root (dirfd, o, err)
                     : dump_into (dirfd, o, -1, err);
  cl_proc_dir_close ();
  return r;
}
