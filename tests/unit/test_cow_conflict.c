/* cow/ conflicts against host-side deletes and replacements, on uppers a
 * real overlayfs wrote (root: the branch's overlay is mounted, changed,
 * unmounted, then the host tree is changed and cow_conflicts asked). */
#include <errno.h>
#include <sys/mount.h>

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
sh (const char *dir, const char *cmd)
{
  _cleanup_free_ char *c = xasprintf ("cd '%s' && %s", dir, cmd);
  if (system (c) != 0)
    {
      printf ("# failed: %s\n", c);
      exit (2);
    }
}

/* Mounts the branch's overlay at |mnt|; false when this host cannot. */
static bool
mount_branch (const struct cow_branch *b, const char *mnt)
{
  _cleanup_free_ char *data = cow_overlay_data (b, false);
  mkdir (mnt, 0755);
  return mount ("overlay", mnt, "overlay", 0, data) == 0;
}

static bool
has (char **v, const char *p)
{
  for (; v && *v; v++)
    if (strcmp (*v, p) == 0)
      return true;
  return false;
}

static char *
joined (char **v)
{
  char *s = xstrdup ("");
  for (; v && *v; v++)
    {
      char *n = xasprintf ("%s %s", s, *v);
      free (s);
      s = n;
    }
  return s;
}

int
main (void)
{
  strcpy (base, "/tmp/test_cow_conflict.XXXXXX");
  if (geteuid () != 0)
    {
      skip ("needs root (mounts overlayfs)");
      return tap_done ();
    }
  if (mkdtemp (base) == NULL)
    return 2;
  _cleanup_free_ char *h = pathf ("host"), *s = pathf ("st"),
                      *m = pathf ("mnt");
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  char **cf = NULL;
  mkdir (h, 0755);
  put (h, "mod", "m0", 0644);      /* branch modifies, host deletes */
  put (h, "gone", "g0", 0644);     /* both delete */
  put (h, "retyped", "r0", 0644);  /* branch modifies, host makes a dir */
  put (h, "delretyped", "d0", 0644); /* branch deletes, host makes a dir */
  mkd (h, "d");                    /* branch writes inside, host rm -rf */
  put (h, "d/in", "i0", 0644);
  put (h, "d/keep", "k0", 0644);
  mkd (h, "rd");                   /* branch renames inside, host not */
  put (h, "rd/ren", "moved by the branch", 0644);
  mkd (h, "both");                 /* both add different names */
  put (h, "both/old", "o0", 0644);
  put (h, "quiet", "q0", 0644);    /* branch modifies, host leaves alone */
  mkd (h, "re");                   /* branch adds inside, host remakes it */
  put (h, "re/old", "o0", 0644);
  settle ();
  if (cow_branch_create (h, s, &b, &e) < 0)
    {
      printf ("# %s\n", e->msg);
      return 2;
    }
  if (!mount_branch (b, m))
    {
      skip ("overlayfs cannot be mounted here: %s", strerror (errno));
      cm_rm_rf_at (AT_FDCWD, base, NULL);
      return tap_done ();
    }
  sh (m, "echo m1 >> mod && rm gone && echo r1 >> retyped && rm delretyped"
         " && echo i1 >> d/in && echo n > d/new && mv rd/ren rd/renamed"
         " && echo b > both/branch && echo q1 >> quiet && echo n > re/new");
  umount (m);
  settle ();
  sh (h, "rm mod gone retyped delretyped && mkdir retyped delretyped"
         " && rm -r d && echo h > both/host && rm -r re && mkdir re");

  ok (cow_conflicts (b, &cf, &e) >= 0, "conflicts listed: %s",
      e ? e->msg : "ok");
  _cleanup_free_ char *all = joined (cf);
  printf ("# conflicts:%s\n", all);
  ok (has (cf, "mod"), "a file the branch modified and the host deleted");
  ok (has (cf, "gone"), "a file both deleted");
  ok (has (cf, "retyped"), "a file the branch modified, the host made a "
                           "directory");
  ok (has (cf, "delretyped"), "a file the branch deleted, the host made a "
                              "directory");
  ok (has (cf, "d"), "a directory the host deleted, the branch wrote in");
  ok (!has (cf, "rd/renamed") && !has (cf, "rd/ren"),
      "a rename inside the branch, host parent untouched: no conflict");
  /* (in a directory the host changed too, the renamed copy-up is a
   * conflict: a false positive docs/cow.md names) */
  ok (!has (cf, "both/branch") && !has (cf, "both"),
      "different names added on each side: no conflict");
  ok (!has (cf, "quiet"), "a path only the branch changed: no conflict");
  ok (has (cf, "re"), "a directory the branch added to, deleted and made "
                      "again by the host (another inode than the copy-up's "
                      "origin)");
  cm_strv_free (cf);
  cm_err_free (&e);

  /* The commit refuses over them, and --force still merges. */
  cow_branch_set_state (b, COW_DEFERRED, &e);
  cf = NULL;
  ok (cow_commit (b, NULL, &cf, &e) < 0 && cf && has (cf, "mod"),
      "commit refused: %s", e ? e->msg : "(committed)");
  ok (!exists (h, "mod") && !exists (h, "d"), "nothing merged");
  cm_strv_free (cf);
  cm_err_free (&e);
  cow_branch_free (b);
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
