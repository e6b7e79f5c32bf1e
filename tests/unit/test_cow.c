/* cow/ over a real overlayfs mount: a branch is mounted, changed through
 * the merged view (writes, deletes, renames, chmod/chown/utimes, xattrs,
 * symlinks, FIFOs, hardlinks, O_EXCL, opaque dirs), unmounted; the change
 * list is checked field by field and the commit applied. */
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

#include "cow/cow.h"
#include "tests/unit/cow_tree.h"
#include "tests/unit/tap.h"

static char base[64];

static void
sha_of (const char *s, char hex[65])
{
  char p[] = "/tmp/test_cow_sha.XXXXXX";
  int fd = mkstemp (p);
  if (write (fd, s, strlen (s)) < 0)
    exit (2);
  lseek (fd, 0, SEEK_SET);
  cow_sha256_fd (fd, hex);
  close (fd);
  unlink (p);
}

static void
make_host (const char *h)
{
  mkdir (h, 0755);
  put (h, "keep.txt", "keep", 0644);
  put (h, "mod.txt", "old", 0644);
  put (h, "del.txt", "delete me", 0644);
  put (h, "excl.txt", "excl", 0644);
  put (h, "ren.txt", "rename me please", 0644);
  put (h, "chmod.txt", "mode", 0644);
  put (h, "own.txt", "owner", 0644);
  put (h, "times.txt", "times", 0644);
  put (h, "xattr.txt", "xattr", 0644);
  mkd (h, "deldir");
  put (h, "deldir/a", "a", 0644);
  mkd (h, "deldir/sub");
  put (h, "deldir/sub/b", "b", 0644);
  mkd (h, "opq");
  put (h, "opq/x", "x", 0644);
  put (h, "opq/y", "y", 0644);
  mkd (h, "dirA");
  put (h, "dirA/f", "f", 0644);
}

static char *
at (const char *m, const char *rel)
{
  return xasprintf ("%s/%s", m, rel);
}

/* Through the merged view, as a container would. */
static void
change_merged (const char *m)
{
  _cleanup_free_ char *mod = at (m, "mod.txt"), *del = at (m, "del.txt"),
                      *excl = at (m, "excl.txt"), *ren = at (m, "ren.txt"),
                      *renamed = at (m, "renamed.txt"),
                      *chm = at (m, "chmod.txt"), *own = at (m, "own.txt"),
                      *tim = at (m, "times.txt"), *xat = at (m, "xattr.txt"),
                      *sl = at (m, "sl"), *fifo = at (m, "fifo"),
                      *nd = at (m, "newdir"), *nf = at (m, "newdir/f"),
                      *nl = at (m, "hl"), *keep = at (m, "keep.txt"),
                      *dira = at (m, "dirA"), *dirb = at (m, "dirB"),
                      *deldir = at (m, "deldir"), *opq = at (m, "opq");
  int fd;
  fd = open (mod, O_WRONLY | O_TRUNC);
  ok (fd >= 0 && write (fd, "new content", 11) == 11, "write through "
                                                      "the merged view");
  close (fd);
  ok (unlink (del) == 0, "unlink");
  ok (cm_rm_rf_at (AT_FDCWD, deldir, NULL) == 0, "rm -r dir");
  ok (open (keep, O_WRONLY | O_CREAT | O_EXCL, 0644) < 0 && errno == EEXIST,
      "O_EXCL on a lower file: EEXIST");
  unlink (excl);
  fd = open (excl, O_WRONLY | O_CREAT | O_EXCL, 0640);
  ok (fd >= 0 && write (fd, "again", 5) == 5, "O_EXCL after unlink");
  close (fd);
  ok (rename (ren, renamed) == 0, "rename a file");
  ok (chmod (chm, 0600) == 0 && chown (own, 1234, 1234) == 0, "chmod, chown");
  struct timespec ts[2] = { { 2000000, 0 }, { 2000000, 0 } };
  ok (utimensat (AT_FDCWD, tim, ts, 0) == 0, "utimes");
  ok (setxattr (xat, "user.k", "v", 1, 0) == 0, "setxattr");
  ok (symlink ("keep.txt", sl) == 0 && mkfifo (fifo, 0640) == 0,
      "symlink, fifo");
  ok (mkdir (nd, 0750) == 0, "mkdir");
  put (m, "newdir/f", "nf", 0644);
  ok (link (nf, nl) == 0, "hardlink");
  ok (cm_rm_rf_at (AT_FDCWD, opq, NULL) == 0 && mkdir (opq, 0755) == 0,
      "replace a directory");
  put (m, "opq/z", "z", 0644);
  int r = rename (dira, dirb);
  ok (r < 0 && errno == EXDEV, "renaming a lower directory gives EXDEV "
                               "(redirect_dir=nofollow; mv copies)");
}

static void
check_changes (const struct cow_changes *c)
{
  const struct cow_change *x;
  char hex[65];
  x = find_change (c, "mod.txt");
  sha_of ("old", hex);
  ok (x && x->op == COW_MODIFIED && x->before.kind == COW_K_FILE
          && strcmp (x->before.sha256, hex) == 0 && x->before.size == 3,
      "mod.txt: modified, before = old content");
  sha_of ("new content", hex);
  ok (x && strcmp (x->after.sha256, hex) == 0 && x->after.size == 11
          && x->after.mode == 0644,
      "mod.txt: after = new content");
  x = find_change (c, "del.txt");
  ok (x && x->op == COW_DELETED && !x->after.present, "del.txt deleted");
  ok ((x = find_change (c, "deldir")) && x->op == COW_DELETED
          && x->before.kind == COW_K_DIR && find_change (c, "deldir/a")
          && find_change (c, "deldir/sub/b"),
      "deleted tree listed per path");
  x = find_change (c, "renamed.txt");
  ok (x && x->op == COW_RENAMED && x->from && strcmp (x->from, "ren.txt") == 0
          && !find_change (c, "ren.txt"),
      "rename paired by digest");
  x = find_change (c, "excl.txt");
  ok (x && x->op == COW_MODIFIED && x->after.mode == 0640, "excl.txt");
  x = find_change (c, "chmod.txt");
  ok (x && x->op == COW_MODIFIED && x->before.mode == 0644
          && x->after.mode == 0600
          && strcmp (x->before.sha256, x->after.sha256) == 0,
      "chmod only");
  x = find_change (c, "own.txt");
  ok (x && x->after.uid == 1234 && x->after.gid == 1234 && x->before.uid == 0,
      "chown only");
  ok (find_change (c, "times.txt") && find_change (c, "xattr.txt"),
      "utimes-only and xattr-only changes listed");
  x = find_change (c, "sl");
  ok (x && x->op == COW_ADDED && x->after.kind == COW_K_SYMLINK
          && strcmp (x->after.target, "keep.txt") == 0,
      "symlink added");
  x = find_change (c, "fifo");
  ok (x && x->after.kind == COW_K_FIFO, "fifo added");
  x = find_change (c, "newdir");
  ok (x && x->op == COW_ADDED && x->after.kind == COW_K_DIR
          && x->after.mode == 0750,
      "dir added");
  ok (find_change (c, "opq/x") && find_change (c, "opq/y")
          && (x = find_change (c, "opq/z")) && x->op == COW_ADDED
          && !find_change (c, "opq"),
      "opaque dir: old children deleted");
  ok (!find_change (c, "keep.txt") && !find_change (c, "dirA"),
      "untouched paths not listed");
}

/* A mount inside the host directory: the overlay did not see it, the
 * commit must not write into it. */
static void
test_no_mount_crossing (void)
{
  _cleanup_free_ char *h = at (base, "x-host"), *s = at (base, "x-st"),
                      *mnt = at (base, "x-host/mnt");
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  mkdir (h, 0755);
  mkdir (mnt, 0755);
  settle ();
  if (cow_branch_create (h, s, &b, &e) < 0)
    exit (2);
  mkd (b->upper, "mnt");
  put (b->upper, "mnt/f", "under the mount point", 0644);
  if (mount ("tmpfs", mnt, "tmpfs", 0, "size=1m") < 0)
    exit (2);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  int r = cow_commit (b, NULL, NULL, &e);
  ok (r < 0 && !exists (h, "mnt/f") && b->state == COW_DEFERRED,
      "commit refuses, before it starts, a path below a mount in the host "
      "directory: %s",
      e ? e->msg : "(committed)");
  cm_err_free (&e);
  umount2 (mnt, MNT_DETACH);
  cow_branch_free (b);
}

int
main (void)
{
  if (geteuid () != 0)
    {
      printf ("1..0 # skip overlayfs mounts need root\n");
      return 77;
    }
  if (unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0)
    return 2;
  strcpy (base, "/tmp/test_cow.XXXXXX");
  if (mkdtemp (base) == NULL)
    return 2;
  _cleanup_free_ char *h = at (base, "host"), *s = at (base, "st"),
                      *m = at (base, "merged");
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  struct cow_changes c = { 0 };
  make_host (h);
  mkdir (m, 0755);
  settle ();
  ok (cow_branch_create (h, s, &b, &e) == 0, "branch created");
  _cleanup_free_ char *data = cow_overlay_data (b, false);
  if (mount ("overlay", m, "overlay", 0, data) < 0)
    {
      printf ("1..0 # skip overlay mount: %s\n", strerror (errno));
      return 77;
    }
  change_merged (m);
  umount2 (m, MNT_DETACH);
  _cleanup_free_ char *before = tree_text (h);
  ok (cow_changes (b, &c, &e) == 0, "changes");
  check_changes (&c);
  _cleanup_free_ char *after_list = tree_text (h);
  is_str (after_list, before, "listing changes wrote nothing");
  char **cf = NULL;
  ok (cow_conflicts (b, &cf, &e) == 0 && cf && !cf[0], "no conflicts");
  cm_strv_free (cf);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  ok (cow_commit (b, NULL, NULL, &e) == 0, "commit: %s", e ? e->msg : "ok");
  _cleanup_free_ char *mod = slurp (h, "mod.txt"), *z = slurp (h, "opq/z");
  ok (mod && strcmp (mod, "new content") == 0 && z && !exists (h, "opq/x")
          && !exists (h, "del.txt") && !exists (h, "ren.txt")
          && exists (h, "renamed.txt") && exists (h, "newdir/f")
          && !exists (h, "deldir"),
      "committed tree matches the merged view");
  struct stat st;
  _cleanup_free_ char *tp = at (h, "times.txt"), *op = at (h, "own.txt");
  ok (stat (tp, &st) == 0 && st.st_mtime == 2000000 && stat (op, &st) == 0
          && st.st_uid == 1234,
      "times and owner committed");
  char v[4];
  _cleanup_free_ char *xp = at (h, "xattr.txt");
  ok (getxattr (xp, "user.k", v, sizeof v) == 1, "xattr committed");
  cow_changes_free (&c);
  cow_branch_free (b);
  test_no_mount_crossing ();
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
