/* runtime/cgroup*.c: path rules and conversions; the v1 and v2 file logic on
 * fake trees in a temp dir (the only way to run the pure-v2 code on this
 * hybrid machine); with root, a real container cgroup on this host. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/cgroup-internal.h"
#include "cgroup_fake.h"
#include "tap.h"

static char *
sysd (const char *spec)
{
  char *out = NULL;
  struct cm_err *e = NULL;
  if (cg_systemd_path (spec, &out, &e) < 0)
    {
      cm_err_free (&e);
      return NULL;
    }
  return out;
}

static bool
valid (const char *p)
{
  struct cm_err *e = NULL;
  int r = cg_validate_path (p, &e);
  cm_err_free (&e);
  return r == 0;
}

static char *
resolve (const char *path, const char *id, bool systemd,
         enum cg_layout layout, const char *self)
{
  struct rt_cgroup_opts o = { .cgroups_path = path, .id = id,
                              .systemd = systemd };
  char *out = NULL;
  struct cm_err *e = NULL;
  if (cg_resolve_path (&o, layout, self, &out, &e) < 0)
    {
      cm_err_free (&e);
      return NULL;
    }
  return out;
}

#define CHECK_STR(expr, want, ...)                                      \
  do {                                                                  \
    char *got_ = (expr);                                                \
    is_str (got_, want, __VA_ARGS__);                                   \
    free (got_);                                                        \
  } while (0)

static void
test_logic (void)
{
  ok (cg_shares_to_weight (2) == 1, "shares 2 -> weight 1");
  ok (cg_shares_to_weight (1024) == 39, "shares 1024 -> weight 39 (runc)");
  ok (cg_shares_to_weight (262144) == 10000, "shares max -> weight 10000");
  ok (cg_shares_to_weight (1000000) == 10000, "shares clamp high");
  ok (cg_shares_to_weight (0) == 0, "shares 0 -> unset");
  ok (cg_blkio_to_io_weight (10) == 1 && cg_blkio_to_io_weight (1000) == 10000
          && cg_blkio_to_io_weight (500) == 4950,
      "blkio weight -> io.weight");

  CHECK_STR (sysd ("system.slice:libpod:abc"),
             "/system.slice/libpod-abc.scope", "systemd scope");
  CHECK_STR (sysd ("a-b-c.slice:p:n"), "/a.slice/a-b.slice/a-b-c.slice/p-n.scope",
             "nested slice expanded");
  CHECK_STR (sysd (":p:n"), "/system.slice/p-n.scope", "empty slice = system");
  CHECK_STR (sysd ("-.slice:p:n"), "/p-n.scope", "root slice");
  CHECK_STR (sysd ("machine.slice::foo"), "/machine.slice/foo.scope",
             "no prefix");
  CHECK_STR (sysd ("user.slice:x:sub.slice"), "/user.slice/sub.slice",
             "name that is a slice");
  const char *bad[] = { "a--b.slice:p:n", "-a.slice:p:n", "a-.slice:p:n",
                        "foo:p:n", "a.slice:p", "a.slice:p:n:x",
                        "a.slice:p:", "a.slice:p:x/y", "/abs/path" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    ok (sysd (bad[i]) == NULL, "systemd spec `%s` rejected", bad[i]);

  ok (valid ("/a/b") && valid ("a/b") && valid ("/a/.b") && valid ("x"),
      "good paths accepted");
  const char *badp[] = { "/a//b", "/a/../b", "/", "", "/a/", "./a", "a/..",
                         "//a" };
  for (size_t i = 0; i < ARRAY_SIZE (badp); i++)
    ok (!valid (badp[i]), "path `%s` rejected", badp[i]);

  const char *hyb = "9:name=systemd:/sd\n4:memory:/m/x\n0::/u/v\n";
  CHECK_STR (resolve (NULL, "c1", false, CG_V2, ""), "/sandlock-oci/c1",
             "default path");
  CHECK_STR (resolve ("/abs/p", "c1", false, CG_V2, ""), "/abs/p",
             "absolute path kept");
  CHECK_STR (resolve ("foo/bar", "c1", false, CG_V2, "0::/user.slice/x\n"),
             "/user.slice/x/foo/bar", "relative to own v2 cgroup");
  CHECK_STR (resolve ("foo", "c1", false, CG_V2, "0::/\n"), "/foo",
             "relative to root cgroup");
  CHECK_STR (resolve ("foo", "c1", false, CG_HYBRID, hyb), "/u/v/foo",
             "hybrid: relative to the unified entry");
  CHECK_STR (resolve ("foo", "c1", false, CG_V1, hyb), "/sd/foo",
             "v1: relative to name=systemd");
  CHECK_STR (resolve ("foo", "c1", false, CG_V1, "4:memory:/m\n2:cpu:/c\n"),
             "/m/foo", "v1 without name=systemd: first entry");
  CHECK_STR (resolve (NULL, "c1", true, CG_V2, ""),
             "/system.slice/sandlock-oci-c1.scope", "systemd default");
  CHECK_STR (resolve ("machine.slice:libpod:x", "c1", true, CG_V2, ""),
             "/machine.slice/libpod-x.scope", "systemd given");
  ok (resolve ("/abs", "c1", true, CG_V2, "") == NULL,
      "systemd: plain path rejected");
  ok (resolve (NULL, NULL, false, CG_V2, "") == NULL, "no path, no id");
  ok (resolve (NULL, "a/b", false, CG_V2, "") == NULL, "id with slash");
  ok (resolve ("a/../b", "c1", false, CG_V2, "0::/\n") == NULL,
      "relative with ..");
  struct rt_resources r = { 0 };
  ok (!cg_resources_needed (NULL) && !cg_resources_needed (&r),
      "no resources: nothing needed");
  r.devices_len = 1;
  ok (!cg_resources_needed (&r), "devices rules alone need no cgroup");
  r.pids.limit_present = 1;
  ok (cg_resources_needed (&r), "a pids limit needs a cgroup");
}

static void
test_mountinfo (void)
{
  const char *hybrid =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "36 31 0:32 / /mnt/memory2 rw - cgroup cgroup rw,memory\n"
      "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n";
  const char *v2 = "30 23 0:27 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 "
                   "rw,nsdelegate,memory_recursiveprot\n"
                   "31 23 0:28 / /sys/fs/cgroup/x\\040y rw - cgroup cgroup "
                   "rw,name=foo\n";
  const char *v1 = "32 31 0:29 / /cg/pids rw - cgroup cgroup rw,pids\n";
  const char *none = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n";
  struct cg_host h;
  struct cm_err *e = NULL;

  ok (cg_host_parse (hybrid, &h, &e) == 0 && h.layout == CG_HYBRID,
      "hybrid detected");
  is_str (h.v2_mount, "/sys/fs/cgroup/unified", "unified mount");
  ok (h.v1_len == 3, "3 v1 hierarchies (duplicate mount skipped): %zu",
      h.v1_len);
  ok (cg_v1_index (&h, "cpu") == 0 && cg_v1_index (&h, "cpuacct") == 0
          && cg_v1_index (&h, "memory") == 1
          && cg_v1_index (&h, "name=systemd") == 2
          && cg_v1_index (&h, "pids") == -1,
      "controllers mapped to hierarchies");
  is_str (h.v1[0].dir, "/sys/fs/cgroup/cpu,cpuacct", "co-mounted dir");
  cg_host_clear (&h);
  ok (cg_host_parse (v2, &h, &e) == 0 && h.layout == CG_V2 && h.v1_len == 0,
      "pure v2 detected (named v1 tree ignored)");
  is_str (h.v2_mount, "/sys/fs/cgroup", "v2 mount");
  cg_host_clear (&h);
  ok (cg_host_parse (v1, &h, &e) == 0 && h.layout == CG_V1
          && h.v2_mount == NULL,
      "pure v1 detected");
  cg_host_clear (&h);
  ok (cg_host_parse (none, &h, &e) == 0 && h.layout == CG_NONE,
      "no cgroups detected");
  cg_host_clear (&h);
  const char *l = rt_cgroup_layout ();
  ok (strcmp (l, "v1") == 0 || strcmp (l, "v2") == 0
          || strcmp (l, "hybrid") == 0 || strcmp (l, "none") == 0,
      "this host: %s", l);
}

/* ---- fake trees -------------------------------------------------------- */

static char *
mkd (const char *base, const char *rel)
{
  char *p = xasprintf ("%s%s", base, rel);
  struct cm_err *e = NULL;
  cm_mkdir_p (p, 0755, &e);
  cm_err_free (&e);
  return p;
}

static bool
err_has (struct cm_err *e, const char *s)
{
  bool r = e && e->msg && strstr (e->msg, s);
  if (!r)
    printf ("#   error: %s (want `%s`)\n", e && e->msg ? e->msg : "(none)",
            s);
  return r;
}

/* A fake kernel for cgroup.freeze: once the runtime writes cgroup.freeze,
 * cgroup.events says "frozen 1" (seen by the runtime through inotify). */
static pid_t
fake_freezer (const char *leaf)
{
  int ifd = inotify_init1 (IN_CLOEXEC);
  char *fz = xasprintf ("%s/cgroup.freeze", leaf);
  pid_t pid;
  inotify_add_watch (ifd, fz, IN_CLOSE_WRITE);
  free (fz);
  pid = fork ();
  if (pid == 0)
    {
      char buf[4096];
      if (read (ifd, buf, sizeof buf) > 0)
        put (leaf, "cgroup.events", "populated 1\nfrozen 1\n");
      _exit (0);
    }
  close (ifd);
  return pid;
}

static void
v2_leaf_files (const char *leaf)
{
  const char *files[] = { "memory.max", "memory.low", "memory.swap.max",
                          "cpu.weight", "pids.max", "cpuset.cpus",
                          "io.weight", "memory.high", "cgroup.procs",
                          "cgroup.freeze", "cgroup.kill",
                          "cgroup.subtree_control" };
  for (size_t i = 0; i < ARRAY_SIZE (files); i++)
    put (leaf, files[i], "");
  put (leaf, "cpu.max", "max 100000\n");
  put (leaf, "cgroup.events", "populated 1\nfrozen 0\n");
}

static void
test_fake_v2 (const char *tmp)
{
  char *root = mkd (tmp, "/v2"), *pod = mkd (root, "/pod");
  char *leaf = mkd (pod, "/c1");
  struct cg_host h = { .layout = CG_V2, .v2_mount = root };
  struct rt_resources r = { 0 };
  struct rt_kv kv = { .key = (char *) "memory.high", .value = (char *) "1000" };
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  struct rt_cgroup_stats st;
  pid_t *pids = NULL, fz;
  size_t n = 0;

  put (root, "cgroup.controllers", "cpuset cpu io memory pids\n");
  put (root, "cgroup.subtree_control", "cpu memory\n");
  put (pod, "cgroup.subtree_control", "");
  v2_leaf_files (leaf);
  r.memory.limit = 64 << 20;
  r.memory.reservation = 32 << 20;
  r.memory.swap = 96 << 20;
  r.memory.limit_present = r.memory.reservation_present = 1;
  r.memory.swap_present = 1;
  r.cpu.shares = 1024;
  r.cpu.quota = 50000;
  r.cpu.shares_present = r.cpu.quota_present = 1;
  r.cpu.cpus = (char *) "0";
  r.pids.limit = 50;
  r.pids.limit_present = 1;
  r.blkio.weight = 500;
  r.blkio.weight_present = 1;
  r.unified = &kv;
  r.unified_len = 1;

  ok (cg_create_on (&h, "/pod/c1", &r, 4242, &cg, &e) == 0,
      "fake v2: create %s", e ? e->msg : "");
  cm_err_free (&e);
  CHECK_STR (get (root, "cgroup.subtree_control"), "+cpuset +io +pids",
             "root: missing controllers enabled in one write");
  CHECK_STR (get (pod, "cgroup.subtree_control"),
             "+cpuset +cpu +io +memory +pids", "parent: all enabled");
  CHECK_STR (get (leaf, "memory.max"), "67108864", "memory.max");
  CHECK_STR (get (leaf, "memory.low"), "33554432", "memory.low");
  CHECK_STR (get (leaf, "memory.swap.max"), "33554432",
             "memory.swap.max = swap - limit");
  CHECK_STR (get (leaf, "cpu.weight"), "39", "cpu.weight from shares");
  CHECK_STR (get (leaf, "cpu.max"), "50000 100000", "cpu.max keeps period");
  CHECK_STR (get (leaf, "pids.max"), "50", "pids.max");
  CHECK_STR (get (leaf, "cpuset.cpus"), "0", "cpuset.cpus");
  CHECK_STR (get (leaf, "io.weight"), "default 4950", "io.weight");
  CHECK_STR (get (leaf, "memory.high"), "1000", "unified key written");
  CHECK_STR (get (leaf, "cgroup.procs"), "4242", "pid moved in");
  is_str (rt_cgroup_path (cg), "/pod/c1", "recorded path");

  /* update: only the period changes, quota kept */
  struct rt_resources u = { 0 };
  u.cpu.period = 200000;
  u.cpu.period_present = 1;
  u.pids.limit = -1;
  u.pids.limit_present = 1;
  ok (rt_cgroup_update (cg, &u, &e) == 0, "fake v2: update");
  cm_err_free (&e);
  CHECK_STR (get (leaf, "cpu.max"), "50000 200000", "update keeps quota");
  CHECK_STR (get (leaf, "pids.max"), "max", "pids -1 -> max");

  fz = fake_freezer (leaf);
  ok (rt_cgroup_freeze (cg, true, &e) == 0, "fake v2: freeze waits for "
      "cgroup.events via inotify %s", e ? e->msg : "");
  cm_err_free (&e);
  waitpid (fz, NULL, 0);
  CHECK_STR (get (leaf, "cgroup.freeze"), "1", "cgroup.freeze written");
  ok (rt_cgroup_is_frozen (cg, &e) == 1, "is_frozen from cgroup.events");

  put (leaf, "memory.current", "1000\n");
  put (leaf, "memory.events", "low 0\nhigh 0\nmax 0\noom 1\noom_kill 2\n");
  put (leaf, "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n"
                         "nr_periods 9\nnr_throttled 7\nthrottled_usec 9\n");
  put (leaf, "pids.current", "3\n");
  ok (rt_cgroup_stats (cg, &st, &e) == 0 && st.memory_usage == 1000
          && st.oom_kill_count == 2 && st.cpu_usage_ns == 5000
          && st.cpu_user_ns == 3000 && st.cpu_throttled_periods == 7
          && st.cpu_throttled_ns == 9000 && st.pids_current == 3
          && st.pids_limit == UINT64_MAX && st.memory_limit == 67108864,
      "fake v2: stats parsed");

  put (leaf, "cgroup.procs", "123\n456\n");
  char *sub = mkd (leaf, "/inner");
  put (sub, "cgroup.procs", "789\n");
  ok (rt_cgroup_pids (cg, &pids, &n, &e) == 0 && n == 3 && pids[2] == 789,
      "pids include sub-cgroups");
  free (pids);
  ok (rt_cgroup_kill (cg, SIGKILL, &e) == 0, "kill SIGKILL");
  CHECK_STR (get (leaf, "cgroup.kill"), "1", "SIGKILL uses cgroup.kill");
  rt_cgroup_free (cg);
  cg = NULL;

  ok (cg_open_on (&h, "/pod/c1", &cg, &e) == 0 && cg->v2_on, "open");
  rt_cgroup_free (cg);
  cg = NULL;
  ok (cg_open_on (&h, "/pod/nope", &cg, &e) < 0 && e->errno_ == ENOENT,
      "open of a missing cgroup fails");
  cm_err_free (&e);

  /* errors */
  put (root, "cgroup.controllers", "cpu pids\n");
  ok (cg_create_on (&h, "/new1", &r, 0, &cg, &e) < 0
          && err_has (e, "cgroup controller \"cpuset\" is not available (v2")
          && !cg_exists (root, "new1"),
      "missing controller named, nothing created");
  cm_err_free (&e);
  r.cpu.cpus = NULL;
  ok (cg_create_on (&h, "/new1", &r, 0, &cg, &e) < 0
          && err_has (e, "\"memory\" is not available"),
      "missing memory controller named");
  cm_err_free (&e);
  put (root, "cgroup.controllers", "cpuset cpu io memory pids\n");
  struct rt_resources s = { 0 };
  s.memory.swap = 1 << 20;
  s.memory.swap_present = 1;
  ok (cg_create_on (&h, "/new2", &s, 0, &cg, &e) < 0
          && err_has (e, "needs memory.limit") && !cg_exists (root, "new2"),
      "swap without limit rejected, directory removed");
  cm_err_free (&e);
  struct rt_kv badkv = { .key = (char *) "../x", .value = (char *) "1" };
  struct rt_resources b = { 0 };
  b.unified = &badkv;
  b.unified_len = 1;
  ok (cg_create_on (&h, "/new3", &b, 0, &cg, &e) < 0
          && err_has (e, "not a cgroup file name"),
      "unified key with a slash rejected");
  cm_err_free (&e);
  free (sub);
  free (leaf);
  free (pod);
  free (root);
}

static void
test_fake_v1 (const char *tmp)
{
  static const char *const names[] = { "memory", "cpu,cpuacct", "cpuset",
                                       "pids", "freezer", "systemd" };
  static const char *const ctrls[] = { ",memory,", ",cpu,cpuacct,",
                                       ",cpuset,", ",pids,", ",freezer,",
                                       ",name=systemd," };
  struct cg_v1h v1[6];
  struct cg_host h = { .layout = CG_V1, .v1 = v1, .v1_len = 6 };
  char *dirs[6], *leaf[6];
  struct rt_resources r = { 0 };
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  struct rt_cgroup_stats st;

  for (int i = 0; i < 6; i++)
    {
      char *rel = xasprintf ("/v1/%s", names[i]);
      dirs[i] = mkd (tmp, rel);
      leaf[i] = mkd (dirs[i], "/c1");
      put (leaf[i], "cgroup.procs", "");
      put (dirs[i], "cgroup.procs", "");
      v1[i].dir = dirs[i];
      v1[i].ctrls = (char *) ctrls[i];
      free (rel);
    }
  put (leaf[0], "memory.limit_in_bytes", "9223372036854771712\n");
  put (leaf[0], "memory.memsw.limit_in_bytes", "");
  put (leaf[0], "memory.soft_limit_in_bytes", "");
  put (leaf[1], "cpu.shares", "");
  put (leaf[1], "cpu.cfs_quota_us", "");
  put (leaf[1], "cpu.cfs_period_us", "");
  put (dirs[2], "cpuset.cpus", "0-1\n");
  put (dirs[2], "cpuset.mems", "0\n");
  put (leaf[2], "cpuset.cpus", "\n");
  put (leaf[2], "cpuset.mems", "");
  put (leaf[3], "pids.max", "");
  put (leaf[4], "freezer.state", "THAWED\n");

  r.memory.limit = 64 << 20;
  r.memory.swap = 96 << 20;
  r.memory.reservation = 1 << 20;
  r.memory.limit_present = r.memory.swap_present = 1;
  r.memory.reservation_present = 1;
  r.cpu.shares = 512;
  r.cpu.quota = 50000;
  r.cpu.period = 100000;
  r.cpu.shares_present = r.cpu.quota_present = r.cpu.period_present = 1;
  r.pids.limit = -1;     /* oci/ maps a pre-1.3 config's 0 to -1 */
  r.pids.limit_present = 1;

  ok (cg_create_on (&h, "/c1", &r, 77, &cg, &e) == 0, "fake v1: create %s",
      e ? e->msg : "");
  cm_err_free (&e);
  CHECK_STR (get (leaf[0], "memory.limit_in_bytes"), "67108864",
             "memory.limit_in_bytes");
  CHECK_STR (get (leaf[0], "memory.memsw.limit_in_bytes"), "100663296",
             "memsw = OCI swap (memory+swap)");
  CHECK_STR (get (leaf[0], "memory.soft_limit_in_bytes"), "1048576",
             "soft limit");
  CHECK_STR (get (leaf[1], "cpu.shares"), "512", "cpu.shares");
  CHECK_STR (get (leaf[1], "cpu.cfs_quota_us"), "50000", "cfs quota");
  CHECK_STR (get (leaf[1], "cpu.cfs_period_us"), "100000", "cfs period");
  CHECK_STR (get (leaf[2], "cpuset.cpus"), "0-1", "cpuset.cpus inherited");
  CHECK_STR (get (leaf[2], "cpuset.mems"), "0", "cpuset.mems inherited");
  CHECK_STR (get (leaf[3], "pids.max"), "max", "pids -1 -> max");
  bool all = true;
  for (int i = 0; i < 6; i++)
    {
      char *p = get (leaf[i], "cgroup.procs");
      all &= p && strcmp (p, "77") == 0;
      free (p);
    }
  ok (all, "pid joined every hierarchy (name=systemd too)");

  ok (rt_cgroup_freeze (cg, true, &e) == 0 && rt_cgroup_is_frozen (cg, &e) == 1,
      "fake v1: freeze reads back FROZEN");
  ok (rt_cgroup_freeze (cg, false, &e) == 0
          && rt_cgroup_is_frozen (cg, &e) == 0,
      "fake v1: thaw");
  cm_err_free (&e);

  put (leaf[0], "memory.usage_in_bytes", "4096\n");
  put (leaf[0], "memory.memsw.usage_in_bytes", "6144\n");
  put (leaf[0], "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n"
                                      "oom_kill 4\n");
  put (leaf[1], "cpuacct.usage", "123456\n");
  put (leaf[1], "cpuacct.stat", "user 10\nsystem 5\n");
  put (leaf[1], "cpu.stat", "nr_periods 1\nnr_throttled 2\n"
                            "throttled_time 3\n");
  long hz = sysconf (_SC_CLK_TCK);
  ok (rt_cgroup_stats (cg, &st, &e) == 0 && st.memory_usage == 4096
          && st.memory_swap_usage == 2048 && st.oom_kill_count == 4
          && st.cpu_usage_ns == 123456
          && st.cpu_user_ns == 10 * (1000000000ULL / (uint64_t) hz)
          && st.cpu_throttled_periods == 2 && st.cpu_throttled_ns == 3
          && st.memory_limit == 67108864,
      "fake v1: stats parsed");
  cm_err_free (&e);
  rt_cgroup_free (cg);
  cg = NULL;

  /* lowering memsw below the limit is refused up front */
  struct rt_resources bad = { 0 };
  bad.memory.limit = 64 << 20;
  bad.memory.swap = 32 << 20;
  bad.memory.limit_present = bad.memory.swap_present = 1;
  ok (cg_create_on (&h, "/c1", &bad, 0, &cg, &e) < 0
          && err_has (e, "must be >= memory.limit"),
      "v1 swap < limit rejected");
  cm_err_free (&e);

  /* a failure after mkdir undoes it: c2 has no cgroup.procs anywhere */
  ok (cg_create_on (&h, "/c2", NULL, 77, &cg, &e) < 0
          && err_has (e, "cgroup.procs") && !cg_exists (dirs[0], "c2")
          && !cg_exists (dirs[5], "c2"),
      "failed create removes the directories it made");
  cm_err_free (&e);

  h.v1_len = 3;                 /* no pids, freezer, systemd */
  ok (cg_create_on (&h, "/c3", &r, 0, &cg, &e) < 0
          && err_has (e, "cgroup controller \"pids\" is not available (no v1"),
      "v1 missing controller named");
  cm_err_free (&e);
  struct rt_kv kv = { .key = (char *) "memory.high", .value = (char *) "1" };
  struct rt_resources un = { 0 };
  un.unified = &kv;
  un.unified_len = 1;
  ok (cg_create_on (&h, "/c3", &un, 0, &cg, &e) < 0
          && err_has (e, "needs a cgroup v2 host"),
      "unified rejected on v1");
  cm_err_free (&e);
  for (int i = 0; i < 6; i++)
    {
      free (dirs[i]);
      free (leaf[i]);
    }
}

/* ---- this host --------------------------------------------------------- */

static char
proc_state (pid_t pid)
{
  char *p = xasprintf ("/proc/%d/stat", (int) pid), *t = NULL, st = '?';
  struct cm_err *e = NULL;
  if (cm_read_file_at (AT_FDCWD, p, 4096, &t, NULL, &e) == 0)
    {
      char *c = strrchr (t, ')');
      if (c && c[1] == ' ')
        st = c[2];
    }
  cm_err_free (&e);
  free (t);
  free (p);
  return st;
}

static bool
procs_has (const char *dir, pid_t pid)
{
  char *t = NULL, needle[32];
  struct cm_err *e = NULL;
  bool r = false;
  snprintf (needle, sizeof needle, "\n%d\n", (int) pid);
  if (dir && cg_read (dir, "cgroup.procs", &t, &e) == 0)
    {
      char *all = xasprintf ("\n%s", t);
      r = strstr (all, needle) != NULL;
      free (all);
    }
  cm_err_free (&e);
  free (t);
  return r;
}

/* A child that blocks reading |fd|; with |go| >= 0 it first waits for a
 * byte there (its cgroup is set up by then, as the runtime does), then
 * forks a grandchild that blocks as well. */
static pid_t
blocker (int fds[2], int go)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      char c;
      close (fds[1]);
      if (go >= 0 && read (go, &c, 1) != 1)
        _exit (3);
      if (go >= 0 && fork () == 0)
        {
          if (read (fds[0], &c, 1) < 0)
            _exit (2);
          _exit (0);
        }
      if (read (fds[0], &c, 1) < 0)
        _exit (2);
      _exit (0);
    }
  return pid;
}

static void
check_files (struct rt_cgroup *cg, pid_t child)
{
  if (cg->host.layout == CG_V2)
    {
      char *d = cg_v2_dir (cg);
      CHECK_STR (get (d, "memory.max"), "67108864", "host: memory.max");
      CHECK_STR (get (d, "pids.max"), "50", "host: pids.max");
      CHECK_STR (get (d, "cpu.max"), "50000 100000", "host: cpu.max");
      ok (procs_has (d, child), "host: child in cgroup.procs");
      free (d);
      return;
    }
  char *mem = cg_v1_dir (cg, "memory"), *pids = cg_v1_dir (cg, "pids");
  char *cpu = cg_v1_dir (cg, "cpu"), *cs = cg_v1_dir (cg, "cpuset");
  CHECK_STR (get (mem, "memory.limit_in_bytes"), "67108864",
             "host: memory.limit_in_bytes");
  CHECK_STR (get (pids, "pids.max"), "50", "host: pids.max");
  CHECK_STR (get (cpu, "cpu.cfs_quota_us"), "50000", "host: cfs_quota_us");
  CHECK_STR (get (cpu, "cpu.cfs_period_us"), "100000", "host: period");
  char *cpus = get (cs, "cpuset.cpus");
  ok (cpus && *cpus, "host: cpuset.cpus inherited (%s)", cpus ? cpus : "");
  free (cpus);
  bool all = true;
  for (size_t i = 0; i < cg->host.v1_len; i++)
    {
      char *d = xasprintf ("%s%s", cg->host.v1[i].dir, cg->path);
      if (!procs_has (d, child))
        {
          all = false;
          printf ("#   not in %s\n", d);
        }
      free (d);
    }
  ok (all, "host: child in cgroup.procs of every v1 hierarchy");
  char *dv = cg_v1_dir (cg, "devices");
  {
    /* whitelist mode: the config's rule, plus the runtime-spec default
     * devices every container keeps (runc's AllowedDevices) */
    char *list = NULL;
    struct cm_err *e = NULL;
    if (cg_read (dv, "devices.list", &list, &e) != 0)
      cm_err_free (&e);
    ok (list && strstr (list, "a *:* rwm") == NULL
            && (strstr (list, "c 1:3 rw\n") || strstr (list, "c 1:3 rwm\n"))
            && strstr (list, "c 5:2 rwm\n") && strstr (list, "c 136:* rwm\n"),
        "host: devices deny-all then allow /dev/null (+ default devices)");
    if (list && strstr (list, "a *:* rwm"))
      printf ("# devices.list: %s\n", list);
    free (list);
  }
  free (dv);
  if (cg->host.layout == CG_HYBRID)
    {
      char *u = cg_v2_dir (cg);
      ok (procs_has (u, child), "host: child in the unified tree");
      free (u);
    }
  free (mem);
  free (pids);
  free (cpu);
  free (cs);
}

static bool
gone_everywhere (const struct cg_host *h, const char *path)
{
  bool gone = true;
  for (size_t i = 0; i < h->v1_len; i++)
    {
      char *d = xasprintf ("%s%s", h->v1[i].dir, path);
      gone &= !cg_exists (d, NULL);
      free (d);
    }
  if (h->v2_mount)
    {
      char *d = xasprintf ("%s%s", h->v2_mount, path);
      gone &= !cg_exists (d, NULL);
      free (d);
    }
  return gone;
}

static void
force_cleanup_one (const struct cg_host *h, const char *path)
{
  for (size_t i = 0; i < h->v1_len; i++)
    {
      char *d = xasprintf ("%s%s", h->v1[i].dir, path);
      rmdir (d);
      free (d);
    }
  if (h->v2_mount)
    {
      char *d = xasprintf ("%s%s", h->v2_mount, path);
      rmdir (d);
      free (d);
    }
}

static void
force_cleanup (const struct cg_host *h, const char *path)
{
  char *parent = xstrdup (path);
  force_cleanup_one (h, path);
  *strrchr (parent, '/') = '\0';
  if (*parent)
    force_cleanup_one (h, parent);
  free (parent);
}

/* SIGKILL of a paused container, and the v1 path (freeze, signal, thaw)
 * that hosts without cgroup.kill take. */
static void
host_kill_paths (const char *path)
{
  struct rt_cgroup_opts o = { .cgroups_path = path, .id = "t" };
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  int fds[2], status = 0;
  pid_t child;

  for (int pass = 0; pass < 2; pass++)
    {
      if (pipe (fds) < 0)
        return;
      child = blocker (fds, -1);
      ok (rt_cgroup_create (&o, child, &cg, &e) == 0, "host: create %s",
          e ? e->msg : "");
      cm_err_free (&e);
      if (cg == NULL)
        {
          kill (child, SIGKILL);
          waitpid (child, NULL, 0);
          return;
        }
      bool v2 = cg->v2_on;
      if (pass == 0)
        ok (rt_cgroup_freeze (cg, true, &e) == 0, "host: paused");
      else
        cg->v2_on = false;      /* as if there were no cgroup.kill */
      cm_err_free (&e);
      ok (rt_cgroup_kill (cg, SIGKILL, &e) == 0, "host: SIGKILL %s",
          pass == 0 ? "a paused container" : "without cgroup.kill");
      cm_err_free (&e);
      cg->v2_on = v2;
      if (pass == 0)
        {
          bool thawed = rt_cgroup_is_frozen (cg, &e) == 0;
          ok (thawed, "host: thawed after kill");
          if (!thawed)          /* else the dying child would hang us */
            rt_cgroup_freeze (cg, false, &e);
        }
      cm_err_free (&e);
      waitpid (child, &status, 0);
      ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
          "host: it died of SIGKILL");
      ok (rt_cgroup_destroy (cg, &e) == 0, "host: destroy");
      cm_err_free (&e);
      rt_cgroup_free (cg);
      cg = NULL;
      close (fds[0]);
      close (fds[1]);
    }
}

static void
host_freeze_checks (struct rt_cgroup *cg, pid_t child)
{
  struct cm_err *e = NULL;
  ok (rt_cgroup_freeze (cg, true, &e) == 0, "host: freeze %s",
      e ? e->msg : "");
  cm_err_free (&e);
  ok (rt_cgroup_is_frozen (cg, &e) == 1, "host: is_frozen 1");
  char st = proc_state (child);
  printf ("# frozen child state: %c\n", st);
  ok (st == 'D' || st == 'S' || st == 'T', "host: frozen child not running");
  ok (rt_cgroup_freeze (cg, false, &e) == 0
          && rt_cgroup_is_frozen (cg, &e) == 0,
      "host: thaw");
  cm_err_free (&e);
  if (cg->host.layout == CG_HYBRID && cg->v2_on)
    {
      /* the unified tree's own freezer, with its cgroup.events wait */
      ok (cg_v2_freeze (cg, true, &e) == 0 && cg_v2_is_frozen (cg, &e) == 1,
          "host: unified cgroup.freeze + cgroup.events %s", e ? e->msg : "");
      cm_err_free (&e);
      ok (cg_v2_freeze (cg, false, &e) == 0 && cg_v2_is_frozen (cg, &e) == 0,
          "host: unified thaw");
      cm_err_free (&e);
    }
}

static double
ms_since (const struct timespec *a)
{
  struct timespec b;
  clock_gettime (CLOCK_MONOTONIC, &b);
  return (double) (b.tv_sec - a->tv_sec) * 1e3
         + (double) (b.tv_nsec - a->tv_nsec) / 1e6;
}

/* create (no pid) -> clone3(CLONE_INTO_CGROUP) -> attach the v1 rest */
static void
host_clone_into (const char *path)
{
  struct rt_cgroup_opts o = { .cgroups_path = path, .id = "t" };
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  struct timespec t0;
  int fds[2], cfd, status = 0;
  pid_t pid;

  if (rt_cgroup_create (&o, 0, &cg, &e) < 0 || pipe (fds) < 0)
    {
      ok (0, "host: create without pid %s", e ? e->msg : "");
      cm_err_free (&e);
      return;
    }
  cfd = rt_cgroup_clone_fd (cg, &e);
  if (cfd < 0)
    {
      ok (e && e->errno_ == ENOENT && cg->host.layout == CG_V1,
          "host: no clone fd only on pure v1");
      cm_err_free (&e);
      rt_cgroup_destroy (cg, &e);
      rt_cgroup_free (cg);
      return;
    }
  struct clone_args ca = { .flags = CLONE_INTO_CGROUP,
                           .exit_signal = SIGCHLD,
                           .cgroup = (uint64_t) cfd };
  clock_gettime (CLOCK_MONOTONIC, &t0);
  pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
  if (pid == 0)
    {
      char c;
      close (fds[1]);
      if (read (fds[0], &c, 1) < 0)
        _exit (2);
      _exit (0);
    }
  printf ("# clone3 into the cgroup: %.3f ms\n", ms_since (&t0));
  close (cfd);
  ok (pid > 0, "host: clone3(CLONE_INTO_CGROUP)");
  if (pid < 0)
    {
      rt_cgroup_destroy (cg, &e);
      rt_cgroup_free (cg);
      cm_err_free (&e);
      return;
    }
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ok (rt_cgroup_attach (cg, pid, true, &e) == 0, "host: attach the rest %s",
      e ? e->msg : "");
  printf ("# attach to the v1 hierarchies: %.3f ms\n", ms_since (&t0));
  cm_err_free (&e);
  char *v2 = cg_v2_dir (cg), *pids = cg_v1_dir (cg, "pids");
  ok (procs_has (v2, pid), "host: born in the v2 cgroup");
  ok (cg->host.layout == CG_V2 || procs_has (pids, pid),
      "host: attached to v1 pids");
  free (v2);
  free (pids);
  rt_cgroup_kill (cg, SIGKILL, &e);
  cm_err_free (&e);
  waitpid (pid, &status, 0);
  ok (rt_cgroup_destroy (cg, &e) == 0, "host: destroy");
  cm_err_free (&e);
  rt_cgroup_free (cg);
  close (fds[0]);
  close (fds[1]);
}

/* rootless: as nobody, a tracking-only cgroup is skipped, a limit fails */
static void
host_rootless (const char *path)
{
  pid_t pid = fork ();
  int status = 0;
  if (pid == 0)
    {
      struct rt_resources r = { 0 };
      struct rt_cgroup_opts o = { .cgroups_path = path, .id = "t" };
      struct rt_cgroup *cg = (struct rt_cgroup *) &o;
      struct cm_err *e = NULL;
      int bits = 0;
      if (setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0)
        _exit (99);
      if (rt_cgroup_create (&o, 0, &cg, &e) == 0 && cg == NULL)
        bits |= 1;
      cm_err_free (&e);
      r.pids.limit = 5;
      r.pids.limit_present = 1;
      o.resources = &r;
      if (rt_cgroup_create (&o, 0, &cg, &e) < 0 && e->errno_ == EACCES)
        bits |= 2;
      cm_err_free (&e);
      _exit (bits);
    }
  waitpid (pid, &status, 0);
  ok (WIFEXITED (status) && (WEXITSTATUS (status) & 1),
      "host: rootless without limits: no cgroup, no error");
  ok (WIFEXITED (status) && (WEXITSTATUS (status) & 2),
      "host: rootless with a limit: EACCES");
}

static void
test_host (void)
{
  const struct cg_host *h;
  struct cm_err *e = NULL;
  struct rt_cgroup *cg = NULL, *cg2 = NULL;
  struct rt_resources r = { 0 };
  char path[64], path2[64];
  int fds[2];
  pid_t child, *pids = NULL;
  size_t n = 0;
  int status = 0;
  struct rt_cgroup_stats st;

  if (geteuid () != 0 || (h = cg_host_get (&e)) == NULL || h->layout == CG_NONE)
    {
      cm_err_free (&e);
      skip ("host cgroup tests need root and a cgroup mount");
      return;
    }
  snprintf (path, sizeof path, "sandlock-test-%d", (int) getpid ());
  snprintf (path2, sizeof path2, "/sandlock-test-%d/ctr", (int) getpid ());
  r.memory.limit = 64 << 20;
  r.memory.limit_present = 1;
  r.pids.limit = 50;
  r.pids.limit_present = 1;
  r.cpu.quota = 50000;
  r.cpu.period = 100000;
  r.cpu.quota_present = r.cpu.period_present = 1;
  struct rt_device_rule dev[2] = {
    { .allow = false, .major = -1, .minor = -1 },
    { .allow = true, .type = (char *) "c", .major = 1, .minor = 3,
      .access = (char *) "rw" },
  };
  r.devices = dev;
  r.devices_len = 2;
  struct rt_cgroup_opts o = { .cgroups_path = path2, .id = "t",
                              .resources = &r };
  if (pipe (fds) < 0)
    return;
  child = blocker (fds, -1);
  ok (rt_cgroup_create (&o, child, &cg, &e) == 0, "host (%s): create %s",
      rt_cgroup_layout (), e ? e->msg : "");
  cm_err_free (&e);
  if (cg == NULL)
    {
      kill (child, SIGKILL);
      waitpid (child, NULL, 0);
      force_cleanup (h, path2);
      return;
    }
  check_files (cg, child);
  ok (rt_cgroup_pids (cg, &pids, &n, &e) == 0 && n == 1 && pids[0] == child,
      "host: pids lists the child");
  free (pids);
  host_freeze_checks (cg, child);
  ok (rt_cgroup_stats (cg, &st, &e) == 0 && st.memory_limit == 64 << 20
          && st.pids_current == 1 && st.pids_limit == 50,
      "host: stats (usage %llu, cpu %llu ns)",
      (unsigned long long) st.memory_usage,
      (unsigned long long) st.cpu_usage_ns);
  cm_err_free (&e);

  ok (rt_cgroup_open (path2, &cg2, &e) == 0
          && rt_cgroup_pids (cg2, &pids, &n, &e) == 0 && n == 1,
      "host: reopened from the recorded path");
  free (pids);
  ok (rt_cgroup_destroy (cg2, &e) < 0 && err_has (e, "processes remain"),
      "host: destroy with a live process says so");
  cm_err_free (&e);
  ok (rt_cgroup_wait_empty (cg2, 50, &e) < 0 && e->errno_ == ETIMEDOUT,
      "host: wait_empty times out while a process lives");
  cm_err_free (&e);
  rt_cgroup_free (cg2);

  ok (rt_cgroup_kill (cg, SIGKILL, &e) == 0, "host: kill SIGKILL");
  ok (rt_cgroup_wait_empty (cg, 10000, &e) == 0, "host: wait_empty %s",
      e ? e->msg : "");
  cm_err_free (&e);
  /* not reaped yet: a zombie has left its cgroups */
  ok (rt_cgroup_destroy (cg, &e) == 0, "host: destroy %s", e ? e->msg : "");
  waitpid (child, &status, 0);
  ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
      "host: child died of SIGKILL");
  cm_err_free (&e);
  ok (gone_everywhere (h, path2), "host: directories gone");
  rt_cgroup_free (cg);
  cg = NULL;

  /* a forking container and a catchable signal: the loop reaches both */
  int go[2];
  if (pipe (go) < 0)
    return;
  child = blocker (fds, go[0]);
  struct rt_cgroup_opts o2 = { .cgroups_path = path2, .id = "t" };
  ok (rt_cgroup_create (&o2, child, &cg, &e) == 0, "host: create (no "
      "resources)");
  cm_err_free (&e);
  if (write (go[1], "g", 1) != 1)
    ok (0, "write go");
  close (go[0]);
  close (go[1]);
  if (cg)
    {
      pid_t *p2 = NULL;
      size_t n2 = 0;
      for (int i = 0; i < 100000 && n2 < 2; i++)
        {
          free (p2);
          p2 = NULL;
          rt_cgroup_pids (cg, &p2, &n2, &e);
          cm_err_free (&e);
        }
      free (p2);
      ok (n2 == 2, "host: grandchild inherited the cgroup");
      ok (rt_cgroup_kill (cg, SIGTERM, &e) == 0, "host: kill SIGTERM");
      waitpid (child, &status, 0);
      ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGTERM,
          "host: child got SIGTERM");
      /* the grandchild is reparented; it leaves the cgroup once dead */
      bool empty = false;
      for (int i = 0; i < 100000 && !empty; i++)
        {
          p2 = NULL;
          empty = rt_cgroup_pids (cg, &p2, &n2, &e) == 0 && n2 == 0;
          cm_err_free (&e);
          free (p2);
          if (!empty)
            sched_yield ();
        }
      ok (empty, "host: grandchild got the signal too");
      ok (rt_cgroup_destroy (cg, &e) == 0, "host: destroy");
      cm_err_free (&e);
      rt_cgroup_free (cg);
      cg = NULL;
    }
  else
    kill (child, SIGKILL), waitpid (child, NULL, 0);

  /* a kernel-refused value: everything made is removed again */
  struct rt_resources bad = { 0 };
  bad.cpu.cpus = (char *) "4095";
  struct rt_cgroup_opts o3 = { .cgroups_path = path2, .id = "t",
                               .resources = &bad };
  ok (rt_cgroup_create (&o3, 0, &cg, &e) < 0 && err_has (e, "cpuset.cpus")
          && gone_everywhere (h, path2),
      "host: failed create leaves nothing behind");
  cm_err_free (&e);
  if (h->layout != CG_V2)
    {
      struct rt_kv kv = { .key = (char *) "memory.high",
                          .value = (char *) "1" };
      struct rt_resources un = { 0 };
      un.unified = &kv;
      un.unified_len = 1;
      o3.resources = &un;
      ok (rt_cgroup_create (&o3, 0, &cg, &e) < 0
              && err_has (e, "needs a cgroup v2 host"),
          "host: unified rejected on %s", rt_cgroup_layout ());
      cm_err_free (&e);
    }
  close (fds[0]);
  close (fds[1]);
  host_kill_paths (path2);
  host_rootless (path2);
  host_clone_into (path2);
  force_cleanup (h, path2);
}

/* cg_read keeps the error contract: a negative return always carries an
 * error, and an absent file is a success the caller sees as NULL. */
static void
test_read_contract (const char *tmp)
{
  _cleanup_free_ char *dir = xasprintf ("%s/read", tmp);
  _cleanup_free_ char *sub = xasprintf ("%s/a.dir", dir);
  struct cm_err *e = NULL;
  char *t;
  int r;

  mkdir (dir, 0755);
  mkdir (sub, 0755);
  put (dir, "cpu.max", "max 100000\n");
  t = (char *) "unset";
  r = cg_read (dir, "missing", &t, &e);
  ok (r == 0 && t == NULL && e == NULL,
      "read: an absent file is 0 with NULL, no error (got %d)", r);
  cm_err_free (&e);
  t = NULL;
  r = cg_read (dir, "cpu.max", &t, &e);
  is_str (r == 0 ? t : NULL, "max 100000\n", "read: a present file");
  free (t);
  t = NULL;
  r = cg_read (dir, "a.dir", &t, &e);
  ok (r < 0 && e != NULL && e->errno_ == EISDIR && t == NULL,
      "read: a failure sets the error (%s)", e ? e->msg : "none");
  cm_err_free (&e);
  r = cg_read (dir, "a.dir", &t, NULL);
  ok (r < 0 && t == NULL, "read: a failure without an error pointer");
}

int
main (void)
{
  char tmpl[] = "/tmp/test-cgroup.XXXXXX";
  struct cm_err *e = NULL;

  test_logic ();
  test_mountinfo ();
  if (mkdtemp (tmpl))
    {
      test_fake_v2 (tmpl);
      test_fake_v1 (tmpl);
      test_read_contract (tmpl);
      cm_rm_rf_at (AT_FDCWD, tmpl, &e);
      cm_err_free (&e);
    }
  test_host ();
  return tap_done ();
}
