/* The planner: config + create options -> struct rt_plan, the parent's
 * decisions.  Pure: it validates and decides, and opens, joins, connects
 * and caches nothing — that is the prepare stage's (runtime/prepare.c), so
 * a config refused here leaves no trace anywhere. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "common/util.h"
#include "confine.h"
#include "internal.h"
#include "vroot-run.h"
#include "landlock.h"

static const struct
{
  const char *name;
  int flag;
} ns_types[] = {
  { "pid", CLONE_NEWPID },      { "network", CLONE_NEWNET },
  { "net", CLONE_NEWNET },      { "mount", CLONE_NEWNS },
  { "ipc", CLONE_NEWIPC },      { "uts", CLONE_NEWUTS },
  { "user", CLONE_NEWUSER },    { "cgroup", CLONE_NEWCGROUP },
  { "time", CLONE_NEWTIME },
};

static int
ns_flag (const char *type)
{
  for (size_t j = 0; type && j < ARRAY_SIZE (ns_types); j++)
    if (strcmp (type, ns_types[j].name) == 0)
      return ns_types[j].flag;
  return 0;
}

/* A namespace the clone() (or the child, for cgroup and time) creates. */
static void
plan_new_ns (struct rt_plan *p, int flag)
{
  switch (flag)
    {
    case CLONE_NEWUSER:
      p->new_user = true;
      break;
    case CLONE_NEWNS:
      p->new_mount = true;
      break;
    case CLONE_NEWPID:
      p->new_pid = true;
      break;
    case CLONE_NEWNET:
      p->new_net = true;
      break;
    case CLONE_NEWUTS:
      p->new_uts = true;
      break;
    case CLONE_NEWIPC:
      p->new_ipc = true;
      break;
    case CLONE_NEWCGROUP:
      p->new_cgroup = true;
      return;                   /* unshared after joining the cgroup */
    case CLONE_NEWTIME:
      p->new_time = true;
      return;                   /* unshared by the child, offsets first */
    default:
      break;
    }
  p->clone_flags |= flag;
}

static int
plan_namespaces (struct rt_plan *p, struct cm_err **err)
{
  const struct rt_config *c = p->c;
  int seen = 0;

  for (size_t i = 0; i < c->namespaces_len; i++)
    {
      const struct rt_namespace *n = &c->namespaces[i];
      int flag = ns_flag (n->type);
      if (flag == 0)
        return cm_err_set (err, 0, "linux.namespaces[%zu].type: unknown "
                           "namespace \"%s\"", i, n->type ? n->type : "");
      if (seen & flag)
        return cm_err_set (err, 0, "linux.namespaces[%zu]: duplicate \"%s\" "
                           "namespace", i, n->type);
      seen |= flag;
      if (n->path && *n->path)
        {
          p->joins[p->joins_len++] = (struct rt_ns_join) {
            .path = n->path, .type = n->type, .index = i, .flag = flag };
          p->joins_user |= flag == CLONE_NEWUSER;
        }
      else
        plan_new_ns (p, flag);
    }
  p->host_mount_ns = !(seen & CLONE_NEWNS);
  if (p->new_user && (c->uid_mappings_len == 0 || c->gid_mappings_len == 0))
    return cm_err_set (err, 0, "linux.uidMappings/gidMappings: required with "
                       "a new user namespace");
  return 0;
}

/* A container given CAP_SYS_ADMIN usually means to mount (systemd, nested
 * containers), which Landlock forbids inside its domain: the program only
 * sees EPERM, so the runtime says why and what to do. */
char *
rt_plan_warning (const struct rt_plan *p)
{
  const struct rt_capabilities *caps = p->c->process->capabilities;
  const struct rt_ll_policy *ll = rt_confine_landlock_policy (p->confine);
  bool admin = false;
  for (size_t i = 0; caps && i < caps->effective_len; i++)
    admin |= strcmp (caps->effective[i], "CAP_SYS_ADMIN") == 0;
  if (!admin || ll == NULL || ll->state[RT_LL_P_FS] != RT_LL_ACTIVE)
    return NULL;
  return xstrdup ("the container has CAP_SYS_ADMIN, but Landlock forbids "
                  "mount, umount and pivot_root inside it: if it needs to "
                  "mount, add the annotation run.oci.sandlock.disable=fs, "
                  "or run the runtime with --sandlock-disable=fs (or "
                  "\"disable\": [\"fs\"] in /etc/sandlock-oci/config.json)");
}

static int
plan_process (const struct rt_create_opts *o, struct cm_err **err)
{
  const struct rt_process *pr = o->config->process;
  bool exec = o->payload.kind == RT_PAYLOAD_EXEC;
  if (pr == NULL || (exec && pr->args_len == 0))
    return cm_err_set (err, 0, "process.args: required and not empty");
  if ((o->payload.kind == RT_PAYLOAD_FN && o->payload.fn == NULL)
      || (o->payload.kind == RT_PAYLOAD_FN_SEAL && o->payload.fn_seal == NULL))
    return cm_err_set (err, EINVAL, "payload: a function is required");
  if (pr->cwd == NULL || pr->cwd[0] != '/')
    return cm_err_set (err, 0, "process.cwd: must be an absolute path");
  if (pr->terminal && o->console_socket == NULL && !o->console_fd_set)
    return cm_err_set (err, 0, "process.terminal is true: --console-socket "
                       "is required");
  return 0;
}

int
rt_plan_new (const struct rt_create_opts *o, struct rt_plan *p,
             struct cm_err **err)
{
  const struct rt_config *c = o->config;
  memset (p, 0, sizeof *p);
  p->c = c;
  p->o = o;
  p->personality = -1;
  bool virt = o->rootfs_source.kind == RT_ROOTFS_VIRTUAL;
  if (plan_process (o, err) < 0
      || (virt ? rt_vroot_plan (p, err) : plan_namespaces (p, err)) < 0
      || rt_personality_plan (c, &p->personality, err) < 0
      || rt_proc_plan_rlimits (c->process, &p->rlimits, &p->rlimits_len, err)
             < 0
      || (!virt && (rt_plan_mounts (p, err) < 0
                    || rt_plan_overlay (p, err) < 0))
      || rt_caps_prepare (c->process, &p->caps, err) < 0
      || rt_confine_plan (c, &p->confine, err) < 0)
    return -1;
  p->proc_by_parent = geteuid () != 0
                      && (p->new_user || c->process->oom_score_adj_present);
  p->child_hooks = c->hooks[RT_HOOK_CREATE_CONTAINER].len
                   || c->hooks[RT_HOOK_START_CONTAINER].len;
  return 0;
}

void
rt_plan_free (struct rt_plan *p)
{
  for (size_t i = 0; p->mounts && i < p->mounts_len; i++)
    free (p->mounts[i].data);
  free (p->mounts);
  free (p->rlimits);
  rt_confine_free (p->confine);
  rt_caps_free (p->caps);
  memset (p, 0, sizeof *p);
}

/* For `features`: the linux.namespaces types plan_namespaces() accepts
 * ("net" is an alias of "network" and not listed); NULL past the end. */
const char *
rt_feature_namespace (size_t i)
{
  for (size_t j = 0; j < ARRAY_SIZE (ns_types); j++)
    if (strcmp (ns_types[j].name, "net") != 0 && i-- == 0)
      return ns_types[j].name;
  return NULL;
}
