/* rt_overlay_prepare (runtime/overlay-try.c): the kernel asked, before
 * clone, whether it takes a cow layer's overlay.  Outside a user namespace
 * the answer is the overlay itself as a detached mount; in one, a try in a
 * forked child; an upper overlayfs refuses (an overlayfs upper) is a 0
 * with the kernel's reason; nothing is ever left mounted on the host. */
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runtime/runtime.h"
#include "tests/unit/cow_tree.h"
#include "tests/unit/tap.h"

static char base[64];

static char *
pathf (const char *rel)
{
  return xasprintf ("%s/%s", base, rel);
}

/* Attaches |fd| on |mnt| in a private mount namespace of a child and
 * reads |file| through it: 0 when it reads |want|. */
static int
attach_reads (int fd, const char *mnt, const char *file, const char *want)
{
  pid_t pid = fork ();
  int status;
  if (pid == 0)
    {
      char *s;
      if (unshare (CLONE_NEWNS) < 0
          || mount (NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0
          || syscall (SYS_move_mount, fd, "", AT_FDCWD, mnt,
                      0x4 /* MOVE_MOUNT_F_EMPTY_PATH */)
                 < 0)
        _exit (2);
      s = slurp (mnt, file);
      _exit (s && strcmp (s, want) == 0 ? 0 : 3);
    }
  return waitpid (pid, &status, 0) == pid && WIFEXITED (status)
             ? WEXITSTATUS (status)
             : -1;
}

static bool
mounted_below (const char *dir)
{
  _cleanup_free_ char *mi = NULL;
  if (cm_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 1 << 20, &mi, NULL,
                       NULL)
      < 0)
    return true;
  return strstr (mi, dir) != NULL;
}

int
main (void)
{
  strcpy (base, "/tmp/test_cow_overlay.XXXXXX");
  if (geteuid () != 0)
    {
      skip ("needs root (mounts overlayfs)");
      return tap_done ();
    }
  if (mkdtemp (base) == NULL)
    return 2;
  _cleanup_free_ char *l = pathf ("l"), *u = pathf ("u"), *w = pathf ("w"),
                      *m = pathf ("m");
  mkdir (l, 0755);
  mkdir (u, 0755);
  mkdir (w, 0755);
  mkdir (m, 0755);
  put (l, "f", "lower", 0644);
  const char *lowers[1] = { l };
  struct rt_rootfs_source src = { .kind = RT_ROOTFS_OVERLAY, .lowers = lowers,
                                   .lowers_len = 1, .upper = u, .work = w,
                                   .nodev = true };
  struct cm_err *e = NULL;
  char *why = NULL;

  int r = rt_overlay_prepare (&src, false, &why, &e);
  if (r == 0 && why && strstr (why, "no overlayfs"))
    {
      skip ("no overlayfs: %s", why);
      cm_rm_rf_at (AT_FDCWD, base, NULL);
      return tap_done ();
    }
  ok (r == 1 && src.premade && src.mount_fd >= 0,
      "outside a user namespace: the overlay is made, as a detached mount");
  ok (!mounted_below (base), "and attached nowhere on the host");
  ok (attach_reads (src.mount_fd, m, "f", "lower") == 0,
      "the init's attach shows the lower");
  if (src.premade)
    close (src.mount_fd);

  struct rt_rootfs_source us = src;
  us.premade = false;
  free (why);
  why = NULL;
  r = rt_overlay_prepare (&us, true, &why, &e);
  ok (r == 1 && !us.premade,
      "in a user namespace: tried in a child, nothing kept (%s)",
      why ? why : e ? e->msg : "taken");
  cm_err_free (&e);

  /* an upper on an overlayfs: refused, with the kernel's reason */
  _cleanup_free_ char *ol = pathf ("ol"), *ou = pathf ("ou"),
                      *ow = pathf ("ow"), *om = pathf ("om");
  _cleanup_free_ char *data = xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s",
                                         ol, ou, ow);
  mkdir (ol, 0755);
  mkdir (ou, 0755);
  mkdir (ow, 0755);
  mkdir (om, 0755);
  if (mount ("overlay", om, "overlay", 0, data) < 0)
    skip ("cannot mount an overlayfs: %s", strerror (errno));
  else
    {
      _cleanup_free_ char *u2 = pathf ("om/u"), *w2 = pathf ("om/w");
      mkdir (u2, 0755);
      mkdir (w2, 0755);
      struct rt_rootfs_source bad = src;
      bad.premade = false;
      bad.upper = u2;
      bad.work = w2;
      free (why);
      why = NULL;
      r = rt_overlay_prepare (&bad, false, &why, &e);
      ok (r == 0 && !bad.premade && why && strstr (why, "upperdir"),
          "an overlayfs upper is refused, the kernel says why: %s",
          why ? why : "(taken)");
      umount2 (om, MNT_DETACH);
    }
  free (why);
  cm_err_free (&e);
  cm_rm_rf_at (AT_FDCWD, base, NULL);
  return tap_done ();
}
