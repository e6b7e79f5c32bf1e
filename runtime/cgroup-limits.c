/* The per-device and per-size limits of linux.resources: blockIO
 * weightDevice / leafWeight / throttle*Device, hugepageLimits, network
 * (classID, priorities) and rdma, on v1 and v2 (docs/cgroups.md).  None is
 * ever dropped: a controller or file the host lacks fails create (and
 * update) naming the JSON field. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-internal.h"
#include "common/util.h"

static const char *const throttle_json[RT_THROTTLE_KINDS] = {
  "throttleReadBpsDevice", "throttleWriteBpsDevice",
  "throttleReadIOPSDevice", "throttleWriteIOPSDevice",
};
static const char *const throttle_v1[RT_THROTTLE_KINDS] = {
  "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
  "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
};
static const char *const throttle_v2[RT_THROTTLE_KINDS] = {
  "rbps", "wbps", "riops", "wiops",
};

static bool
blkio_devices_needed (const struct rt_resources *r)
{
  for (int k = 0; k < RT_THROTTLE_KINDS; k++)
    if (r->blkio.throttle_len[k])
      return true;
  return r->blkio.weight_device_len > 0;
}

static bool
leaf_weight_needed (const struct rt_resources *r)
{
  if (r->blkio.leaf_weight_present && r->blkio.leaf_weight)
    return true;
  for (size_t i = 0; i < r->blkio.weight_device_len; i++)
    if (r->blkio.weight_device[i].leaf_weight_present)
      return true;
  return false;
}

bool
cg_limits_needed (const struct rt_resources *r)
{
  return r && (blkio_devices_needed (r) || leaf_weight_needed (r)
               || r->hugepages_len || r->network.class_id_present
               || r->network.priorities_len || r->rdma_len);
}

/* ---- v1 ---------------------------------------------------------------- */

static int
v1_missing (const char *field, const char *ctrl, struct cm_err **err)
{
  return cm_err_set (err, ENOENT, "linux.resources.%s: cgroup controller "
                     "\"%s\" is not available (no v1 hierarchy is mounted "
                     "for it)", field, ctrl);
}

int
cg_v1_limits_check (const struct cg_host *h, const struct rt_resources *r,
                    struct cm_err **err)
{
  if (r == NULL)
    return 0;
  if ((blkio_devices_needed (r) || leaf_weight_needed (r))
      && cg_v1_index (h, "blkio") < 0)
    return v1_missing ("blockIO", "blkio", err);
  if (r->hugepages_len && cg_v1_index (h, "hugetlb") < 0)
    return v1_missing ("hugepageLimits", "hugetlb", err);
  if (r->network.class_id_present && cg_v1_index (h, "net_cls") < 0)
    return v1_missing ("network.classID", "net_cls", err);
  if (r->network.priorities_len && cg_v1_index (h, "net_prio") < 0)
    return v1_missing ("network.priorities", "net_prio", err);
  if (r->rdma_len && cg_v1_index (h, "rdma") < 0)
    return v1_missing ("rdma", "rdma", err);
  return 0;
}

/* The first of |a|, |b| that exists in |dir|, else NULL. */
static const char *
either (const char *dir, const char *a, const char *b)
{
  return cg_exists (dir, a) ? a : b && cg_exists (dir, b) ? b : NULL;
}

static int
v1_weight_devices (const char *dir, const struct rt_resources *r,
                   struct cm_err **err)
{
  for (size_t i = 0; i < r->blkio.weight_device_len; i++)
    {
      const struct rt_blkio_device *d = &r->blkio.weight_device[i];
      const char *wf = either (dir, "blkio.weight_device",
                               "blkio.bfq.weight_device");
      if (d->weight_present && wf == NULL)
        return cm_err_set (err, ENOENT, "linux.resources.blockIO."
                           "weightDevice[%zu].weight: no blkio.weight_device "
                           "or blkio.bfq.weight_device (neither CFQ nor BFQ "
                           "here)", i);
      if (d->weight_present
          && cg_writef (dir, wf, err, "%lld:%lld %u", (long long) d->major,
                        (long long) d->minor, d->weight) < 0)
        return cm_err_wrap (err, "linux.resources.blockIO.weightDevice[%zu]",
                            i);
      if (!d->leaf_weight_present)
        continue;
      if (!cg_exists (dir, "blkio.leaf_weight_device"))
        return cm_err_set (err, ENOENT, "linux.resources.blockIO."
                           "weightDevice[%zu].leafWeight: no "
                           "blkio.leaf_weight_device (CFQ only)", i);
      if (cg_writef (dir, "blkio.leaf_weight_device", err, "%lld:%lld %u",
                     (long long) d->major, (long long) d->minor,
                     d->leaf_weight) < 0)
        return cm_err_wrap (err, "linux.resources.blockIO.weightDevice[%zu]",
                            i);
    }
  return 0;
}

static int
v1_blkio (struct rt_cgroup *cg, const struct rt_resources *r,
          struct cm_err **err)
{
  _cleanup_free_ char *dir = NULL;
  if (!blkio_devices_needed (r) && !leaf_weight_needed (r))
    return 0;
  dir = cg_v1_dir (cg, "blkio");
  if (dir == NULL)
    return v1_missing ("blockIO", "blkio", err);
  if (r->blkio.leaf_weight_present && r->blkio.leaf_weight)
    {
      if (!cg_exists (dir, "blkio.leaf_weight"))
        return cm_err_set (err, ENOENT, "linux.resources.blockIO.leafWeight: "
                           "no blkio.leaf_weight (CFQ only)");
      if (cg_writef (dir, "blkio.leaf_weight", err, "%u",
                     r->blkio.leaf_weight) < 0)
        return cm_err_wrap (err, "linux.resources.blockIO.leafWeight");
    }
  if (v1_weight_devices (dir, r, err) < 0)
    return -1;
  for (int k = 0; k < RT_THROTTLE_KINDS; k++)
    for (size_t i = 0; i < r->blkio.throttle_len[k]; i++)
      {
        const struct rt_blkio_device *d = &r->blkio.throttle[k][i];
        if (cg_writef (dir, throttle_v1[k], err, "%lld:%lld %llu",
                       (long long) d->major, (long long) d->minor,
                       (unsigned long long) d->rate) < 0)
          return cm_err_wrap (err, "linux.resources.blockIO.%s[%zu]",
                              throttle_json[k], i);
      }
  return 0;
}

/* hugetlb.<size>.<suffix>: the page size must be one this kernel has. */
static int
hugetlb (const char *dir, const struct rt_resources *r, const char *suffix,
         struct cm_err **err)
{
  for (size_t i = 0; i < r->hugepages_len; i++)
    {
      const struct rt_hugepage_limit *h = &r->hugepages[i];
      _cleanup_free_ char *f = xasprintf ("hugetlb.%s.%s", h->page_size,
                                          suffix);
      if (strchr (h->page_size, '/') || !cg_exists (dir, f))
        return cm_err_set (err, ENOENT, "linux.resources.hugepageLimits[%zu]"
                           ".pageSize: \"%s\" is not a huge page size of this "
                           "kernel (no %s)", i, h->page_size, f);
      if (cg_writef (dir, f, err, "%llu", (unsigned long long) h->limit) < 0)
        return cm_err_wrap (err, "linux.resources.hugepageLimits[%zu]", i);
    }
  return 0;
}

/* rdma.max, the same file on v1 and v2. */
static int
rdma (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  for (size_t i = 0; i < r->rdma_len; i++)
    {
      const struct rt_rdma_limit *l = &r->rdma[i];
      char h[32] = "", o[32] = "";
      if (!l->hca_handles_present && !l->hca_objects_present)
        continue;
      if (l->hca_handles_present)
        snprintf (h, sizeof h, " hca_handle=%u", l->hca_handles);
      if (l->hca_objects_present)
        snprintf (o, sizeof o, " hca_object=%u", l->hca_objects);
      if (cg_writef (dir, "rdma.max", err, "%s%s%s", l->device, h, o) < 0)
        return cm_err_wrap (err, "linux.resources.rdma[\"%s\"]", l->device);
    }
  return 0;
}

static int
v1_network (struct rt_cgroup *cg, const struct rt_resources *r,
            struct cm_err **err)
{
  _cleanup_free_ char *cls = NULL, *prio = NULL;
  if (r->network.class_id_present)
    {
      cls = cg_v1_dir (cg, "net_cls");
      if (cls == NULL)
        return v1_missing ("network.classID", "net_cls", err);
      if (cg_writef (cls, "net_cls.classid", err, "%u", r->network.class_id)
          < 0)
        return cm_err_wrap (err, "linux.resources.network.classID");
    }
  if (r->network.priorities_len)
    {
      prio = cg_v1_dir (cg, "net_prio");
      if (prio == NULL)
        return v1_missing ("network.priorities", "net_prio", err);
    }
  for (size_t i = 0; i < r->network.priorities_len; i++)
    if (cg_writef (prio, "net_prio.ifpriomap", err, "%s %u",
                   r->network.priorities[i].name,
                   r->network.priorities[i].priority) < 0)
      return cm_err_wrap (err, "linux.resources.network.priorities[%zu]", i);
  return 0;
}

int
cg_v1_limits_apply (struct rt_cgroup *cg, const struct rt_resources *r,
                    struct cm_err **err)
{
  _cleanup_free_ char *ht = NULL, *rd = NULL;
  if (v1_blkio (cg, r, err) < 0 || v1_network (cg, r, err) < 0)
    return -1;
  if (r->hugepages_len)
    {
      ht = cg_v1_dir (cg, "hugetlb");
      if (ht == NULL)
        return v1_missing ("hugepageLimits", "hugetlb", err);
      if (hugetlb (ht, r, "limit_in_bytes", err) < 0)
        return -1;
    }
  if (r->rdma_len)
    {
      rd = cg_v1_dir (cg, "rdma");
      if (rd == NULL)
        return v1_missing ("rdma", "rdma", err);
      if (rdma (rd, r, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- v2 ---------------------------------------------------------------- */

bool
cg_v2_limits_need (const struct rt_resources *r, const char *c, size_t cl)
{
#define IS(s) (cl == strlen (s) && strncmp (c, s, cl) == 0)
  if (r == NULL)
    return false;
  return (IS ("io") && blkio_devices_needed (r))
         || (IS ("hugetlb") && r->hugepages_len)
         || (IS ("rdma") && r->rdma_len);
#undef IS
}

/* What v2 has no file for at all. */
int
cg_v2_limits_check (const struct rt_resources *r, struct cm_err **err)
{
  if (r == NULL)
    return 0;
  if (r->network.class_id_present || r->network.priorities_len)
    return cm_err_set (err, EOPNOTSUPP, "linux.resources.network: cgroup v2 "
                       "has no net_cls or net_prio controller");
  if (leaf_weight_needed (r))
    return cm_err_set (err, EOPNOTSUPP, "linux.resources.blockIO.leafWeight: "
                       "cgroup v2 has no leaf weight");
  return 0;
}

static int
v2_io (const char *dir, const struct rt_resources *r, struct cm_err **err)
{
  for (size_t i = 0; i < r->blkio.weight_device_len; i++)
    {
      const struct rt_blkio_device *d = &r->blkio.weight_device[i];
      int ret;
      if (!d->weight_present)
        continue;
      if (cg_exists (dir, "io.bfq.weight"))
        ret = cg_writef (dir, "io.bfq.weight", err, "%lld:%lld %u",
                         (long long) d->major, (long long) d->minor,
                         d->weight);
      else if (cg_exists (dir, "io.weight"))
        ret = cg_writef (dir, "io.weight", err, "%lld:%lld %llu",
                         (long long) d->major, (long long) d->minor,
                         (unsigned long long) cg_blkio_to_io_weight (
                             d->weight));
      else
        ret = cm_err_set (err, ENOENT, "no io.bfq.weight or io.weight");
      if (ret < 0)
        return cm_err_wrap (err, "linux.resources.blockIO.weightDevice[%zu]",
                            i);
    }
  for (int k = 0; k < RT_THROTTLE_KINDS; k++)
    for (size_t i = 0; i < r->blkio.throttle_len[k]; i++)
      {
        const struct rt_blkio_device *d = &r->blkio.throttle[k][i];
        char rate[24] = "max";  /* v1's 0 (no limit) */
        if (d->rate)
          snprintf (rate, sizeof rate, "%llu", (unsigned long long) d->rate);
        if (cg_writef (dir, "io.max", err, "%lld:%lld %s=%s",
                       (long long) d->major, (long long) d->minor,
                       throttle_v2[k], rate) < 0)
          return cm_err_wrap (err, "linux.resources.blockIO.%s[%zu]",
                              throttle_json[k], i);
      }
  return 0;
}

int
cg_v2_limits_apply (const char *dir, const struct rt_resources *r,
                    struct cm_err **err)
{
  if (cg_v2_limits_check (r, err) < 0 || v2_io (dir, r, err) < 0
      || hugetlb (dir, r, "max", err) < 0 || rdma (dir, r, err) < 0)
    return -1;
  return 0;
}
