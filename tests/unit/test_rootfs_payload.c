/* runtime/ seams, through rt_container_create as a library caller uses
 * them: RT_ROOTFS_OVERLAY (the container's / is an overlay of two lowers
 * and an upper, mounted in its own mount namespace: its writes and
 * deletions land in the upper, the lowers do not change, the host sees no
 * mount) and RT_PAYLOAD_FN (a function runs in the init instead of
 * execve, after start and seccomp, confined; the init exits with its
 * value and `start` reports success).  Root only (exit 77 otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/runtime.h"

static char dir[64];

static struct rt_config *
config_ns (const char *args, const char *linux_extra)
{
  char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":%s,\"cwd\":\"/\",\"env\":[\"PATH=/bin\"],"
      "\"user\":{\"uid\":0,\"gid\":0},\"noNewPrivileges\":true},"
      "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"},"
      "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"options\":[\"nosuid\","
      "\"mode=755\"]}],\"linux\":{\"namespaces\":[{\"type\":\"mount\"},"
      "{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"}%s]}}", args,
      linux_extra);
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  if (oci_spec_parse (json, strlen (json), &c, &err) < 0)
    {
      printf ("# parse: %s\n", err->msg);
      cm_err_free (&err);
    }
  free (json);
  return c;
}

static struct rt_config *
config (const char *args)
{
  return config_ns (args, "");
}

static char *
slurp (const char *rel)
{
  char path[256], buf[512];
  snprintf (path, sizeof path, "%s/%s", dir, rel);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  buf[n > 0 ? n : 0] = '\0';
  return xstrdup (buf);
}

static void
put (const char *rel, const char *text)
{
  char path[256];
  snprintf (path, sizeof path, "%s/%s", dir, rel);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, text, strlen (text)) < 0)
    printf ("# write %s: %s\n", path, strerror (errno));
  if (fd >= 0)
    close (fd);
}

static int
sh (const char *cmd)
{
  char *c = xasprintf ("cd %s && %s", dir, cmd);
  int r = system (c);
  free (c);
  return r;
}

/* Two lowers (top: a file that shadows the bottom's; bottom: busybox),
 * a fresh upper and work dir, an empty mount point. */
static void
layers (const char *tag)
{
  char *cmd = xasprintf (
      "rm -rf up-%1$s work-%1$s root-%1$s && mkdir -p top bottom/bin "
      "bottom/proc bottom/dev up-%1$s work-%1$s root-%1$s && "
      "cp /bin/busybox bottom/bin/ && ln -sf busybox bottom/bin/sh && "
      "ln -sf busybox bottom/bin/cat && ln -sf busybox bottom/bin/rm && "
      "mkfifo fifo-%1$s status-%1$s", tag);
  if (sh (cmd) != 0)
    printf ("# setup failed: %s\n", cmd);
  free (cmd);
  put ("top/top.txt", "top\n");
  put ("top/shared.txt", "from-top\n");
  put ("bottom/shared.txt", "from-bottom\n");
  put ("bottom/bottom.txt", "bottom\n");
  put ("bottom/gone.txt", "gone\n");
}

/* create + start + wait; returns the exit status, or -1 with the
 * create's error in *msg when |msg| is given. */
static int
run_err (const char *tag, const struct rt_config *c, struct rt_payload pl,
         const char *missing_lower, char **msg)
{
  char *root = xasprintf ("%s/root-%s", dir, tag);
  char *up = xasprintf ("%s/up-%s", dir, tag);
  char *work = xasprintf ("%s/work-%s", dir, tag);
  char *fifo = xasprintf ("%s/fifo-%s", dir, tag);
  char *status = xasprintf ("%s/status-%s", dir, tag);
  char *top = xasprintf ("%s/top", dir), *bottom = xasprintf ("%s/bottom", dir);
  const char *lowers[] = { top, missing_lower ? missing_lower : bottom };
  char *id = xasprintf ("test-rootfs-payload-%s-%d", tag, (int) getpid ());
  struct rt_create_opts o = {
    .config = c, .id = id, .bundle = dir, .rootfs = root,
    .exec_fifo = fifo, .start_status = status, .no_cgroup = true,
    .detach = true, .payload = pl,
    .rootfs_source = { .kind = RT_ROOTFS_OVERLAY, .lowers = lowers,
                       .lowers_len = 2, .upper = up, .work = work },
  };
  struct rt_created out = { 0 };
  struct cm_err *err = NULL;
  int st = -1, ret = -1;

  if (rt_container_create (&o, &out, &err) < 0)
    {
      printf ("# create: %s\n", err->msg);
      if (msg)
        *msg = xstrdup (err->msg);
    }
  else if (rt_container_start (fifo, status, &err) < 0)
    printf ("# start: %s\n", err->msg);
  if (out.pid > 0 && waitpid (out.pid, &st, 0) == out.pid && WIFEXITED (st))
    ret = WEXITSTATUS (st);
  cm_err_free (&err);
  free (out.landlock_pins);
  free (out.warning);
  free (out.cgroup_path);
  free (root), free (up), free (work), free (fifo), free (status);
  free (top), free (bottom), free (id);
  return ret;
}

static int
run (const char *tag, const struct rt_config *c, struct rt_payload pl)
{
  return run_err (tag, c, pl, NULL, NULL);
}

static void
test_overlay (void)
{
  struct rt_config *c = config (
      "[\"sh\",\"-c\",\"echo new > /new.txt && echo changed > /bottom.txt "
      "&& rm /gone.txt && cat /top.txt /shared.txt > /seen.txt\"]");
  struct stat st;
  char path[256];
  char *s;

  layers ("ov");
  ok (run ("ov", c, (struct rt_payload) { 0 }) == 0, "overlay: sh exits 0");
  is_str (s = slurp ("up-ov/new.txt"), "new\n", "overlay: a new file is in "
          "the upper"); free (s);
  is_str (s = slurp ("up-ov/bottom.txt"), "changed\n", "overlay: a changed "
          "lower file is copied up"); free (s);
  is_str (s = slurp ("up-ov/seen.txt"), "top\nfrom-top\n", "overlay: the "
          "top lower shadows the bottom one"); free (s);
  snprintf (path, sizeof path, "%s/up-ov/gone.txt", dir);
  ok (stat (path, &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == 0,
      "overlay: a deleted lower file is a whiteout in the upper");
  is_str (s = slurp ("bottom/bottom.txt"), "bottom\n", "overlay: the lower "
          "file is unchanged"); free (s);
  is_str (s = slurp ("bottom/gone.txt"), "gone\n", "overlay: the deleted "
          "file is still in the lower"); free (s);
  ok ((s = slurp ("bottom/new.txt")) == NULL && slurp ("top/new.txt") == NULL,
      "overlay: nothing new in the lowers"); free (s);
  ok (sh ("[ -z \"$(ls -A root-ov)\" ]") == 0,
      "overlay: the host sees no mount on the rootfs path");
  rt_config_free (c);
}

/* A layer that is not there: the error names it, nothing is left. */
static void
test_overlay_bad_layer (void)
{
  struct rt_config *c = config ("[\"true\"]");
  char *missing = xasprintf ("%s/no-such-layer", dir), *msg = NULL;

  layers ("bad");
  ok (run_err ("bad", c, (struct rt_payload) { 0 }, missing, &msg) == -1
          && msg && strstr (msg, "rootfs overlay lowers[1]")
          && strstr (msg, missing),
      "overlay: a missing lower fails create naming lowers[1] and its path");
  ok (sh ("for d in root-bad up-bad work-bad; do [ -z \"$(ls -A $d)\" ] "
          "|| exit 1; done") == 0,
      "overlay: a failed create leaves no mount and writes nothing");
  free (msg);
  msg = NULL;
  /* overlayfs would read "a:b" as two layers. */
  ok (run_err ("bad", c, (struct rt_payload) { 0 }, "/tmp/a:b", &msg) == -1
          && msg && strstr (msg, "rootfs overlay lowers[1] `/tmp/a:b`"),
      "overlay: a layer path holding ':' is refused");
  free (missing);
  free (msg);
  rt_config_free (c);
}

/* Inside the container's own user namespace: overlayfs with userxattr
 * (Linux >= 5.11); the upper belongs to the mapped root. */
static void
test_overlay_userns (void)
{
  struct rt_config *c = config_ns (
      "[\"sh\",\"-c\",\"echo u > /u.txt && rm /gone.txt\"]",
      ",{\"type\":\"user\"}],\"uidMappings\":[{\"containerID\":0,"
      "\"hostID\":100000,\"size\":65536}],\"gidMappings\":[{"
      "\"containerID\":0,\"hostID\":100000,\"size\":65536}");
  struct stat st;
  char path[256];
  char *s;

  layers ("us");
  sh ("chown 100000:100000 up-us work-us");
  ok (run ("us", c, (struct rt_payload) { 0 }) == 0,
      "overlay in a user namespace: sh exits 0");
  is_str (s = slurp ("up-us/u.txt"), "u\n", "overlay in a user namespace: "
          "the write is in the upper"); free (s);
  snprintf (path, sizeof path, "%s/up-us/u.txt", dir);
  ok (stat (path, &st) == 0 && st.st_uid == 100000,
      "overlay in a user namespace: owned by the mapped root");
  is_str (s = slurp ("bottom/gone.txt"), "gone\n", "overlay in a user "
          "namespace: the lower is unchanged"); free (s);
  rt_config_free (c);
}

/* In the init, after start and seccomp: what confines it, to a file. */
static int
payload (void *arg)
{
  char buf[4096], out[256];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  const char *sc, *nnp;
  struct termios t;
  int e;

  buf[n > 0 ? n : 0] = '\0';
  sc = strstr (buf, "Seccomp:\t");
  nnp = strstr (buf, "NoNewPrivs:\t");
  fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  /* /dev/null has no Landlock IOCTL_DEV right: EACCES, not ENOTTY. */
  e = fd >= 0 && ioctl (fd, TCGETS, &t) < 0 ? errno : 0;
  snprintf (out, sizeof out, "%s seccomp=%c nnp=%c ioctl=%s pid=%d\n",
            (const char *) arg, sc ? sc[9] : '?', nnp ? nnp[12] : '?',
            e == EACCES ? "EACCES" : strerror (e), (int) getpid ());
  fd = open ("/fn.txt", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, out, strlen (out)) < 0)
    return 1;
  return 7;
}

static void
test_payload_fn (void)
{
  struct rt_config *c = config ("[\"unused\"]");
  struct rt_payload pl = { .kind = RT_PAYLOAD_FN, .fn = payload,
                           .arg = "hello" };
  char *s;

  layers ("fn");
  ok (run ("fn", c, pl) == 7, "payload fn: start succeeds and the init "
      "exits with the function's value");
  is_str (s = slurp ("up-fn/fn.txt"),
          "hello seccomp=2 nnp=1 ioctl=EACCES pid=1\n",
          "payload fn: runs as pid 1 under seccomp, no_new_privs and "
          "Landlock"); free (s);
  rt_config_free (c);
}

/* Seccomp, NoNewPrivs, CapEff and a Landlock-denied ioctl, as text. */
static void
confinement (char *out, size_t len)
{
  char buf[4096];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  const char *sc, *nnp, *cap;
  struct termios t;
  int e;
  if (fd >= 0)
    close (fd);
  buf[n > 0 ? n : 0] = '\0';
  sc = strstr (buf, "Seccomp:\t");
  nnp = strstr (buf, "NoNewPrivs:\t");
  cap = strstr (buf, "CapEff:\t");
  fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  e = fd >= 0 && ioctl (fd, TCGETS, &t) < 0 ? errno : 0;
  if (fd >= 0)
    close (fd);
  snprintf (out, len, "seccomp=%c nnp=%c cap=%.16s ioctl=%s",
            sc ? sc[9] : '?', nnp ? nnp[12] : '?', cap ? cap + 8 : "?",
            e == EACCES ? "EACCES" : strerror (e));
}

/* Makes one list of the seal from C, as a payload would. */
static int
apply (const struct rt_seal *s, const struct rt_seal_list *l)
{
  uint64_t *data = xcalloc (s->data_len / 8 + 1, 8);
  int r = 0;
  memcpy (data, s->data, s->data_len);
  for (size_t i = 0; i < s->nrelocs; i++)
    data[s->relocs[i] / 8] += (uint64_t) (uintptr_t) data;
  for (size_t i = 0; r == 0 && i < l->ncalls; i++)
    {
      const struct rt_seal_call *c = &l->calls[i];
      long a[6];
      for (int k = 0; k < 6; k++)
        a[k] = c->arg[k] + ((c->ptr_args >> k) & 1 ? (long) (uintptr_t) data : 0);
      if (syscall (c->nr, a[0], a[1], a[2], a[3], a[4], a[5]) < 0
          && errno != c->ok_errno)
        r = -1;
    }
  free (data);
  return r;
}

/* In the init after start, before the drop and the filter: what confines
 * it before and after it makes the seal, to a file. */
static int
payload_seal (void *arg, const struct rt_seal *seal)
{
  char before[128], after[128], out[512];
  int fd;
  confinement (before, sizeof before);
  if (apply (seal, &seal->narrow) < 0 || apply (seal, &seal->seal) < 0)
    return 1;
  confinement (after, sizeof after);
  snprintf (out, sizeof out, "%s before %s after %s pid=%d\n",
            (const char *) arg, before, after, (int) getpid ());
  fd = open ("/seal.txt", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, out, strlen (out)) < 0)
    return 1;
  return 9;
}

static void
test_payload_fn_seal (void)
{
  struct rt_config *c = config ("[\"unused\"]");
  struct rt_payload pl = { .kind = RT_PAYLOAD_FN_SEAL, .fn_seal = payload_seal,
                           .arg = "sealed" };
  char *s, *want, ours[4096], *cap;
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, ours, sizeof ours - 1) : -1;

  if (fd >= 0)
    close (fd);
  ours[n > 0 ? n : 0] = '\0';
  cap = strstr (ours, "CapEff:\t");
  /* the setup runs with the runtime's own effective set */
  want = xasprintf ("sealed before seccomp=0 nnp=0 cap=%.16s ioctl=EACCES "
                    "after seccomp=2 nnp=1 cap=0000000000000000 "
                    "ioctl=EACCES pid=1\n", cap ? cap + 8 : "?");
  layers ("fs");
  ok (run ("fs", c, pl) == 9, "payload fn_seal: start succeeds and the "
      "init exits with the function's value");
  is_str (s = slurp ("up-fs/seal.txt"), want,
          "payload fn_seal: runs under Landlock with the setup's "
          "capabilities and no filter; its seal drops them and loads the "
          "filter"); free (s);
  free (want);
  rt_config_free (c);
}

int
main (void)
{
  if (geteuid () != 0 || access ("/bin/busybox", X_OK) != 0)
    {
      printf ("1..0 # skip needs root and /bin/busybox (static)\n");
      return 77;
    }
  snprintf (dir, sizeof dir, "/tmp/test-rootfs-payload.XXXXXX");
  /* The mapped root of the user namespace test must reach the layers. */
  if (mkdtemp (dir) == NULL || chmod (dir, 0755) < 0)
    return 1;
  test_overlay ();
  test_overlay_bad_layer ();
  test_overlay_userns ();
  test_payload_fn ();
  test_payload_fn_seal ();
  {
    char *c = xasprintf ("rm -rf %s", dir);
    if (system (c) != 0)
      printf ("# cleanup of %s failed\n", dir);
    free (c);
  }
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
