#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "../common/util.h"

static void
strv_n_free (char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

static void
kv_free (struct rt_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (kv[i].key);
      free (kv[i].value);
    }
  free (kv);
}

static void
caps_free (struct rt_capabilities *c)
{
  if (c == NULL)
    return;
  strv_n_free (c->bounding, c->bounding_len);
  strv_n_free (c->effective, c->effective_len);
  strv_n_free (c->permitted, c->permitted_len);
  strv_n_free (c->inheritable, c->inheritable_len);
  strv_n_free (c->ambient, c->ambient_len);
  free (c);
}

void
rt_process_free (struct rt_process *p)
{
  if (p == NULL)
    return;
  strv_n_free (p->args, p->args_len);
  strv_n_free (p->env, p->env_len);
  free (p->cwd);
  free (p->user.additional_gids);
  free (p->user.username);
  caps_free (p->capabilities);
  for (size_t i = 0; i < p->rlimits_len; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  if (p->scheduler)
    {
      free (p->scheduler->policy);
      strv_n_free (p->scheduler->flags, p->scheduler->flags_len);
      free (p->scheduler);
    }
  if (p->io_priority)
    {
      free (p->io_priority->class_);
      free (p->io_priority);
    }
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p);
}

static void
hook_list_free (struct rt_hook_list *l)
{
  for (size_t i = 0; i < l->len; i++)
    {
      free (l->hooks[i].path);
      strv_n_free (l->hooks[i].args, l->hooks[i].args_len);
      strv_n_free (l->hooks[i].env, l->hooks[i].env_len);
    }
  free (l->hooks);
}

void
rt_resources_free (struct rt_resources *r)
{
  if (r == NULL)
    return;
  free (r->cpu.cpus);
  free (r->cpu.mems);
  for (size_t i = 0; i < r->devices_len; i++)
    {
      free (r->devices[i].type);
      free (r->devices[i].access);
    }
  free (r->devices);
  free (r->blkio.weight_device);
  for (int k = 0; k < RT_THROTTLE_KINDS; k++)
    free (r->blkio.throttle[k]);
  for (size_t i = 0; i < r->hugepages_len; i++)
    free (r->hugepages[i].page_size);
  free (r->hugepages);
  for (size_t i = 0; i < r->network.priorities_len; i++)
    free (r->network.priorities[i].name);
  free (r->network.priorities);
  for (size_t i = 0; i < r->rdma_len; i++)
    free (r->rdma[i].device);
  free (r->rdma);
  kv_free (r->unified, r->unified_len);
  free (r);
}

static void
seccomp_free (struct rt_seccomp *s)
{
  if (s == NULL)
    return;
  free (s->default_action);
  strv_n_free (s->architectures, s->architectures_len);
  strv_n_free (s->flags, s->flags_len);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      struct rt_seccomp_syscall *sc = &s->syscalls[i];
      strv_n_free (sc->names, sc->names_len);
      free (sc->action);
      for (size_t j = 0; j < sc->args_len; j++)
        free (sc->args[j].op);
      free (sc->args);
    }
  free (s->syscalls);
  free (s);
}

void
rt_config_free (struct rt_config *c)
{
  if (c == NULL)
    return;
  free (c->oci_version);
  free (c->personality_domain);
  strv_n_free (c->personality_flags, c->personality_flags_len);
  free (c->root_path);
  free (c->hostname);
  free (c->domainname);
  rt_process_free (c->process);
  for (size_t i = 0; i < c->mounts_len; i++)
    {
      free (c->mounts[i].destination);
      free (c->mounts[i].type);
      free (c->mounts[i].source);
      strv_n_free (c->mounts[i].options, c->mounts[i].options_len);
      free (c->mounts[i].uid_mappings);
      free (c->mounts[i].gid_mappings);
    }
  free (c->mounts);
  for (int k = 0; k < RT_HOOK_KINDS; k++)
    hook_list_free (&c->hooks[k]);
  kv_free (c->annotations, c->annotations_len);
  for (size_t i = 0; i < c->namespaces_len; i++)
    {
      free (c->namespaces[i].type);
      free (c->namespaces[i].path);
    }
  free (c->namespaces);
  free (c->uid_mappings);
  free (c->gid_mappings);
  for (size_t i = 0; i < c->devices_len; i++)
    {
      free (c->devices[i].path);
      free (c->devices[i].type);
    }
  free (c->devices);
  kv_free (c->sysctl, c->sysctl_len);
  strv_n_free (c->masked_paths, c->masked_paths_len);
  strv_n_free (c->readonly_paths, c->readonly_paths_len);
  free (c->rootfs_propagation);
  free (c->cgroups_path);
  rt_resources_free (c->resources);
  seccomp_free (c->seccomp);
  free (c->mount_label);
  free (c);
}

const char *
rt_config_annotation (const struct rt_config *c, const char *key)
{
  for (size_t i = 0; i < c->annotations_len; i++)
    if (strcmp (c->annotations[i].key, key) == 0)
      return c->annotations[i].value;
  return NULL;
}
