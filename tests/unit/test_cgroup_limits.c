/* runtime/cgroup-limits.c through oci_resources_parse: blockIO device
 * lists, hugepageLimits, network and rdma reach the v1 and v2 files, or fail
 * naming the field.  Fake trees in a temp dir: this hybrid machine has no
 * v2 io/hugetlb/rdma controllers to write to. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "oci/spec.h"
#include "runtime/cgroup-internal.h"
#include "cgroup_fake.h"
#include "tap.h"

#define CHECK_STR(got, want, ...)                                       \
  do {                                                                  \
    char *g_ = (got);                                                   \
    is_str (g_, (want), __VA_ARGS__);                                   \
    free (g_);                                                          \
  } while (0)

static char *
mkd (const char *base, const char *rel)
{
  char *p = xasprintf ("%s%s", base, rel);
  struct cm_err *e = NULL;
  cm_mkdir_p (p, 0755, &e);
  cm_err_free (&e);
  return p;
}

static struct rt_resources *
parse (const char *json)
{
  struct rt_resources *r = NULL;
  struct cm_err *e = NULL;
  if (oci_resources_parse (json, strlen (json), &r, &e) < 0)
    {
      printf ("# parse: %s\n", e->msg);
      cm_err_free (&e);
      return NULL;
    }
  return r;
}

/* create on |h| must fail with a message containing |want|. */
static void
fails (const struct cg_host *h, const char *path, const char *json,
       const char *want, const char *name)
{
  struct rt_resources *r = parse (json);
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  int ret = r ? cg_create_on (h, path, r, 0, &cg, &e) : 0;
  ok (r && ret < 0 && e && strstr (e->msg, want), "%s", name);
  if (e && !strstr (e->msg, want))
    printf ("#   error: %s (want `%s`)\n", e->msg, want);
  if (ret == 0)
    rt_cgroup_free (cg);
  cm_err_free (&e);
  rt_resources_free (r);
}

static const char limits_json[] =
  "{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":500}],"
  "\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":1048576}],"
  "\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,\"rate\":0}]},"
  "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
  "\"rdma\":{\"mlx5_0\":{\"hcaHandles\":3,\"hcaObjects\":100}}}";

static void
test_parse (void)
{
  struct rt_resources *r = parse (limits_json);
  struct cm_err *e = NULL;
  ok (r != NULL, "parse: blockIO devices, hugepageLimits, rdma");
  if (r)
    {
      ok (r->blkio.weight_device_len == 1
              && r->blkio.weight_device[0].weight == 500
              && r->blkio.throttle_len[RT_THROTTLE_READ_BPS] == 1
              && r->blkio.throttle[RT_THROTTLE_READ_BPS][0].rate == 1048576
              && r->blkio.throttle[RT_THROTTLE_WRITE_IOPS][0].minor == 16,
          "parse: blockIO lists");
      ok (r->hugepages_len == 1 && strcmp (r->hugepages[0].page_size, "2MB")
                                       == 0
              && r->hugepages[0].limit == 4194304,
          "parse: hugepageLimits");
      ok (r->rdma_len == 1 && strcmp (r->rdma[0].device, "mlx5_0") == 0
              && r->rdma[0].hca_handles == 3 && r->rdma[0].hca_objects == 100,
          "parse: rdma map");
    }
  rt_resources_free (r);
  r = NULL;
  static const char no_rate[] = "{\"blockIO\":{\"throttleReadBpsDevice\":"
                                "[{\"major\":8,\"minor\":0}]}}";
  ok (oci_resources_parse (no_rate, strlen (no_rate), &r, &e) < 0
          && strstr (e->msg, "resources.blockIO.throttleReadBpsDevice[0]"
                             ".rate: required"),
      "parse: a throttle entry without rate names its path");
  cm_err_free (&e);
  ok (oci_resources_parse ("{\"network\":{\"classID\":-1}}",
                           strlen ("{\"network\":{\"classID\":-1}}"), &r, &e) < 0
          && strstr (e->msg, "resources.network.classID"),
      "parse: classID out of range names its path");
  cm_err_free (&e);
}

static void
test_v2 (const char *tmp)
{
  char *root = mkd (tmp, "/v2"), *leaf = mkd (root, "/c1");
  struct cg_host h = { .layout = CG_V2, .v2_mount = root };
  struct rt_resources *r = parse (limits_json);
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;
  const char *files[] = { "io.max", "io.weight", "hugetlb.2MB.max",
                          "rdma.max", "cgroup.procs",
                          "cgroup.subtree_control" };

  put (root, "cgroup.controllers", "io memory pids hugetlb rdma\n");
  put (root, "cgroup.subtree_control", "");
  for (size_t i = 0; i < ARRAY_SIZE (files); i++)
    put (leaf, files[i], "");
  ok (r && cg_create_on (&h, "/c1", r, 0, &cg, &e) == 0, "v2: create %s",
      e ? e->msg : "");
  cm_err_free (&e);
  CHECK_STR (get (root, "cgroup.subtree_control"),
             "+io +memory +pids +hugetlb +rdma", "v2: controllers enabled");
  /* one write per entry; the fake file keeps the last */
  CHECK_STR (get (leaf, "io.max"), "8:16 wiops=max",
             "v2: io.max (rate 0 = no limit)");
  CHECK_STR (get (leaf, "io.weight"), "8:0 4950", "v2: per-device io.weight");
  CHECK_STR (get (leaf, "hugetlb.2MB.max"), "4194304", "v2: hugetlb.2MB.max");
  CHECK_STR (get (leaf, "rdma.max"), "mlx5_0 hca_handle=3 hca_object=100",
             "v2: rdma.max");
  rt_cgroup_free (cg);
  rt_resources_free (r);

  put (root, "cgroup.controllers", "io memory pids\n");
  fails (&h, "/c2", "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}",
         "cgroup controller \"hugetlb\" is not available",
         "v2: hugepageLimits without hugetlb fails naming it");
  put (root, "cgroup.controllers", "io memory pids hugetlb\n");
  fails (&h, "/c1", "{\"hugepageLimits\":[{\"pageSize\":\"3MB\",\"limit\":1}]}",
         "hugepageLimits[0].pageSize: \"3MB\" is not a huge page size",
         "v2: an unknown page size fails naming it");
  fails (&h, "/c2", "{\"network\":{\"classID\":1048577}}",
         "linux.resources.network: cgroup v2 has no net_cls",
         "v2: network fails (no such controller on v2)");
  fails (&h, "/c2", "{\"blockIO\":{\"leafWeight\":300}}",
         "blockIO.leafWeight: cgroup v2 has no leaf weight",
         "v2: leafWeight fails");
  free (leaf);
  free (root);
}

static void
test_v1 (const char *tmp)
{
  static const char *const names[] = { "blkio", "hugetlb", "net_cls,net_prio",
                                       "rdma" };
  static const char *const ctrls[] = { ",blkio,", ",hugetlb,",
                                       ",net_cls,net_prio,", ",rdma," };
  struct cg_v1h v1[4];
  struct cg_host h = { .layout = CG_V1, .v1 = v1, .v1_len = 4 };
  char *dirs[4], *leaf[4];
  struct rt_resources *r;
  struct rt_cgroup *cg = NULL;
  struct cm_err *e = NULL;

  for (int i = 0; i < 4; i++)
    {
      char *rel = xasprintf ("/v1/%s", names[i]);
      dirs[i] = mkd (tmp, rel);
      leaf[i] = mkd (dirs[i], "/c1");
      put (leaf[i], "cgroup.procs", "");
      v1[i].dir = dirs[i];
      v1[i].ctrls = (char *) ctrls[i];
      free (rel);
    }
  put (leaf[0], "blkio.throttle.read_bps_device", "");
  put (leaf[0], "blkio.throttle.write_iops_device", "");
  put (leaf[0], "blkio.bfq.weight_device", "");
  put (leaf[1], "hugetlb.2MB.limit_in_bytes", "");
  put (leaf[2], "net_cls.classid", "");
  put (leaf[2], "net_prio.ifpriomap", "");
  put (leaf[3], "rdma.max", "");
  r = parse ("{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,"
             "\"weight\":500}],\"throttleReadBpsDevice\":[{\"major\":8,"
             "\"minor\":0,\"rate\":1048576}],\"throttleWriteIOPSDevice\":"
             "[{\"major\":8,\"minor\":16,\"rate\":100}]},"
             "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
             "\"network\":{\"classID\":1048577,\"priorities\":"
             "[{\"name\":\"eth0\",\"priority\":5}]},"
             "\"rdma\":{\"mlx5_0\":{\"hcaHandles\":3}}}");
  ok (r && cg_create_on (&h, "/c1", r, 0, &cg, &e) == 0, "v1: create %s",
      e ? e->msg : "");
  cm_err_free (&e);
  CHECK_STR (get (leaf[0], "blkio.throttle.read_bps_device"), "8:0 1048576",
             "v1: blkio.throttle.read_bps_device");
  CHECK_STR (get (leaf[0], "blkio.throttle.write_iops_device"), "8:16 100",
             "v1: blkio.throttle.write_iops_device");
  CHECK_STR (get (leaf[0], "blkio.bfq.weight_device"), "8:0 500",
             "v1: blkio.bfq.weight_device (no CFQ file)");
  CHECK_STR (get (leaf[1], "hugetlb.2MB.limit_in_bytes"), "4194304",
             "v1: hugetlb.2MB.limit_in_bytes");
  CHECK_STR (get (leaf[2], "net_cls.classid"), "1048577", "v1: classid");
  CHECK_STR (get (leaf[2], "net_prio.ifpriomap"), "eth0 5",
             "v1: net_prio.ifpriomap");
  CHECK_STR (get (leaf[3], "rdma.max"), "mlx5_0 hca_handle=3", "v1: rdma.max");

  /* update -r goes through the same writers */
  rt_resources_free (r);
  r = parse ("{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,"
             "\"minor\":0,\"rate\":2048}]}}");
  ok (r && rt_cgroup_update (cg, r, &e) == 0, "v1: update %s",
      e ? e->msg : "");
  cm_err_free (&e);
  CHECK_STR (get (leaf[0], "blkio.throttle.read_bps_device"), "8:0 2048",
             "v1: update rewrites the throttle");
  rt_resources_free (r);
  fails (&h, "/c1", "{\"blockIO\":{\"leafWeight\":300}}",
         "blockIO.leafWeight: no blkio.leaf_weight",
         "v1: leafWeight without the CFQ file fails naming it");
  rt_cgroup_free (cg);

  h.v1_len = 1;                 /* blkio only */
  fails (&h, "/c1", "{\"network\":{\"classID\":1}}",
         "linux.resources.network.classID: cgroup controller \"net_cls\" is "
         "not available", "v1: classID without net_cls fails naming it");
  fails (&h, "/c1", "{\"rdma\":{\"mlx5_0\":{\"hcaObjects\":1}}}",
         "linux.resources.rdma: cgroup controller \"rdma\"",
         "v1: rdma without its hierarchy fails naming it");
  fails (&h, "/c1", "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}",
         "linux.resources.hugepageLimits: cgroup controller \"hugetlb\"",
         "v1: hugepageLimits without hugetlb fails naming it");
  for (int i = 0; i < 4; i++)
    {
      free (dirs[i]);
      free (leaf[i]);
    }
}

int
main (void)
{
  char tmpl[] = "/tmp/test-cglimits.XXXXXX";
  struct cm_err *e = NULL;

  test_parse ();
  if (mkdtemp (tmpl))
    {
      test_v2 (tmpl);
      test_v1 (tmpl);
      cm_rm_rf_at (AT_FDCWD, tmpl, &e);
      cm_err_free (&e);
    }
  return tap_done ();
}
