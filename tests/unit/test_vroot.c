/* runtime/vroot*.c: the namespace-less view's resolver over a temp tree.
 * Every escape spelling (`..` chains, absolute and relative symlinks
 * planted in the rootfs or in a mount source, /proc/self tricks, foreign
 * pids, a component swapped for a symlink after resolution) must land
 * inside the view or fail; the control cases resolve where they should. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/landlock.h"
#include "runtime/vroot.h"
#include "runtime/vroot-setup.h"

static char top[PATH_MAX];

static void
mk (const char *rel, const char *content)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", top, rel);
  if (content == NULL)
    {
      if (mkdir (p, 0755) < 0 && errno != EEXIST)
        perror (p), exit (2);
      return;
    }
  FILE *f = fopen (p, "w");
  if (f == NULL)
    perror (p), exit (2);
  fputs (content, f);
  fclose (f);
}

static void
ln (const char *target, const char *rel)
{
  char p[PATH_MAX * 2];
  snprintf (p, sizeof p, "%s/%s", top, rel);
  if (symlink (target, p) < 0)
    perror (p), exit (2);
}

static char *
host (const char *rel)
{
  return xasprintf ("%s/%s", top, rel);
}

static int
res (const struct vroot *v, const struct vr_ctx *c, const char *base,
     const char *path, int flags, struct vr_path *p)
{
  int r = vr_resolve (v, c, base, path, flags, p);
  if (r < 0)
    printf ("# %s: %s\n", path, strerror (-r));
  return r;
}

/* Reads the object the resolver found, through vr_open only. */
static char *
slurp (const struct vr_path *p)
{
  static char buf[256];
  int fd = vr_open (p, O_RDONLY, 0);
  ssize_t n;
  if (fd < 0)
    return NULL;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  buf[n < 0 ? 0 : n] = '\0';
  return buf;
}

static int
magic (void *ud, pid_t pid, const char *name, char out[PATH_MAX])
{
  if (strcmp (name, "root") == 0)
    return snprintf (out, PATH_MAX, "/"), 0;
  if (strcmp (name, "cwd") == 0)
    return snprintf (out, PATH_MAX, "/usr/lib"), 0;
  return -EACCES;
}

static void
tree (void)
{
  char *t = getenv ("TMPDIR");
  snprintf (top, sizeof top, "%s/vroot.XXXXXX", t ? t : "/tmp");
  if (mkdtemp (top) == NULL)
    perror ("mkdtemp"), exit (2);
  mk ("rootfs", NULL), mk ("rootfs/bin", NULL), mk ("rootfs/etc", NULL);
  mk ("rootfs/usr", NULL), mk ("rootfs/usr/lib", NULL), mk ("rootfs/proc", NULL);
  mk ("rootfs/host", NULL), mk ("rootfs/tmp", NULL);
  mk ("rootfs/bin/sh", "sh"), mk ("rootfs/etc/passwd", "view-passwd");
  mk ("rootfs/usr/lib/x", "view-x"), mk ("rootfs/host/decoy", "in-view");
  ln ("usr/lib", "rootfs/lib");
  ln ("../../../../../../../../host", "rootfs/esc_rel");
  char *h = host ("host");
  ln (h, "rootfs/esc_abs");
  free (h);
  ln ("loop", "rootfs/loop");
  mk ("host", NULL), mk ("host/secret", "HOST-SECRET");
  mk ("data", NULL), mk ("data/sub", NULL), mk ("data/sub/f", "data-f");
  ln ("/etc/passwd", "data/abs");
  ln ("../../../../../../host/secret", "data/rel");
  mk ("tmpfs", NULL), mk ("hostname", "box\n");
}

static struct rt_config *
parse_ann (const char *mounts, const char *ann)
{
  char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
      "\"annotations\":{%s},\"mounts\":[%s],"
      "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}", ann, mounts);
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
parse (const char *mounts)
{
  return parse_ann (mounts, "");
}

static const struct rt_ll_rule *
rule_at (const struct rt_ll_policy *p, const char *path)
{
  for (size_t i = 0; i < p->rules_len; i++)
    if (strcmp (p->rules[i].path, path) == 0)
      return &p->rules[i];
  return NULL;
}

/* The prepare step: private directories, the view, the virtual cwd. */
static void
setup (void)
{
  struct cm_err *err = NULL;
  struct vr_setup s;
  char *state = host ("state"), *data = host ("data");
  char *m = xasprintf ("{\"destination\":\"/data\",\"type\":\"none\","
                       "\"source\":\"%s\",\"options\":[\"rbind\"]},"
                       "{\"destination\":\"/run\",\"type\":\"tmpfs\","
                       "\"source\":\"tmpfs\"}", data);
  struct rt_config *c = parse (m);
  char *rootfs = host ("rootfs");
  mkdir (state, 0700);
  free (c->process->cwd);
  c->process->cwd = xstrdup ("/lib/./new/../made");
  ok (vr_setup_prepare (&s, c, rootfs, state, &err) == 0,
      "prepare a namespace-less container");
  if (err)
    printf ("# %s\n", err->msg), cm_err_free (&err);
  char *made = host ("rootfs/usr/lib/made"), *tmp0 = host ("state/vroot/tmpfs/tmpfs-1");
  struct stat st;
  ok (s.cwd && strcmp (s.cwd, "/usr/lib/made") == 0 && stat (made, &st) == 0
      && S_ISDIR (st.st_mode), "process.cwd canonical in the view, made "
      "where the view puts it (%s)", s.cwd ? s.cwd : "-");
  ok (s.exec_dir >= 0 && stat (tmp0, &st) == 0 && s.ntrapped > 60
      && s.v.n == 3, "exec directory, tmpfs directory, %zu calls to trap",
      s.ntrapped);
  vr_setup_free (&s);
  free (c->process->cwd);
  c->process->cwd = xstrdup ("/etc/passwd");
  ok (vr_setup_prepare (&s, c, rootfs, state, &err) < 0 && err
      && strstr (err->msg, "process.cwd") != NULL, "a cwd that is a file is "
      "refused naming process.cwd");
  cm_err_free (&err);
  rt_config_free (c);
  free (made), free (tmp0), free (state), free (data), free (m), free (rootfs);
}

/* The container's Landlock policy, rewritten for the view. */
static void
policy (const char *rootfs)
{
  struct cm_err *err = NULL;
  struct vroot v;
  struct rt_ll_policy p;
  char *data = host ("data"), *m = xasprintf (
      "{\"destination\":\"/data\",\"type\":\"none\",\"source\":\"%s\","
      "\"options\":[\"rbind\",\"ro\"]}", data);
  char *ann = xasprintf ("\"run.oci.sandlock.fs_writable\":\"/data/sub2,/lib\","
                         "\"run.oci.sandlock.fs_readable\":\"/nonexistent\"");
  struct rt_config *c = parse_ann (m, ann);
  struct vr_mount_spec spec[] = { { "/data", data, VR_BIND, true, false } };
  ok (c && vr_build (&v, rootfs, false, spec, 1, &err) == 0
      && rt_ll_policy_build (c, rt_ll_abi () ? rt_ll_abi () : 6, &p, &err) == 0
      && vr_ll_translate (&v, &p, &err) == 0, "policy translated for the view");
  if (err)
    printf ("# %s\n", err->msg), cm_err_free (&err);
  char *usrlib = host ("rootfs/usr/lib"), *sub2 = host ("data/sub2");
  const struct rt_ll_rule *r;
  ok ((r = rule_at (&p, v.e[0].host)) && (r->access & RT_LL_FS_WRITE_FILE),
      "the rootfs's host path is granted");
  ok ((r = rule_at (&p, v.e[1].host)) && !(r->access & RT_LL_FS_WRITE_FILE),
      "the read-only bind's source is granted read-only");
  ok ((r = rule_at (&p, usrlib)) && r->origin == RT_LL_O_ANNOTATION
      && (r->access & RT_LL_FS_WRITE_FILE), "fs_writable=/lib resolved in the "
      "view to the host's rootfs/usr/lib");
  ok ((r = rule_at (&p, sub2)) == NULL || !(r->access & RT_LL_FS_WRITE_FILE),
      "fs_writable inside a read-only mount grants no write");
  bool host_paths = true;
  for (size_t i = 0; i < p.rules_len; i++)
    host_paths &= cm_startswith (p.rules[i].path, top);
  ok (host_paths && p.rules_len == 4, "every rule is a host path in the view "
      "(%zu rules; the missing fs_readable grants nothing)", p.rules_len);
  rt_ll_policy_clear (&p);
  rt_config_free (c);
  free (ann);
  ann = xstrdup ("\"run.oci.sandlock.fs_denied\":\"/etc\"");
  c = parse_ann (m, ann);
  int br = c ? rt_ll_policy_build (c, 6, &p, &err) : -1;
  ok (br == 0
      && vr_ll_translate (&v, &p, &err) < 0 && err
      && strstr (err->msg, "fs_denied") != NULL,
      "a fs_denied that needs a mask is refused, naming the annotation");
  cm_err_free (&err);
  rt_ll_policy_clear (&p);
  rt_config_free (c);
  vr_free (&v);
  free (usrlib), free (sub2), free (ann), free (m), free (data);
}

/* config.json's mounts → the view, and the Landlock rights per entry. */
static void
from_config (const char *rootfs)
{
  struct cm_err *err = NULL;
  struct vr_mount_spec *m = NULL;
  size_t n = 0;
  char **owned = NULL;
  char *priv = host ("priv"), *data = host ("data");
  char *mounts = xasprintf (
      "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
      "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"},"
      "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\"},"
      "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
      "\"options\":[\"ro\"]},"
      "{\"destination\":\"/data\",\"type\":\"none\",\"source\":\"%s\","
      "\"options\":[\"rbind\",\"ro\"]},"
      "{\"destination\":\"/x\",\"type\":\"none\",\"source\":\"%s\","
      "\"options\":[\"bind\",\"noexec\"]}", data, data);
  struct rt_config *c = parse (mounts);
  struct vroot v;
  struct vr_path p;
  struct vr_ctx ctx = { .tgid = getpid (), .tid = getpid (), .cwd = "/" };
  mkdir (priv, 0700);
  ok (c && vr_specs_from_config (c, priv, &m, &n, &owned, &err) == 0,
      "config mounts drawn");
  ok (n == 4 + 6 && m[9].noexec && !m[8].noexec && m[0].kind == VR_PROC && m[1].kind == VR_TMPFS
      && m[2].kind == VR_BIND, "proc, /dev tmpfs + 6 default nodes, bind; "
      "devpts and sysfs left out (%zu)", n);
  ok (vr_build (&v, rootfs, false, m, n, &err) == 0, "view from the config");
  if (err)
    printf ("# %s\n", err->msg), cm_err_free (&err);
  ok (vr_resolve (&v, &ctx, "/", "/dev/null", 0, &p) == 0 && !p.ent->dir
      && vr_landlock_access (p.ent) == RT_LL_FS_DEVICE,
      "/dev/null is the host's node, device rights only");
  ok (vr_resolve (&v, &ctx, "/", "/dev/stdout", 0, &p) == 0 && p.ent == NULL
      && p.fd_num == 1, "/dev/stdout is the caller's fd 1");
  ok (vr_resolve (&v, &ctx, "/", "/data/sub2/f", 0, &p) == 0 && p.ent->ro
      && vr_landlock_access (p.ent) == RT_LL_FS_READ,
      "a read-only bind gets read rights only");
  ok (vr_landlock_access (&v.e[0]) == (RT_LL_FS_READ | RT_LL_FS_WRITE),
      "the rootfs gets read and write");
  ok (vr_resolve (&v, &ctx, "/", "/x", 0, &p) == 0 && p.ent->noexec
      && !(vr_landlock_access (p.ent) & RT_LL_FS_EXECUTE),
      "a noexec bind gets no EXECUTE right");
  vr_free (&v);
  free (m);
  cm_strv_free (owned);
  rt_config_free (c);
  free (mounts);
  mounts = xasprintf ("{\"destination\":\"/n\",\"type\":\"nfs\","
                      "\"source\":\"x\"}");
  c = parse (mounts);
  ok (c && vr_specs_from_config (c, priv, &m, &n, &owned, &err) < 0 && err
      && strstr (err->msg, "mounts[0].type") != NULL,
      "a mount type the view cannot draw is refused, naming the field");
  cm_err_free (&err);
  rt_config_free (c);
  free (mounts), free (priv), free (data);
}

int
main (void)
{
  struct vroot v;
  struct cm_err *err = NULL;
  struct vr_path p;
  char out[PATH_MAX];
  tree ();
  _cleanup_free_ char *rootfs = host ("rootfs"), *data = host ("data"),
                      *tmpfs = host ("tmpfs"), *hn = host ("hostname");
  struct vr_mount_spec m[] = {
    { "/mnt/data", data, VR_BIND, false, false },
    { "/tmp", tmpfs, VR_TMPFS, false, false },
    { "/etc/hostname", hn, VR_BIND, true, false },
    { "/proc", "/proc", VR_PROC, false, false },
    { "/lib/m", tmpfs, VR_BIND, true, false },
  };
  if (vr_build (&v, rootfs, false, m, ARRAY_SIZE (m), &err) < 0)
    {
      printf ("Bail out! vr_build: %s\n", err->msg);
      cm_err_free (&err);
      return 1;
    }
  struct vr_ctx c = { .tgid = getpid (), .tid = getpid (), .cwd = "/",
                      .magic = magic };

  ok (res (&v, &c, "/", "/bin/sh", 0, &p) == 0 && p.ent == &v.e[0]
      && strcmp (p.rel, "bin/sh") == 0, "/bin/sh is the rootfs's");
  ok (res (&v, &c, "/", "/../../../etc/passwd", 0, &p) == 0
      && strcmp (p.vpath, "/etc/passwd") == 0
      && strcmp (slurp (&p), "view-passwd") == 0, "`..` past / stays at /");
  ok (res (&v, &c, "/usr/lib", "../../../../etc/passwd", 0, &p) == 0
      && strcmp (p.vpath, "/etc/passwd") == 0, "relative `..` chain stays");
  ok (res (&v, &c, "/", "/lib/x", 0, &p) == 0
      && strcmp (p.vpath, "/usr/lib/x") == 0, "relative symlink followed");
  ok (res (&v, &c, "/", "/esc_rel/decoy", 0, &p) == 0
      && strcmp (p.vpath, "/host/decoy") == 0
      && strcmp (slurp (&p), "in-view") == 0,
      "relative symlink out of the rootfs is clamped to the view's /");
  ok (vr_resolve (&v, &c, "/", "/esc_abs/secret", 0, &p) == -ENOENT,
      "absolute symlink to a host path is read in the view (no host file)");
  ok (res (&v, &c, "/", "/mnt/data/sub/f", 0, &p) == 0
      && p.ent->kind == VR_BIND && strcmp (p.rel, "sub/f") == 0
      && strcmp (slurp (&p), "data-f") == 0, "bind mount crossed");
  ok (res (&v, &c, "/mnt/data/sub", "../../../etc/passwd", 0, &p) == 0
      && strcmp (p.vpath, "/etc/passwd") == 0, "`..` out of a mount source "
      "goes to the mount point's parent");
  ok (res (&v, &c, "/", "/mnt/data/abs", 0, &p) == 0
      && strcmp (slurp (&p), "view-passwd") == 0,
      "absolute symlink in a mount source resolves in the view");
  ok (vr_resolve (&v, &c, "/", "/mnt/data/rel", 0, &p) == -ENOENT,
      "relative symlink out of a mount source stays in the view");
  ok (res (&v, &c, "/", "/lib", VR_NOFOLLOW, &p) == 0 && p.type == S_IFLNK
      && strcmp (p.vpath, "/lib") == 0, "VR_NOFOLLOW keeps the last symlink");
  ok (vr_resolve (&v, &c, "/", "/loop", 0, &p) == -ELOOP, "symlink loop: ELOOP");
  ok (vr_resolve (&v, &c, "/", "/etc/passwd/x", 0, &p) == -ENOTDIR,
      "file as a directory: ENOTDIR");
  ok (res (&v, &c, "/", "/tmp/new", VR_CREATE, &p) == 0 && p.missing
      && p.ent->kind == VR_TMPFS, "missing last component with VR_CREATE");
  {
    int fd = vr_open (&p, O_CREAT | O_WRONLY, 0600);
    char *f = host ("tmpfs/new");
    ok (fd >= 0 && access (f, F_OK) == 0, "created in the tmpfs directory");
    if (fd >= 0)
      close (fd);
    free (f);
  }
  ok (res (&v, &c, "/", "/etc/hostname", 0, &p) == 0 && !p.ent->dir
      && strcmp (slurp (&p), "box\n") == 0, "file bind mount");
  ok (vr_open (&p, O_WRONLY, 0) == -EROFS, "read-only mount: EROFS");
  {
    struct vroot rv;
    struct vr_path rp;
    int fd = -1;
    ok (vr_build (&rv, rootfs, true, NULL, 0, &err) == 0
        && vr_resolve (&rv, &c, "/", "/usr", 0, &rp) == 0
        && (fd = vr_open (&rp, O_RDONLY | O_DIRECTORY, 0)) >= 0
        && vr_open (&rp, O_TMPFILE | O_RDWR, 0600) == -EROFS,
        "a read-only root opens a directory (O_DIRECTORY is not O_TMPFILE), "
        "refuses O_TMPFILE");
    if (fd >= 0)
      close (fd);
    vr_free (&rv);
  }
  ok (res (&v, &c, "/", "/usr/lib/m", 0, &p) == 0 && p.ent->ro,
      "a mount destination through an image symlink lands in the view");
  {
    struct vroot w;
    struct vr_mount_spec esc[] = { { "/esc_abs/m", tmpfs, VR_BIND, false, false } };
    char *f = host ("host/m");
    int r = vr_build (&w, rootfs, false, esc, 1, &err);
    ok (r < 0 && access (f, F_OK) < 0 && strstr (err->msg, "mounts[0]"),
        "a mount destination through an absolute symlink to a host path "
        "never creates on the host");
    cm_err_free (&err);
    free (f);
  }

  /* linux.maskedPaths / readonlyPaths */
  {
    char *mk[] = { "/lib/x", "/nope" }, *ro[] = { "/mnt/data" };
    vr_set_paths (&v, mk, 2, ro, 1);
    ok (v.nmasked == 1 && strcmp (v.masked[0], "/usr/lib/x") == 0
        && vr_resolve (&v, &c, "/", "/usr/lib/x", 0, &p) == -ENOENT
        && vr_resolve (&v, &c, "/usr", "lib/../lib/x", 0, &p) == -ENOENT,
        "a masked path does not exist, by any spelling");
    ok (vr_resolve (&v, &c, "/", "/mnt/data/sub/f", 0, &p) == 0 && p.ro
        && vr_open (&p, O_WRONLY, 0) == -EROFS
        && vr_resolve (&v, &c, "/", "/etc/passwd", 0, &p) == 0 && !p.ro,
        "a read-only path refuses writes, others do not");
    vr_set_paths (&v, NULL, 0, NULL, 0);
  }

  /* /proc */
  char self[64];
  snprintf (self, sizeof self, "/proc/%d/status", (int) getpid ());
  ok (res (&v, &c, "/", "/proc/self/status", 0, &p) == 0
      && strcmp (p.vpath, self) == 0, "/proc/self is the caller");
  ok (vr_resolve (&v, &c, "/", "/proc/1/status", 0, &p) == -ENOENT,
      "a foreign pid does not exist");
  ok (vr_resolve (&v, &c, "/", "/proc/1/root/etc/passwd", 0, &p) == -ENOENT,
      "/proc/<host pid>/root refused");
  ok (res (&v, &c, "/", "/proc/self/root/etc/passwd", 0, &p) == 0
      && strcmp (p.vpath, "/etc/passwd") == 0, "/proc/self/root is the view's /");
  ok (res (&v, &c, "/", "/proc/self/cwd/x", 0, &p) == 0
      && strcmp (p.vpath, "/usr/lib/x") == 0, "/proc/self/cwd is the virtual cwd");
  ok (res (&v, &c, "/", "/proc/self/fd/0", 0, &p) == 0 && p.ent == NULL
      && p.fd_num == 0 && p.fd_pid == getpid (), "/proc/self/fd/N is the caller's fd");
  ok (vr_resolve (&v, &c, "/", "/proc/self/exe", 0, &p) == -EACCES,
      "an undrawn magic link is refused");
  ok (res (&v, &c, "/", "/proc/self/../self/../../etc/passwd", 0, &p) == 0
      && strcmp (p.vpath, "/etc/passwd") == 0, "`..` through /proc stays");

  /* A component swapped for a symlink after the walk: the final open
   * from the pinned fd refuses it (RESOLVE_NO_SYMLINKS), it does not
   * follow it to the host. */
  ok (res (&v, &c, "/", "/mnt/data/sub/f", 0, &p) == 0, "resolve before swap");
  {
    char *a = host ("data/sub"), *b = host ("data/sub2"), *s = host ("host");
    int swapped = rename (a, b) == 0 && symlink (s, a) == 0;
    mk ("host/f", "HOST-F");
    int fd = vr_open (&p, O_RDONLY, 0);
    ok (swapped && fd == -ELOOP, "swapped component: ELOOP, not the host file");
    if (fd >= 0)
      close (fd);
    free (a), free (b), free (s);
  }

  /* host → view */
  char *hp = host ("rootfs/usr/lib");
  ok (vr_host_to_virtual (&v, hp, out) == 0 && strcmp (out, "/usr/lib") == 0,
      "host path in the rootfs maps back");
  free (hp);
  hp = host ("data/sub2");
  ok (vr_host_to_virtual (&v, hp, out) == 0
      && strcmp (out, "/mnt/data/sub2") == 0, "host path in a mount maps back");
  free (hp);
  ok (vr_host_to_virtual (&v, "/etc", out) == -ENOENT,
      "a host path outside every entry does not map");

  /* Bad input is named. */
  struct vroot w;
  struct vr_mount_spec bad[] = { { "rel", data, VR_BIND, false, false } };
  ok (vr_build (&w, rootfs, false, bad, 1, &err) < 0 && err
      && strstr (err->msg, "mounts[0].destination") != NULL,
      "relative destination refused, naming the field");
  cm_err_free (&err);
  struct vr_mount_spec gone[] = { { "/x", "/nonexistent-src", VR_BIND, false, false } };
  ok (vr_build (&w, rootfs, false, gone, 1, &err) < 0 && err
      && strstr (err->msg, "mounts[0]") != NULL, "missing source named");
  cm_err_free (&err);

  vr_free (&v);
  from_config (rootfs);
  policy (rootfs);
  setup ();
  cm_rm_rf_at (AT_FDCWD, top, &err);
  cm_err_free (&err);
  return tap_done ();
}
