/* runtime/kfeat.c: the parsing halves of the kernel probes on given text,
 * and the probe's own promises (cached, nothing left open, errno kept). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "runtime/kfeat-internal.h"
#include "runtime/runtime.h"
#include "tap.h"

static void
test_filesystems (void)
{
  static const char pf[] = "nodev\tsysfs\nnodev\ttmpfs\n\text4\n"
                           "nodev\toverlayfs2\nnodev\tfuse\n";
  ok (rt_kf_has_filesystem (pf, "ext4"), "filesystems: a block fs");
  ok (rt_kf_has_filesystem (pf, "tmpfs"), "filesystems: a nodev fs");
  ok (!rt_kf_has_filesystem (pf, "overlay"),
      "filesystems: overlay is not overlayfs2 (whole names only)");
  ok (!rt_kf_has_filesystem (pf, "fus"), "filesystems: no prefix match");
  ok (rt_kf_has_filesystem ("nodev\toverlay", "overlay"),
      "filesystems: last line without a newline");
  ok (!rt_kf_has_filesystem ("", "overlay"), "filesystems: empty text");
  ok (!rt_kf_has_filesystem ("overlay\n", "overlay"),
      "filesystems: a name must follow the tab");
}

static void
test_userns (void)
{
  ok (rt_kf_userns_allowed ("63707\n"), "userns: a positive limit");
  ok (!rt_kf_userns_allowed ("0\n"), "userns: 0 means none");
  ok (!rt_kf_userns_allowed ("00\n"), "userns: 00 is still 0");
  ok (rt_kf_userns_allowed ("10"), "userns: 10, no newline");
  ok (!rt_kf_userns_allowed (""), "userns: empty");
  ok (!rt_kf_userns_allowed ("-1\n"), "userns: not a count");
  ok (!rt_kf_userns_allowed (NULL), "userns: unreadable");
}

static void
test_v1_controllers (void)
{
  struct cg_host h = { 0 };
  struct cm_err *e = NULL;
  char *s;
  static const char mi[] =
      "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
      "31 25 0:27 / /sys/fs/cgroup/systemd rw - cgroup cgroup "
      "rw,xattr,name=systemd\n"
      "33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup "
      "rw,cpu,cpuacct\n"
      "34 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";

  ok (cg_host_parse (mi, &h, &e) == 0, "v1 controllers: hybrid parsed");
  s = rt_kf_v1_controllers (&h);
  is_str (s, "cpu cpuacct memory", "v1 controllers: named trees left out");
  free (s);
  cg_host_clear (&h);
  ok (cg_host_parse ("30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                     &h, &e) == 0, "v1 controllers: pure v2 parsed");
  s = rt_kf_v1_controllers (&h);
  is_str (s, "", "v1 controllers: none on pure v2");
  free (s);
  cg_host_clear (&h);
  cm_err_free (&e);
}

static int
count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  int n = 0;
  if (d == NULL)
    return -1;
  while (readdir (d))
    n++;
  closedir (d);
  return n;
}

static void
test_probe (void)
{
  int before = count_fds ();
  const struct rt_kfeat *k;

  errno = 12345;
  k = rt_kfeat (RT_KF_SYSCALLS);
  ok (errno == 12345, "probe: errno kept");
  ok (k->probed == RT_KF_SYSCALLS, "probe: only the group asked for");
  k = rt_kfeat (RT_KF_ALL);
  ok (k->probed == RT_KF_ALL, "probe: every group after RT_KF_ALL");
  ok (rt_kfeat (0) == k, "probe: one cached struct");
  ok (count_fds () == before, "probe: no fd left open (%d before)", before);
  ok (k->cgroup_layout != NULL && k->cgroup_v1_controllers != NULL
          && k->cgroup_v2_controllers != NULL,
      "probe: cgroup strings always set");
  ok (k->landlock_abi >= 0, "probe: Landlock ABI %d", k->landlock_abi);
  ok (k->idmapped_mounts == 0 || k->idmapped_mounts == 1
          || k->idmapped_mounts == RT_KF_UNKNOWN,
      "probe: idmapped mounts is a tri-state");
  ok (!k->clone_into_cgroup || k->clone3, "probe: CLONE_INTO_CGROUP needs clone3");
  ok (!k->overlay_userxattr || k->overlay_userxattr == RT_KF_UNKNOWN
          || k->overlay, "probe: userxattr only with overlay");
}

int
main (void)
{
  test_filesystems ();
  test_userns ();
  test_v1_controllers ();
  test_probe ();
  return tap_done ();
}
