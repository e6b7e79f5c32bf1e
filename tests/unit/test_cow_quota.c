/* cow/quota.c: a branch with max_disk keeps its upper on a tmpfs of that
 * size (the write that crosses it fails with ENOSPC, in the writer), is
 * persisted to disk when it stays (whiteouts, opaque dirs, owners, modes,
 * times, xattrs, hardlinks, FIFOs, sockets kept: the change list and the
 * commit are the same as straight from the tmpfs), and is reported lost,
 * never used, when its tmpfs is gone (a restart). */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "cow/cow.h"
#include "tests/unit/cow_tree.h"
#include "tests/unit/tap.h"

#define QUOTA (256 * 1024)

static char base[64];

static char *
at (const char *d, const char *rel)
{
  return xasprintf ("%s/%s", d, rel);
}

static void
make_host (const char *h)
{
  mkdir (h, 0755);
  put (h, "mod.txt", "old", 0644);
  put (h, "del.txt", "delete me", 0644);
  put (h, "chmod.txt", "mode", 0644);
  put (h, "own.txt", "owner", 0644);
  put (h, "keep.txt", "keep", 0644);
  mkd (h, "opq");
  put (h, "opq/x", "x", 0644);
  mkd (h, "deldir");
  put (h, "deldir/a", "a", 0644);
}

/* A unix socket bound at |dir|/|rel| (its listener then goes away, as a
 * container's does when it ends). */
static void
bind_socket (const char *dir, const char *rel)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int sk = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, rel);
  if (sk < 0 || bind (sk, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      perror (sa.sun_path);
      exit (2);
    }
  close (sk);
}

/* Through the merged view, as a container would. */
static void
change_merged (const char *m)
{
  _cleanup_free_ char *opq = at (m, "opq"), *dd = at (m, "deldir"),
                      *l1 = at (m, "link1"), *l2 = at (m, "link2"),
                      *sl = at (m, "sl"), *ff = at (m, "fifo"),
                      *ch = at (m, "chmod.txt"), *ow = at (m, "own.txt"),
                      *del = at (m, "del.txt");
  put (m, "mod.txt", "new content", 0644);
  unlink (del);
  cm_rm_rf_at (AT_FDCWD, dd, NULL);
  cm_rm_rf_at (AT_FDCWD, opq, NULL);
  mkdir (opq, 0750);
  put (m, "opq/z", "z", 0600);
  put (m, "link1", "two names", 0644);
  link (l1, l2);
  symlink ("keep.txt", sl);
  mkfifo (ff, 0640);
  bind_socket (m, "sock");
  chmod (ch, 0600);
  chown (ow, 1234, 1234);
  setxattr (l1, "user.k", "v", 1, 0);
}

/* The change list as text, for comparing two lists. */
static char *
changes_text (const struct cow_branch *b)
{
  struct cow_changes c = { 0 };
  struct cm_err *e = NULL;
  char *out = NULL;
  size_t len = 0;
  if (cow_changes (b, &c, &e) < 0)
    {
      out = xasprintf ("error: %s", e->msg);
      cm_err_free (&e);
      return out;
    }
  FILE *f = open_memstream (&out, &len);
  for (size_t i = 0; i < c.n; i++)
    {
      const struct cow_change *x = &c.v[i];
      const struct cow_meta *a = &x->after;
      /* a directory's size is its file system's own (tmpfs: 20 a name) */
      fprintf (f, "%s %s %s %d %o %u:%u %lld %s %s\n", cow_op_name (x->op),
               x->path, x->from ? x->from : "-", a->present, a->mode, a->uid,
               a->gid, a->kind == COW_K_DIR ? 0 : (long long) a->size,
               a->target ? a->target : "-", a->sha256);
    }
  fclose (f);
  cow_changes_free (&c);
  return out;
}

static bool
mounted (const char *path)
{
  _cleanup_free_ char *mi = NULL;
  if (cm_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 1 << 22, &mi, NULL,
                       NULL)
      < 0)
    exit (2);
  return strstr (mi, path) != NULL;
}

static struct cow_branch *
quota_branch (const char *h, const char *s)
{
  const struct cow_create_opts o = { .max_disk = QUOTA };
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  if (cow_branch_create_opts (h, s, &o, &b, &e) < 0)
    {
      printf ("# quota branch: %s\n", e->msg);
      exit (2);
    }
  return b;
}

static void
mount_overlay (const struct cow_branch *b, const char *m)
{
  _cleanup_free_ char *data = cow_overlay_data (b, false);
  mkdir (m, 0755);
  if (mount ("overlay", m, "overlay", 0, data) < 0)
    {
      printf ("1..0 # skip overlay mount: %s\n", strerror (errno));
      exit (77);
    }
}

static void
test_create (const struct cow_branch *b)
{
  struct statfs fs;
  _cleanup_free_ char *meta = slurp (b->storage, "meta");
  _cleanup_free_ char *q = at (b->storage, "quota/upper");
  ok (b->in_tmpfs && b->max_disk == QUOTA && !b->lost
          && strcmp (b->upper, q) == 0 && statfs (b->upper, &fs) == 0
          && fs.f_type == TMPFS_MAGIC
          && (uint64_t) fs.f_blocks * fs.f_bsize == QUOTA,
      "a quota branch's upper is on a tmpfs of max_disk bytes");
  ok (meta && strstr (meta, "max_disk=262144\nquota=tmpfs\n"),
      "meta records the quota: %s", meta ? meta : "(none)");
}

/* The bytes up to the limit are written; the write that would cross it
 * fails with ENOSPC, in the writer, after a successful open. */
static void
test_enospc (const char *m)
{
  _cleanup_free_ char *p = at (m, "big");
  char buf[4096];
  size_t total = 0;
  ssize_t n = 0;
  memset (buf, 'x', sizeof buf);
  int fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ok (fd >= 0, "the file is created under the quota");
  while (fd >= 0 && (n = write (fd, buf, sizeof buf)) > 0)
    total += (size_t) n;
  int e = errno;
  ok (n < 0 && e == ENOSPC && total > QUOTA / 2 && total <= QUOTA,
      "write fails with ENOSPC after %zu bytes (quota %d)", total, QUOTA);
  close (fd);
  unlink (p);
}

static void
test_persist (struct cow_branch *b)
{
  struct cm_err *e = NULL;
  _cleanup_free_ char *q = at (b->storage, "quota");
  _cleanup_free_ char *up = at (b->storage, "upper");
  _cleanup_free_ char *changes = changes_text (b);
  _cleanup_free_ char *tmpfs_tree = tree_text (b->upper);
  char v[4];
  ok (cow_branch_persist (b, &e) < 0 && e && e->errno_ == EBUSY,
      "a pending branch is not persisted (its writer may run): %s",
      e ? e->msg : "(persisted)");
  cm_err_free (&e);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  /* leftovers of a persist killed before meta was switched */
  mkdir (up, 0700);
  put (up, "junk", "from a persist that died", 0644);
  ok (cow_branch_persist (b, &e) == 0, "persist: %s", e ? e->msg : "ok");
  cm_err_free (&e);
  _cleanup_free_ char *disk_tree = tree_text (up);
  ok (!b->in_tmpfs && strcmp (b->upper, up) == 0 && !mounted (q)
          && !exists (b->storage, "quota"),
      "persisted: the upper is STORAGE/upper, the tmpfs unmounted");
  is_str (disk_tree, tmpfs_tree,
          "the disk upper is the tmpfs upper (whiteouts, modes, owners, "
          "mtimes, hardlinks, symlinks, fifos; no leftovers)");
  _cleanup_free_ char *opq = at (up, "opq"), *l1 = at (up, "link1");
  ok (getxattr (opq, "trusted.overlay.opaque", v, sizeof v) == 1
          && v[0] == 'y' && getxattr (l1, "user.k", v, sizeof v) == 1,
      "opaque mark and user xattrs kept");
  _cleanup_free_ char *changes2 = changes_text (b);
  is_str (changes2, changes, "changes are the same after the persist");
  struct cow_branch *r = NULL;
  _cleanup_free_ char *meta = slurp (b->storage, "meta");
  ok (cow_branch_open (b->storage, &r, &e) == 0 && !r->in_tmpfs && !r->lost
          && r->max_disk == QUOTA && meta
          && strstr (meta, "quota=disk\n"),
      "reopened: on disk, quota recorded");
  cow_branch_free (r);
  ok (cow_commit (b, NULL, NULL, &e) == 0, "commit of the persisted branch: %s",
      e ? e->msg : "ok");
}

/* The tmpfs is gone, as after a restart: the branch says so and is
 * neither listed nor committed as if empty; abort drops it. */
static void
test_lost (const char *h)
{
  _cleanup_free_ char *s = at (base, "lost-st");
  struct cow_branch *b = quota_branch (h, s), *r = NULL;
  struct cow_changes c = { 0 };
  struct cm_err *e = NULL;
  _cleanup_free_ char *q = at (s, "quota");
  put (b->upper, "f", "lost", 0644);
  cow_branch_set_state (b, COW_KEPT, &e);
  umount2 (q, MNT_DETACH);
  cow_branch_free (b);
  ok (cow_branch_open (s, &r, &e) == 0 && r->lost, "a branch whose tmpfs "
      "is gone opens as lost");
  ok (cow_changes (r, &c, &e) < 0 && e && strstr (e->msg, "is gone"),
      "changes refuses a lost branch: %s", e ? e->msg : "(listed)");
  cm_err_free (&e);
  ok (cow_commit (r, NULL, NULL, &e) < 0 && e && strstr (e->msg, "is gone")
          && !exists (h, "f"),
      "commit refuses a lost branch");
  cm_err_free (&e);
  ok (cow_branch_persist (r, &e) < 0, "persist refuses a lost branch");
  cm_err_free (&e);
  r->state = COW_COMMITTING; /* a power loss in the middle of a commit */
  ok (cow_abort (r, &e) == 0 && !exists (base, "lost-st"),
      "abort drops a lost branch, also one that was committing: %s",
      e ? e->msg : "ok");
  cm_err_free (&e);
  cow_branch_free (r);
}

/* A persist killed after meta says quota=disk, before the unmount: the
 * branch is on disk, and the leftover tmpfs goes with the next abort. */
static void
test_persist_killed_late (const char *h)
{
  _cleanup_free_ char *s = at (base, "late-st");
  _cleanup_free_ char *q = at (base, "late-st/quota");
  struct cow_branch *b = quota_branch (h, s), *r = NULL;
  struct cm_err *e = NULL;
  put (b->upper, "f", "late", 0644);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  if (cow_branch_persist (b, &e) < 0)
    exit (2);
  cow_branch_free (b);
  mkdir (q, 0700);
  if (mount ("tmpfs", q, "tmpfs", 0, "size=64k") < 0)
    exit (2);
  ok (cow_branch_open (s, &r, &e) == 0 && !r->in_tmpfs && !r->lost
          && exists (s, "upper/f"),
      "meta says disk: the branch is read from disk, the leftover mount "
      "ignored");
  ok (cow_abort (r, &e) == 0 && !mounted (q) && !exists (base, "late-st"),
      "abort unmounts the leftover tmpfs and removes the storage");
  cow_branch_free (r);
}

/* abort unmounts before it removes: nothing stays mounted. */
static void
test_abort (const char *h)
{
  _cleanup_free_ char *s = at (base, "ab-st");
  struct cow_branch *b = quota_branch (h, s);
  struct cm_err *e = NULL;
  put (b->upper, "f", "dropped", 0644);
  ok (mounted (s), "the quota tmpfs is mounted");
  cow_branch_set_state (b, COW_DEFERRED, &e);
  ok (cow_abort (b, &e) == 0 && !mounted (s) && !exists (base, "ab-st"),
      "abort unmounts the tmpfs and removes the storage");
  cow_branch_free (b);
}

/* Without CAP_SYS_ADMIN (as rootless) the tmpfs cannot be mounted: the
 * create fails saying so, and leaves nothing. */
static void
test_no_cap (const char *h)
{
  _cleanup_free_ char *s = at (base, "nocap-st");
  int pfd[2], status;
  char msg[512] = "";
  if (pipe (pfd) < 0)
    exit (2);
  pid_t pid = fork ();
  if (pid == 0)
    {
      const struct cow_create_opts o = { .max_disk = QUOTA };
      cap_value_t v = CAP_SYS_ADMIN;
      cap_t c = cap_get_proc ();
      struct cow_branch *b = NULL;
      struct cm_err *e = NULL;
      if (cap_set_flag (c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) < 0
          || cap_set_proc (c) < 0)
        _exit (3);
      if (cow_branch_create_opts (h, s, &o, &b, &e) == 0)
        _exit (1);
      if (write (pfd[1], e->msg, strlen (e->msg)) < 0)
        _exit (3);
      _exit (0);
    }
  close (pfd[1]);
  ssize_t n = read (pfd[0], msg, sizeof msg - 1);
  msg[n > 0 ? n : 0] = '\0';
  close (pfd[0]);
  waitpid (pid, &status, 0);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0
          && strstr (msg, "mount a tmpfs") && strstr (msg, "not permitted")
          && !exists (base, "nocap-st") && !mounted (s),
      "without CAP_SYS_ADMIN: refused, nothing left: %s", msg);
}

int
main (void)
{
  if (geteuid () != 0)
    {
      printf ("1..0 # skip tmpfs and overlayfs mounts need root\n");
      return 77;
    }
  if (unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0)
    return 2;
  strcpy (base, "/tmp/test_cowq.XXXXXX");
  if (mkdtemp (base) == NULL)
    return 2;
  _cleanup_free_ char *h1 = at (base, "h1"), *h2 = at (base, "h2"),
                      *s1 = at (base, "s1"), *s2 = at (base, "s2"),
                      *m1 = at (base, "m1"), *m2 = at (base, "m2");
  struct cm_err *e = NULL;
  make_host (h1);
  make_host (h2);
  settle ();
  struct cow_branch *b1 = quota_branch (h1, s1), *b2 = quota_branch (h2, s2);
  test_create (b1);
  mount_overlay (b1, m1);
  mount_overlay (b2, m2);
  test_enospc (m1);
  change_merged (m1);
  change_merged (m2);
  umount2 (m1, MNT_DETACH);
  umount2 (m2, MNT_DETACH);
  /* b1: committed straight from the tmpfs; b2: persisted, then committed */
  cow_branch_set_state (b1, COW_DEFERRED, &e);
  ok (cow_commit (b1, NULL, NULL, &e) == 0 && !mounted (s1)
          && !exists (base, "s1"),
      "commit straight from the tmpfs, then it is unmounted: %s",
      e ? e->msg : "ok");
  cm_err_free (&e);
  test_persist (b2);
  _cleanup_free_ char *t1 = tree_text (h1), *t2 = tree_text (h2);
  is_str (t2, t1, "persisted then committed = committed from the tmpfs");
  _cleanup_free_ char *mod = slurp (h1, "mod.txt");
  ok (mod && strcmp (mod, "new content") == 0 && !exists (h1, "del.txt")
          && !exists (h1, "opq/x") && exists (h1, "opq/z")
          && !exists (h1, "deldir") && exists (h1, "link2"),
      "the commit is the merged view");
  cow_branch_free (b1);
  cow_branch_free (b2);
  test_lost (h1);
  test_abort (h1);
  test_persist_killed_late (h1);
  test_no_cap (h1);
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
