/* cow/ commit on hand-built upper layers (the forms overlayfs writes:
 * char 0:0 and xattr whiteouts, opaque dirs): create validation, commit
 * semantics, conflicts, the symlink-escape attempt, SIGKILL at every step
 * then commit again, abort/keep/defer. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "common/openat2.h"
#include "cow/cow.h"
#include "tests/unit/cow_tree.h"
#include "tests/unit/tap.h"

static char base[64];

static char *
pathf (const char *rel)
{
  return xasprintf ("%s/%s", base, rel);
}

static void
test_create_validation (void)
{
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  _cleanup_free_ char *low = pathf ("v-low"), *in = pathf ("v-low/st"),
                      *st = pathf ("v-st"), *file = pathf ("v-file");
  mkdir (low, 0755);
  put (base, "v-file", "x", 0644);

  ok (cow_branch_create ("rel/low", st, &b, &e) < 0 && e
          && strstr (e->msg, "absolute"),
      "relative lower refused: %s", e ? e->msg : "");
  cm_err_free (&e);
  ok (cow_branch_create (low, in, &b, &e) < 0 && e
          && strstr (e->msg, "overlap") && !exists (base, "v-low/st"),
      "storage inside the lower refused, nothing created: %s",
      e ? e->msg : "");
  cm_err_free (&e);
  _cleanup_free_ char *up = pathf ("v-low/..");
  ok (cow_branch_create (low, base, &b, &e) < 0 && e
          && strstr (e->msg, "overlap"),
      "lower inside the storage refused");
  cm_err_free (&e);
  ok (cow_branch_create (file, st, &b, &e) < 0 && e && e->errno_ == ENOTDIR
          && !exists (base, "v-st"),
      "a file as lower refused, nothing created");
  cm_err_free (&e);
  _cleanup_free_ char *comma = pathf ("v,st");
  ok (cow_branch_create (low, comma, &b, &e) < 0 && e
          && !exists (base, "v,st"),
      "a ',' in the storage refused (overlay mount data)");
  cm_err_free (&e);
  put (base, "v-low/f", "x", 0644);
  mkdir (st, 0700);
  put (base, "v-st/busy", "x", 0644);
  ok (cow_branch_create (low, st, &b, &e) < 0 && e && e->errno_ == EEXIST
          && exists (base, "v-st/busy"),
      "a non-empty storage refused, kept");
  cm_err_free (&e);
}

/* host tree used by the commit tests */
static void
make_host (const char *h)
{
  mkdir (h, 0755);
  put (h, "keep.txt", "keep", 0644);
  put (h, "mod.txt", "old", 0644);
  put (h, "del.txt", "delete me", 0644);
  put (h, "chmod.txt", "mode", 0644);
  mkd (h, "deldir");
  put (h, "deldir/a", "a", 0644);
  mkd (h, "deldir/sub");
  put (h, "deldir/sub/b", "b", 0644);
  mkd (h, "opq");
  put (h, "opq/x", "x", 0644);
  put (h, "opq/y", "y", 0644);
  put (h, "wasfile", "file", 0644);
  mkd (h, "wasdir");
  put (h, "wasdir/in", "in", 0644);
  mkd (h, "merge");
  put (h, "merge/old", "old", 0644);
}

static void
whiteout (const char *u, const char *rel, bool xattr_form)
{
  char p[4096];
  snprintf (p, sizeof p, "%s/%s", u, rel);
  if (!xattr_form)
    {
      if (mknod (p, S_IFCHR | 0000, makedev (0, 0)) < 0)
        exit (2);
      return;
    }
  put (u, rel, "", 0000);
  if (setxattr (p, "user.overlay.whiteout", "", 0, 0) < 0)
    exit (2);
}

/* The upper overlayfs would leave for the changes applied to make_host. */
static void
make_upper (const char *u)
{
  char p[4096];
  put (u, "mod.txt", "new content", 0644);
  whiteout (u, "del.txt", false);
  whiteout (u, "deldir", true);
  put (u, "chmod.txt", "mode", 0600);
  put (u, "new.txt", "brand new", 0755);
  mkd (u, "opq");
  snprintf (p, sizeof p, "%s/opq", u);
  setxattr (p, "trusted.overlay.opaque", "y", 1, 0);
  put (u, "opq/z", "z", 0644);
  mkd (u, "wasfile"); /* a file replaced by a directory */
  put (u, "wasfile/inner", "inner", 0644);
  put (u, "wasdir", "now a file", 0644);
  mkd (u, "merge");
  put (u, "merge/new", "new", 0644);
  snprintf (p, sizeof p, "%s/link", u);
  symlink ("keep.txt", p);
  put (u, "h1", "hard", 0644);
  snprintf (p, sizeof p, "%s/h1", u);
  char q[4096];
  snprintf (q, sizeof q, "%s/merge/h2", u);
  link (p, q);
  snprintf (p, sizeof p, "%s/fifo", u);
  mkfifo (p, 0640);
  snprintf (p, sizeof p, "%s/new.txt", u);
  setxattr (p, "user.note", "kept", 4, 0);
  /* what overlayfs leaves on a copied-up file: never committed */
  setxattr (p, "trusted.overlay.origin", "x", 1, 0);
  setxattr (p, "user.overlay.origin", "x", 1, 0);
}

static struct cow_branch *
branch_over (const char *host, const char *storage)
{
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  settle ();
  if (cow_branch_create (host, storage, &b, &e) < 0)
    {
      printf ("# %s\n", e->msg);
      exit (2);
    }
  return b;
}

static void
test_commit_semantics (void)
{
  _cleanup_free_ char *h = pathf ("c-host"), *s = pathf ("c-st");
  struct cow_branch *b;
  struct cm_err *e = NULL;
  char buf[16];
  struct stat a, c;

  make_host (h);
  b = branch_over (h, s);
  make_upper (b->upper);
  _cleanup_free_ char *un = xasprintf ("%s/new.txt", b->upper);
  struct stat us;
  ok (stat (un, &us) == 0, "upper file");
  ok (cow_commit (b, NULL, NULL, &e) < 0 && e && e->errno_ == EBUSY,
      "a pending branch is not committed");
  cm_err_free (&e);
  ok (cow_branch_set_state (b, COW_DEFERRED, &e) == 0, "deferred");
  ok (cow_commit (b, NULL, NULL, &e) == 0, "commit: %s", e ? e->msg : "ok");
  cm_err_free (&e);
  _cleanup_free_ char *m = slurp (h, "mod.txt"), *n = slurp (h, "new.txt");
  is_str (m, "new content", "modified file written");
  is_str (n, "brand new", "added file written");
  ok (!exists (h, "del.txt"), "char 0:0 whiteout deleted the file");
  ok (!exists (h, "deldir"), "xattr whiteout deleted the directory tree");
  ok (exists (h, "opq/z") && !exists (h, "opq/x") && !exists (h, "opq/y"),
      "opaque directory replaced the old one");
  ok (exists (h, "merge/old") && exists (h, "merge/new"),
      "plain directory merged");
  ok (exists (h, "wasfile/inner") && !exists (h, "wasdir/in"),
      "file<->directory replacements");
  _cleanup_free_ char *cm = pathf ("c-host/chmod.txt"),
                      *h1 = pathf ("c-host/h1"),
                      *h2 = pathf ("c-host/merge/h2"),
                      *nt = pathf ("c-host/new.txt"),
                      *ff = pathf ("c-host/fifo"), *ln = pathf ("c-host/link");
  ok (stat (cm, &a) == 0 && (a.st_mode & 0777) == 0600, "mode-only change");
  ok (stat (nt, &a) == 0 && (a.st_mode & 0777) == 0755
          && a.st_mtime == 1000000,
      "mode and mtime of a new file kept");
  ok (stat (h1, &a) == 0 && stat (h2, &c) == 0 && a.st_ino == c.st_ino,
      "hardlinks stay one inode");
  ok (lstat (ff, &a) == 0 && S_ISFIFO (a.st_mode), "fifo committed");
  ssize_t k = readlink (ln, buf, sizeof buf - 1);
  ok (k == 8 && memcmp (buf, "keep.txt", 8) == 0, "symlink kept verbatim");
  k = getxattr (nt, "user.note", buf, sizeof buf);
  ok (k == 4 && memcmp (buf, "kept", 4) == 0, "xattr kept");
  ok (getxattr (nt, "trusted.overlay.origin", buf, sizeof buf) < 0
          && getxattr (nt, "user.overlay.origin", buf, sizeof buf) < 0,
      "overlay.* xattrs not committed");
  ok (stat (nt, &a) == 0 && a.st_ino == us.st_ino && a.st_dev == us.st_dev,
      "upper and lower share a filesystem: the file was moved, not copied");
  ok (!exists (base, "c-st"), "storage removed after commit");
  ok (!exists (h, ".sandlock-cow~") && !exists (h, "merge/.sandlock-cow~"),
      "no temp names left");
  cow_branch_free (b);
}

/* A planted symlink in the lower must not carry a commit out of it. */
static void
test_symlink_escape (void)
{
  _cleanup_free_ char *h = pathf ("e-host"), *s = pathf ("e-st"),
                      *out = pathf ("e-out"), *lnk = pathf ("e-host/a");
  struct cow_branch *b;
  struct cm_err *e = NULL;
  mkdir (h, 0755);
  mkdir (out, 0755);
  put (out, "passwd", "root:x:0:0", 0644);
  mkd (h, "a");
  b = branch_over (h, s);
  mkd (b->upper, "a");
  put (b->upper, "a/passwd", "pwned", 0644);
  /* after the branch: someone swaps the directory for a symlink out */
  rmdir (lnk);
  symlink (out, lnk);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  struct cow_commit_opts o = { .force = true };
  int r = cow_commit (b, &o, NULL, &e);
  _cleanup_free_ char *p = slurp (out, "passwd"), *q = slurp (h, "a/passwd");
  is_str (p, "root:x:0:0",
          "the file outside the lower is untouched "
          "(commit %s)",
          r < 0 && e ? e->msg : "ok");
  struct stat st;
  ok (r == 0 && lstat (lnk, &st) == 0 && S_ISDIR (st.st_mode) && q
          && strcmp (q, "pwned") == 0,
      "the symlink was replaced by the "
      "branch's directory, written beneath the lower");
  cm_err_free (&e);
  cow_branch_free (b);

  /* same, but the symlink sits above a directory the upper only merges
   * into: the parent open refuses it */
  _cleanup_free_ char *h2 = pathf ("e2-host"), *s2 = pathf ("e2-st"),
                      *l2 = pathf ("e2-host/d/sub");
  mkdir (h2, 0755);
  mkd (h2, "d");
  mkd (h2, "d/sub");
  b = branch_over (h2, s2);
  put (b->upper, "x", "x", 0644);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  /* hand-made upper naming d/sub/passwd without d/sub as a dir would be
   * impossible for overlayfs; build the legal form, then swap in the
   * lower after the walk has started is a race we cannot stage here:
   * check the opener directly instead. */
  rmdir (l2);
  symlink (out, l2);
  _cleanup_fd_ int root = open (h2, O_PATH | O_DIRECTORY);
  int fd = cow_open_beneath (root, "d/sub/passwd", O_RDONLY);
  ok (fd < 0 && errno == ELOOP,
      "cow_open_beneath refuses a symlinked "
      "component (errno %d)",
      errno);
  cow_branch_free (b);
}

static void
kill_at (unsigned step, void *arg)
{
  if (step == *(unsigned *) arg)
    raise (SIGKILL);
}

static void
count_step (unsigned step, void *arg)
{
  *(unsigned *) arg = step;
}

static int
killed_commit (const char *storage, unsigned at)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      struct cow_branch *b = NULL;
      struct cm_err *e = NULL;
      struct cow_commit_opts o = { .step_hook = kill_at, .hook_arg = &at };
      if (cow_branch_open (storage, &b, &e) < 0
          || cow_commit (b, &o, NULL, &e) < 0)
        _exit (3);
      _exit (0);
    }
  int status;
  waitpid (pid, &status, 0);
  return WIFSIGNALED (status) ? WTERMSIG (status) : -WEXITSTATUS (status);
}

static void
test_sigkill_resume (void)
{
  _cleanup_free_ char *rh = pathf ("k-ref"), *rs = pathf ("k-ref-st");
  struct cm_err *e = NULL;
  struct cow_branch *b;
  unsigned steps = 0;

  make_host (rh);
  b = branch_over (rh, rs);
  make_upper (b->upper);
  cow_branch_set_state (b, COW_DEFERRED, &e);
  /* count the steps of the same commit (a killed commit cannot count
   * them: a replay has less to do once files were moved) */
  struct cow_commit_opts count = { .step_hook = count_step,
                                   .hook_arg = &steps };
  ok (cow_commit (b, &count, NULL, &e) == 0, "reference commit");
  cow_branch_free (b);
  _cleanup_free_ char *ref = tree_text (rh);

  ok (steps > 10, "the commit has %u steps", steps);

  bool all = true;
  for (unsigned at = 1; at <= steps; at++)
    {
      _cleanup_free_ char *h = xasprintf ("%s/k-%u", base, at),
                          *s = xasprintf ("%s/k-%u-st", base, at);
      make_host (h);
      b = branch_over (h, s);
      make_upper (b->upper);
      cow_branch_set_state (b, COW_DEFERRED, &e);
      cow_branch_free (b);
      int sig = killed_commit (s, at);
      struct cow_branch *again = NULL;
      int r = cow_branch_open (s, &again, &e);
      bool marked = r == 0 && again->state == COW_COMMITTING;
      if (r == 0)
        r = cow_commit (again, NULL, NULL, &e);
      cow_branch_free (again);
      _cleanup_free_ char *got = r == 0 ? tree_text (h) : NULL;
      bool same = got && strcmp (got, ref) == 0;
      if (sig != SIGKILL || !marked || !same
          || exists (base, s + strlen (base) + 1))
        {
          all = false;
          printf ("# step %u: sig %d marked %d same %d %s\n", at, sig, marked,
                  same, e ? e->msg : "");
          if (got && !same)
            printf ("# got:\n%s# want:\n%s", got, ref);
        }
      cm_err_free (&e);
    }
  ok (all,
      "SIGKILL after each of the %u steps, then commit again: the "
      "tree equals a clean commit, the journal said `committing`",
      steps);
}

static void
test_conflicts (void)
{
  _cleanup_free_ char *h = pathf ("f-host"), *s1 = pathf ("f-st1"),
                      *s2 = pathf ("f-st2"), *s3 = pathf ("f-st3");
  struct cow_branch *b1, *b2, *b3;
  struct cm_err *e = NULL;
  char **cf = NULL;
  mkdir (h, 0755);
  put (h, "x", "x0", 0644);
  put (h, "y", "y0", 0644);
  put (h, "z", "z0", 0644);
  mkd (h, "d");
  put (h, "d/in", "in", 0644);
  b1 = branch_over (h, s1);
  b2 = branch_over (h, s2);
  b3 = branch_over (h, s3);
  put (b1->upper, "x", "x1", 0644);
  put (b2->upper, "y", "y2", 0644);
  put (b3->upper, "x", "x3", 0644);
  whiteout (b3->upper, "d", false);
  put (b3->upper, "z", "z3", 0644);
  cow_branch_set_state (b1, COW_DEFERRED, &e);
  cow_branch_set_state (b2, COW_DEFERRED, &e);
  cow_branch_set_state (b3, COW_DEFERRED, &e);
  /* the host changes d/in after the branches were made */
  put (h, "d/in", "host edit", 0644);

  ok (cow_commit (b1, NULL, &cf, &e) == 0, "first branch commits");
  ok (cow_commit (b2, NULL, &cf, &e) == 0 && cf == NULL,
      "second branch, other paths: no conflict");
  cm_err_free (&e);
  _cleanup_free_ char *y = slurp (h, "y"), *x = slurp (h, "x");
  is_str (y, "y2", "second branch's change landed");
  ok (cow_commit (b3, NULL, &cf, &e) < 0 && cf && cf[0] && cf[1] && !cf[2]
          && strcmp (cf[0], "d/in") == 0 && strcmp (cf[1], "x") == 0,
      "third branch: conflicts on x and inside the deleted d: %s",
      e ? e->msg : "");
  _cleanup_free_ char *x2 = slurp (h, "x"), *z = slurp (h, "z");
  ok (x2 && strcmp (x2, "x1") == 0 && z && strcmp (z, "z0") == 0
          && b3->state == COW_DEFERRED,
      "refused commit changed nothing");
  cm_strv_free (cf);
  cf = NULL;
  cm_err_free (&e);
  struct cow_commit_opts force = { .force = true };
  ok (cow_commit (b3, &force, NULL, &e) == 0, "--force commits");
  _cleanup_free_ char *x3 = slurp (h, "x");
  is_str (x3, "x3", "forced content landed");
  ok (!exists (h, "d"), "forced delete landed");
  cow_branch_free (b1);
  cow_branch_free (b2);
  cow_branch_free (b3);
}

static void
test_states (void)
{
  _cleanup_free_ char *h = pathf ("s-host"), *s = pathf ("s-st");
  struct cow_branch *b, *o = NULL;
  struct cm_err *e = NULL;
  mkdir (h, 0755);
  b = branch_over (h, s);
  ok (cow_branch_set_state (b, COW_KEPT, &e) == 0
          && cow_branch_open (s, &o, &e) == 0 && o->state == COW_KEPT
          && strcmp (o->lower, h) == 0,
      "keep persists in meta");
  ok (cow_branch_set_state (b, COW_COMMITTING, &e) < 0 && e,
      "committing is not a decision one can set");
  cm_err_free (&e);
  b->state = COW_COMMITTING;
  ok (cow_abort (b, &e) < 0 && e && e->errno_ == EBUSY
          && exists (base, "s-st"),
      "abort refused while a commit is in progress");
  cm_err_free (&e);
  ok (cow_abort (o, &e) == 0 && !exists (base, "s-st"), "abort removes it");
  _cleanup_free_ char *data = cow_overlay_data (o, true);
  ok (strstr (data, "redirect_dir=nofollow") && strstr (data, "userxattr"),
      "overlay data: %s", data);
  cow_branch_free (b);
  cow_branch_free (o);
}

static void
sha_is (const char *data, size_t len, size_t repeat, const char *want)
{
  char p[] = "/tmp/test_cow_sha.XXXXXX", hex[65] = "";
  int fd = mkstemp (p);
  for (size_t i = 0; i < repeat; i++)
    if (write (fd, data, len) != (ssize_t) len)
      exit (2);
  lseek (fd, 0, SEEK_SET);
  ok (cow_sha256_fd (fd, hex) == 0 && strcmp (hex, want) == 0,
      "sha256 of %zu bytes: %s", len * repeat, hex);
  close (fd);
  unlink (p);
}

/* FIPS 180-4 test vectors, across the padding boundaries. */
static void
test_sha256 (void)
{
  sha_is ("", 0, 1,
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sha_is ("abc", 3, 1,
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  sha_is ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 1,
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  sha_is ("a", 1, 1000000,
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

int
main (void)
{
  strcpy (base, "/tmp/test_cow.XXXXXX");
  if (mkdtemp (base) == NULL)
    return 2;
  test_sha256 ();
  test_create_validation ();
  if (geteuid () != 0)
    skip ("commit tests need root (mknod 0:0 whiteouts, trusted xattrs)");
  else
    {
      test_commit_semantics ();
      test_symlink_escape ();
      test_sigkill_resume ();
      test_conflicts ();
      test_states ();
      /* again where openat2 is missing (common/openat2.h's walk) */
      cm_rm_rf_at (AT_FDCWD, base, NULL);
      strcpy (base, "/tmp/test_cow.XXXXXX");
      if (mkdtemp (base) == NULL)
        return 2;
      cm_openat2_force_fallback (true);
      printf ("# without openat2\n");
      test_symlink_escape ();
      test_commit_semantics ();
      cm_openat2_force_fallback (false);
    }
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
