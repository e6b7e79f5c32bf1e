/* cow/ commit of a branch whose writer had no privilege on the host
 * (cow_create_opts.strip_privs: a container in a user namespace): no
 * set-id bit on a non-directory and no security.* xattr reaches the lower,
 * by the move path and by the copy path (a file with two names is
 * copied); directories keep S_ISGID; the flag survives in meta; a branch
 * without it keeps everything. */
#include <errno.h>
#include <linux/capability.h>

#include "cow/cow.h"
#include "tests/unit/cow_tree.h"
#include "tests/unit/tap.h"

static char base[64];

static char *
pathf (const char *rel)
{
  return xasprintf ("%s/%s", base, rel);
}

static mode_t
mode_of (const char *dir, const char *rel)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, rel);
  struct stat st;
  return stat (p, &st) == 0 ? st.st_mode & 07777 : (mode_t) -1;
}

static bool
has_cap (const char *dir, const char *rel)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, rel);
  return lgetxattr (p, "security.capability", NULL, 0) >= 0;
}

/* What a writer leaves in the upper: set-id files (one with two names),
 * a file capability, a setgid directory. */
static void
plant (const char *up)
{
  struct vfs_cap_data d = { 0 };
  _cleanup_free_ char *cap = xasprintf ("%s/cap", up);
  _cleanup_free_ char *l1 = xasprintf ("%s/two1", up);
  _cleanup_free_ char *l2 = xasprintf ("%s/two2", up);
  _cleanup_free_ char *dir = xasprintf ("%s/dir", up);
  put (up, "su", "x", 04755);
  put (up, "sg", "y", 02755);
  put (up, "two1", "z", 04755);
  put (up, "cap", "c", 0755);
  d.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  d.data[0].permitted = 1u << CAP_SETUID;
  if (link (l1, l2) < 0 || setxattr (cap, "security.capability", &d,
                                     XATTR_CAPS_SZ_2, 0) < 0
      || mkdir (dir, 0755) < 0 || chmod (dir, 02775) < 0)
    {
      perror ("plant");
      exit (2);
    }
}

static struct cow_branch *
branch (const char *name, bool strip)
{
  _cleanup_free_ char *low = pathf (name);
  _cleanup_free_ char *st = xasprintf ("%s/%s-st", base, name);
  const struct cow_create_opts o = { .strip_privs = strip };
  struct cow_branch *b = NULL, *r = NULL;
  struct cm_err *e = NULL;
  mkdir (low, 0755);
  if (cow_branch_create_opts (low, st, &o, &b, &e) < 0)
    {
      printf ("# create: %s\n", e->msg);
      exit (2);
    }
  plant (b->upper);
  ok (cow_branch_open (st, &r, &e) == 0 && r->strip_privs == strip,
      "meta keeps strip_privs=%d", strip);
  cow_branch_free (r);
  cm_err_free (&e);
  if (cow_branch_set_state (b, COW_DEFERRED, &e) < 0)
    exit (2);
  return b;
}

static void
commit (struct cow_branch *b)
{
  struct cm_err *e = NULL;
  ok (cow_commit (b, NULL, NULL, &e) == 0, "commit: %s", e ? e->msg : "ok");
  cm_err_free (&e);
  cow_branch_free (b);
}

int
main (void)
{
  strcpy (base, "/tmp/test_cow_privs.XXXXXX");
  if (mkdtemp (base) == NULL)
    return 2;
  if (geteuid () != 0)
    {
      skip ("security.capability needs CAP_SETFCAP");
      return tap_done ();
    }
  _cleanup_free_ char *sl = pathf ("strip"), *kl = pathf ("keep");
  commit (branch ("strip", true));
  ok (mode_of (sl, "su") == 0755 && mode_of (sl, "sg") == 0755,
      "moved files lose S_ISUID and S_ISGID");
  ok (mode_of (sl, "two1") == 0755 && mode_of (sl, "two2") == 0755,
      "a copied file (two names) loses them too");
  ok (!has_cap (sl, "cap") && errno == ENODATA,
      "the file capability is not committed");
  ok (mode_of (sl, "dir") == 02775, "a directory keeps S_ISGID");
  commit (branch ("keep", false));
  ok (mode_of (kl, "su") == 04755 && mode_of (kl, "sg") == 02755
          && mode_of (kl, "two2") == 04755 && has_cap (kl, "cap"),
      "without strip_privs everything is kept");
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
