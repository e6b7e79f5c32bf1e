/* The typed description of one container: what oci/ parses config.json
 * into and what runtime/ builds.  It mirrors the runtime-spec shape, but
 * holds no JSON: strings that name kernel things (capabilities, mount
 * options, rlimit and namespace types, seccomp actions) are kept as text and
 * validated by runtime/ (rt_plan_new), so each error names the JSON path.
 *
 * Ownership: everything reachable from a struct rt_config is owned by it and
 * freed by rt_config_free().  Arrays are (pointer, _len) pairs; optional
 * scalars have a _present bit. */
#ifndef SANDLOCK_RUNTIME_CONFIG_H
#define SANDLOCK_RUNTIME_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_kv
{
  char *key;
  char *value;
};

struct rt_user
{
  uint32_t uid, gid;
  uint32_t *additional_gids;
  size_t additional_gids_len;
  uint32_t umask;
  unsigned umask_present : 1;
  char *username;               /* Windows-only in the spec; kept, unused */
};

struct rt_capabilities
{
  /* Each set is a list of names such as "CAP_CHOWN"; an absent set is
   * empty (runtime-spec).  */
  char **bounding, **effective, **permitted, **inheritable, **ambient;
  size_t bounding_len, effective_len, permitted_len, inheritable_len,
      ambient_len;
};

struct rt_rlimit
{
  char *type;                   /* "RLIMIT_NOFILE" */
  uint64_t soft, hard;
};

struct rt_scheduler
{
  char *policy;                 /* "SCHED_OTHER", ... */
  int32_t nice;
  int32_t priority;
  char **flags;
  size_t flags_len;
  uint64_t runtime, deadline, period;
  unsigned nice_present : 1, priority_present : 1, runtime_present : 1,
      deadline_present : 1, period_present : 1;
};

struct rt_io_priority
{
  char *class_;                 /* "IOPRIO_CLASS_RT|BE|IDLE" */
  int32_t priority;
};

struct rt_process
{
  char **args;
  size_t args_len;
  char **env;
  size_t env_len;
  char *cwd;
  bool terminal;
  uint32_t console_height, console_width;
  unsigned console_size_present : 1;
  struct rt_user user;
  struct rt_capabilities *capabilities;   /* NULL when absent */
  struct rt_rlimit *rlimits;
  size_t rlimits_len;
  bool no_new_privileges;
  int32_t oom_score_adj;
  unsigned oom_score_adj_present : 1;
  struct rt_scheduler *scheduler;         /* NULL when absent */
  struct rt_io_priority *io_priority;     /* NULL when absent */
  char *apparmor_profile;       /* accepted; AppArmor is not applied */
  char *selinux_label;          /* accepted; SELinux is not applied */
};

struct rt_mount
{
  char *destination;
  char *type;                   /* may be NULL (then "bind" if options say so) */
  char *source;
  char **options;
  size_t options_len;
  struct rt_idmap *uid_mappings, *gid_mappings;
  size_t uid_mappings_len, gid_mappings_len;
};

struct rt_idmap
{
  uint32_t container_id, host_id, size;
};

struct rt_namespace
{
  char *type;                   /* "pid", "network", "mount", ... */
  char *path;                   /* NULL: create; else setns */
};

struct rt_device
{
  char *path;
  char *type;                   /* "c", "b", "u", "p" */
  int64_t major, minor;
  uint32_t file_mode;
  uint32_t uid, gid;
  unsigned file_mode_present : 1, uid_present : 1, gid_present : 1;
};

struct rt_hook
{
  char *path;
  char **args;
  size_t args_len;
  char **env;
  size_t env_len;
  int32_t timeout;
  unsigned timeout_present : 1;
};

enum rt_hook_kind
{
  RT_HOOK_PRESTART,
  RT_HOOK_CREATE_RUNTIME,
  RT_HOOK_CREATE_CONTAINER,
  RT_HOOK_START_CONTAINER,
  RT_HOOK_POSTSTART,
  RT_HOOK_POSTSTOP,
  RT_HOOK_KINDS
};

struct rt_hook_list
{
  struct rt_hook *hooks;
  size_t len;
};

struct rt_device_rule
{
  bool allow;
  char *type;                   /* NULL = all ("a") */
  int64_t major, minor;         /* -1 = any */
  char *access;                 /* "rwm" subset; NULL = "rwm" */
};

/* linux.resources.blockIO.weightDevice[] and throttle*Device[] entries. */
struct rt_blkio_device
{
  int64_t major, minor;
  uint64_t rate;                /* throttle: bytes or operations per second */
  uint16_t weight, leaf_weight; /* weightDevice */
  unsigned weight_present : 1, leaf_weight_present : 1;
};

enum rt_throttle
{
  RT_THROTTLE_READ_BPS,
  RT_THROTTLE_WRITE_BPS,
  RT_THROTTLE_READ_IOPS,
  RT_THROTTLE_WRITE_IOPS,
  RT_THROTTLE_KINDS
};

struct rt_hugepage_limit
{
  char *page_size;              /* "2MB", "1GB" */
  uint64_t limit;               /* bytes */
};

struct rt_net_priority
{
  char *name;                   /* interface */
  uint32_t priority;
};

struct rt_rdma_limit
{
  char *device;
  uint32_t hca_handles, hca_objects;
  unsigned hca_handles_present : 1, hca_objects_present : 1;
};

struct rt_resources
{
  struct
  {
    int64_t limit, reservation, swap, kernel, kernel_tcp;
    uint64_t swappiness;
    bool disable_oom_killer, use_hierarchy, check_before_update;
    unsigned limit_present : 1, reservation_present : 1, swap_present : 1,
        swappiness_present : 1, disable_oom_killer_present : 1;
  } memory;
  struct
  {
    uint64_t shares;
    int64_t quota;
    uint64_t period;
    int64_t realtime_runtime;
    uint64_t realtime_period;
    uint64_t burst;
    int64_t idle;
    char *cpus, *mems;
    unsigned shares_present : 1, quota_present : 1, period_present : 1,
        realtime_runtime_present : 1, realtime_period_present : 1,
        burst_present : 1, idle_present : 1;
  } cpu;
  struct
  {
    int64_t limit;
    unsigned limit_present : 1;
  } pids;
  struct
  {
    uint16_t weight, leaf_weight;
    unsigned weight_present : 1, leaf_weight_present : 1;
    struct rt_blkio_device *weight_device;
    size_t weight_device_len;
    struct rt_blkio_device *throttle[RT_THROTTLE_KINDS];
    size_t throttle_len[RT_THROTTLE_KINDS];
  } blkio;
  struct rt_hugepage_limit *hugepages;  /* hugepageLimits */
  size_t hugepages_len;
  struct
  {
    uint32_t class_id;
    unsigned class_id_present : 1;
    struct rt_net_priority *priorities;
    size_t priorities_len;
  } network;
  struct rt_rdma_limit *rdma;
  size_t rdma_len;
  struct rt_device_rule *devices;
  size_t devices_len;
  struct rt_kv *unified;        /* cgroup v2 "unified" key/values */
  size_t unified_len;
  unsigned memory_present : 1, cpu_present : 1, pids_present : 1;
};

struct rt_seccomp_arg
{
  uint32_t index;
  uint64_t value, value_two;
  char *op;                     /* "SCMP_CMP_EQ", ... */
};

struct rt_seccomp_syscall
{
  char **names;
  size_t names_len;
  char *action;                 /* "SCMP_ACT_ERRNO", ... */
  uint32_t errno_ret;
  unsigned errno_ret_present : 1;
  struct rt_seccomp_arg *args;
  size_t args_len;
};

struct rt_seccomp
{
  char *default_action;
  uint32_t default_errno_ret;
  unsigned default_errno_ret_present : 1;
  char **architectures;
  size_t architectures_len;
  char **flags;
  size_t flags_len;
  char *listener_path;
  char *listener_metadata;
  struct rt_seccomp_syscall *syscalls;
  size_t syscalls_len;
};

struct rt_config
{
  char *oci_version;
  char *root_path;              /* as written; resolved by the caller */
  bool root_readonly;
  char *hostname;
  char *domainname;
  struct rt_process *process;   /* NULL only where the spec allows it */
  struct rt_mount *mounts;
  size_t mounts_len;
  struct rt_hook_list hooks[RT_HOOK_KINDS];
  struct rt_kv *annotations;
  size_t annotations_len;

  /* linux */
  struct rt_namespace *namespaces;
  size_t namespaces_len;
  struct rt_idmap *uid_mappings, *gid_mappings;
  size_t uid_mappings_len, gid_mappings_len;
  struct rt_device *devices;
  size_t devices_len;
  struct rt_kv *sysctl;
  size_t sysctl_len;
  char **masked_paths;
  size_t masked_paths_len;
  char **readonly_paths;
  size_t readonly_paths_len;
  char *rootfs_propagation;
  char *cgroups_path;
  struct rt_resources *resources;       /* NULL when absent */
  struct rt_seccomp *seccomp;           /* NULL when absent */
  char *mount_label;
  struct
  {
    int64_t offset_secs;
    uint32_t offset_nanosecs;
  } time_offsets[2];            /* [0] monotonic, [1] boottime */
  unsigned time_offsets_present : 2;
  char *personality_domain;     /* linux.personality.domain; NULL: absent */
  char **personality_flags;
  size_t personality_flags_len;
};

void rt_config_free (struct rt_config *c);
void rt_process_free (struct rt_process *p);
/* Frees a resources object and its contents (oci_resources_parse's
 * result); accepts NULL. */
void rt_resources_free (struct rt_resources *r);

/* Looks up an annotation; NULL when absent.  Borrowed. */
const char *rt_config_annotation (const struct rt_config *c, const char *key);

#endif
