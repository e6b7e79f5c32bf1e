/* oci/spec.c: the engine samples parse, every field of a full config lands
 * in struct rt_config, and every kind of bad input names its JSON path.
 * Runs from the repo root (fixtures under tests/fixtures/); under ASan/LSan
 * so the error paths are also checked for leaks. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"

#define SAMPLES "tests/fixtures/samples/"

static char *
slurp (const char *path, size_t *len)
{
  struct cm_err *err = NULL;
  char *buf = NULL;
  if (cm_read_file_at (AT_FDCWD, path, OCI_SPEC_MAX_BYTES, &buf, len, &err)
      < 0)
    {
      printf ("# %s\n", err->msg);
      cm_err_free (&err);
      return NULL;
    }
  return buf;
}

static struct rt_config *
load (const char *path)
{
  struct rt_config *cfg = NULL;
  struct cm_err *err = NULL;
  if (oci_spec_load (path, &cfg, &err) < 0)
    {
      printf ("# %s\n", err->msg);
      cm_err_free (&err);
      return NULL;
    }
  return cfg;
}

static bool
strv_eq (char **v, size_t n, const char *const *want, size_t want_n)
{
  if (n != want_n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i], want[i]) != 0)
      return false;
  return true;
}
#define STRV_EQ(v, n, ...)                                              \
  strv_eq ((v), (n), (const char *const[]){ __VA_ARGS__ },              \
           sizeof ((const char *const[]){ __VA_ARGS__ }) / sizeof (char *))

static void
test_podman (void)
{
  struct rt_config *c = load (SAMPLES "podman-config.json");
  ok (c != NULL, "podman config.json parses");
  if (c == NULL)
    return;
  is_str (c->oci_version, "1.0.2-dev", "podman: ociVersion");
  is_str (c->hostname, "8ad3a2e563c2", "podman: hostname");
  ok (c->process && c->process->args_len == 2
      && STRV_EQ (c->process->args, c->process->args_len, "echo",
                  "hello-accept"), "podman: args");
  ok (c->process->user.umask_present && c->process->user.umask == 18,
      "podman: umask 18");
  ok (c->process->capabilities && c->process->capabilities->bounding_len == 11
      && c->process->capabilities->ambient_len == 0
      && c->process->capabilities->inheritable == NULL,
      "podman: capabilities, absent sets empty");
  ok (c->process->rlimits_len == 2 && c->process->rlimits[1].soft == 4096
      && strcmp (c->process->rlimits[1].type, "RLIMIT_NPROC") == 0,
      "podman: rlimits");
  ok (c->mounts_len == 11 && strcmp (c->mounts[3].destination, "/dev/pts") == 0
      && c->mounts[3].options_len == 6, "podman: mounts");
  ok (c->annotations_len == 8, "podman: annotations");
  is_str (rt_config_annotation (c, "io.container.manager"), "libpod",
          "podman: annotation lookup");
  ok (c->namespaces_len == 5
      && strcmp (c->namespaces[1].type, "network") == 0
      && c->namespaces[1].path
      && cm_startswith (c->namespaces[1].path, "/run/netns/")
      && c->namespaces[0].path == NULL, "podman: namespaces with a path");
  ok (c->resources && c->resources->pids_present
      && c->resources->pids.limit_present && c->resources->pids.limit == 2048,
      "podman: pids limit");
  ok (c->resources->devices_len == 1 && !c->resources->devices[0].allow
      && c->resources->devices[0].type == NULL
      && c->resources->devices[0].major == -1
      && c->resources->devices[0].minor == -1, "podman: deny-all device rule");
  ok (c->seccomp && c->seccomp->default_errno_ret_present
      && c->seccomp->default_errno_ret == 38 && c->seccomp->syscalls_len == 22
      && c->seccomp->architectures_len == 3, "podman: seccomp");
  ok (c->seccomp->syscalls[6].args_len == 1
      && c->seccomp->syscalls[6].args[0].value == 4294967295u,
      "podman: seccomp arg value");
  ok (c->sysctl_len == 1 && strcmp (c->sysctl[0].value, "0 0") == 0,
      "podman: sysctl");
  ok (c->masked_paths_len == 11 && c->readonly_paths_len == 6,
      "podman: masked/readonly paths");
  rt_config_free (c);
}

static void
test_containerd (void)
{
  struct rt_config *c = load (SAMPLES "containerd-config.json");
  ok (c != NULL, "containerd config.json parses");
  if (c == NULL)
    return;
  is_str (c->root_path, "rootfs", "containerd: root.path");
  ok (!c->root_readonly, "containerd: root not readonly");
  ok (c->process->no_new_privileges, "containerd: noNewPrivileges");
  ok (c->process->user.additional_gids_len == 1
      && c->process->user.additional_gids[0] == 0,
      "containerd: additionalGids");
  ok (c->mounts_len == 7, "containerd: mounts");
  ok (c->resources->devices_len == 10 && c->resources->devices[9].allow
      && c->resources->devices[9].major == 5
      && c->resources->devices[9].minor == 2
      && strcmp (c->resources->devices[9].type, "c") == 0,
      "containerd: device rules");
  is_str (c->cgroups_path, "/acc14251/c-run-echo", "containerd: cgroupsPath");
  ok (c->seccomp == NULL && c->hooks[RT_HOOK_PRESTART].len == 0
      && c->annotations_len == 0, "containerd: absent objects stay empty");
  rt_config_free (c);
}

static struct rt_process *
parse_process_file (const char *path)
{
  size_t len = 0;
  _cleanup_free_ char *buf = slurp (path, &len);
  struct rt_process *p = NULL;
  struct cm_err *err = NULL;
  if (buf == NULL)
    return NULL;
  if (oci_process_parse (buf, len, &p, &err) < 0)
    {
      printf ("# %s\n", err->msg);
      cm_err_free (&err);
    }
  return p;
}

static void
test_process_samples (void)
{
  struct rt_process *p = parse_process_file (SAMPLES "podman-exec-process.json");
  ok (p != NULL && p->user.uid == 1000 && p->user.gid == 1000
      && p->args_len == 3 && strcmp (p->cwd, "/tmp") == 0
      && p->env_len == 5 && p->rlimits_len == 2,
      "podman exec process.json parses");
  rt_process_free (p);
  p = parse_process_file (SAMPLES "containerd-exec-process.json");
  ok (p != NULL && p->no_new_privileges && p->user.additional_gids_len == 1
      && p->capabilities && p->capabilities->bounding_len == 14
      && STRV_EQ (p->args, p->args_len, "sh", "-c", "echo $(pwd) $(id -u)"),
      "containerd exec process.json parses");
  rt_process_free (p);
}

static void
test_full_process (const struct rt_process *p)
{
  const struct rt_capabilities *k = p->capabilities;
  ok (p->terminal && p->console_size_present && p->console_height == 24
      && p->console_width == 80, "full: terminal and consoleSize");
  ok (p->user.uid == UINT32_MAX && p->user.gid == 1001
      && p->user.umask_present && p->user.umask == 18
      && p->user.additional_gids_len == 2
      && p->user.additional_gids[1] == UINT32_MAX, "full: user");
  is_str (p->user.username, "alice", "full: username");
  ok (STRV_EQ (p->args, p->args_len, "/bin/sh", "-c", "true")
      && STRV_EQ (p->env, p->env_len, "PATH=/bin", "HOME=/root"),
      "full: args and env");
  is_str (p->cwd, "/work", "full: cwd");
  ok (k && STRV_EQ (k->bounding, k->bounding_len, "CAP_CHOWN", "CAP_KILL")
      && STRV_EQ (k->effective, k->effective_len, "CAP_CHOWN")
      && k->permitted_len == 2 && k->inheritable_len == 0
      && STRV_EQ (k->ambient, k->ambient_len, "CAP_KILL"),
      "full: five capability sets");
  ok (p->rlimits_len == 2 && p->rlimits[0].soft == 1024
      && p->rlimits[0].hard == UINT64_MAX && p->rlimits[1].hard == 0,
      "full: rlimits incl. 2^64-1");
  ok (p->no_new_privileges && p->oom_score_adj_present
      && p->oom_score_adj == -1000, "full: noNewPrivileges, oomScoreAdj");
  ok (p->scheduler && strcmp (p->scheduler->policy, "SCHED_DEADLINE") == 0
      && p->scheduler->nice_present && p->scheduler->nice == -20
      && p->scheduler->priority_present && p->scheduler->priority == 7
      && p->scheduler->flags_len == 1 && p->scheduler->runtime == 10000
      && p->scheduler->deadline == 20000 && p->scheduler->period == 30000
      && p->scheduler->runtime_present && p->scheduler->deadline_present
      && p->scheduler->period_present, "full: scheduler");
  ok (p->io_priority && strcmp (p->io_priority->class_, "IOPRIO_CLASS_BE") == 0
      && p->io_priority->priority == 7, "full: ioPriority");
  is_str (p->apparmor_profile, "unconfined", "full: apparmorProfile");
  is_str (p->selinux_label, "system_u:system_r:container_t:s0",
          "full: selinuxLabel");
}

static void
test_full_linux (const struct rt_config *c)
{
  const struct rt_resources *r = c->resources;
  const struct rt_seccomp *s = c->seccomp;

  ok (c->namespaces_len == 5 && strcmp (c->namespaces[4].type, "time") == 0
      && strcmp (c->namespaces[1].path, "/run/netns/x") == 0,
      "full: namespaces");
  ok (c->uid_mappings_len == 1 && c->uid_mappings[0].host_id == 1000
      && c->gid_mappings_len == 1 && c->gid_mappings[0].size == 2,
      "full: linux id mappings");
  ok (c->time_offsets_present == 3 && c->time_offsets[0].offset_secs == -5
      && c->time_offsets[0].offset_nanosecs == 999999999
      && c->time_offsets[1].offset_secs == INT64_MAX
      && c->time_offsets[1].offset_nanosecs == 0, "full: timeOffsets");
  ok (c->devices_len == 2 && c->devices[0].major == 10
      && c->devices[0].minor == 229 && c->devices[0].file_mode_present
      && c->devices[0].file_mode == 0666 && c->devices[0].uid_present
      && c->devices[0].gid_present && !c->devices[1].file_mode_present
      && !c->devices[1].uid_present && strcmp (c->devices[1].type, "b") == 0,
      "full: devices");
  ok (c->sysctl_len == 2 && strcmp (c->sysctl[1].key, "kernel.shmmax") == 0,
      "full: sysctl");
  ok (STRV_EQ (c->masked_paths, c->masked_paths_len, "/proc/kcore",
               "/sys/firmware")
      && STRV_EQ (c->readonly_paths, c->readonly_paths_len, "/proc/sys"),
      "full: masked/readonly paths");
  is_str (c->rootfs_propagation, "rslave", "full: rootfsPropagation");
  is_str (c->cgroups_path, "/sandlock/test", "full: cgroupsPath");
  is_str (c->mount_label, "system_u:object_r:container_file_t:s0",
          "full: mountLabel");
  ok (r && r->devices_len == 2 && r->devices[1].allow
      && r->devices[1].major == 1 && r->devices[1].minor == 3
      && strcmp (r->devices[1].access, "rw") == 0, "full: device rules");
  ok (r->memory_present && r->memory.limit_present
      && r->memory.limit == 536870912 && r->memory.reservation == 268435456
      && r->memory.swap_present && r->memory.swap == -1
      && r->memory.kernel == -1 && r->memory.kernel_tcp == 1048576
      && r->memory.swappiness_present && r->memory.swappiness == 60
      && r->memory.disable_oom_killer_present && r->memory.disable_oom_killer
      && r->memory.use_hierarchy && r->memory.check_before_update,
      "full: memory");
  ok (r->cpu_present && r->cpu.shares == 1024 && r->cpu.quota == -1
      && r->cpu.period == 100000 && r->cpu.realtime_runtime == 950000
      && r->cpu.realtime_period == 1000000 && r->cpu.burst == 5000
      && r->cpu.idle == 1 && r->cpu.shares_present && r->cpu.quota_present
      && r->cpu.period_present && r->cpu.realtime_runtime_present
      && r->cpu.realtime_period_present && r->cpu.burst_present
      && r->cpu.idle_present && strcmp (r->cpu.cpus, "0-1") == 0
      && strcmp (r->cpu.mems, "0") == 0, "full: cpu");
  ok (r->pids_present && r->pids.limit == -1, "full: pids -1");
  ok (r->blkio.weight_present && r->blkio.weight == 500, "full: blockIO");
  ok (r->unified_len == 2 && strcmp (r->unified[1].value, "default 100") == 0,
      "full: unified");
  ok (s && strcmp (s->default_action, "SCMP_ACT_ERRNO") == 0
      && s->default_errno_ret_present && s->default_errno_ret == 38
      && s->architectures_len == 2 && s->flags_len == 1
      && strcmp (s->listener_path, "/run/seccomp.sock") == 0
      && strcmp (s->listener_metadata, "meta") == 0, "full: seccomp header");
  ok (s->syscalls_len == 2 && !s->syscalls[0].errno_ret_present
      && s->syscalls[1].errno_ret_present && s->syscalls[1].errno_ret == 1
      && s->syscalls[1].args_len == 2
      && s->syscalls[1].args[0].value == UINT64_MAX
      && s->syscalls[1].args[0].value_two == 7
      && strcmp (s->syscalls[1].args[0].op, "SCMP_CMP_MASKED_EQ") == 0
      && s->syscalls[1].args[1].index == 5, "full: seccomp syscalls");
}

static void
test_full (void)
{
  struct rt_config *c = load ("tests/fixtures/spec/full.json");
  ok (c != NULL, "full config parses");
  if (c == NULL)
    return;
  is_str (c->oci_version, "1.2.0", "full: ociVersion");
  ok (c->root_readonly && strcmp (c->root_path, "rootfs") == 0, "full: root");
  ok (strcmp (c->hostname, "box") == 0
      && strcmp (c->domainname, "example.org") == 0, "full: host/domainname");
  test_full_process (c->process);
  ok (c->mounts_len == 2 && c->mounts[1].type == NULL
      && c->mounts[0].options_len == 0
      && c->mounts[1].uid_mappings_len == 1
      && c->mounts[1].uid_mappings[0].host_id == 100000
      && c->mounts[1].uid_mappings[0].size == 65536
      && c->mounts[1].gid_mappings_len == 2
      && c->mounts[1].gid_mappings[1].container_id == 1,
      "full: mounts incl. idmaps");
  ok (c->hooks[RT_HOOK_PRESTART].len == 1
      && c->hooks[RT_HOOK_PRESTART].hooks[0].timeout_present
      && c->hooks[RT_HOOK_PRESTART].hooks[0].timeout == 5
      && c->hooks[RT_HOOK_PRESTART].hooks[0].args_len == 2
      && c->hooks[RT_HOOK_PRESTART].hooks[0].env_len == 1
      && c->hooks[RT_HOOK_CREATE_RUNTIME].len == 2
      && !c->hooks[RT_HOOK_CREATE_RUNTIME].hooks[0].timeout_present
      && c->hooks[RT_HOOK_CREATE_RUNTIME].hooks[1].timeout == INT32_MAX
      && strcmp (c->hooks[RT_HOOK_CREATE_CONTAINER].hooks[0].path, "/cc") == 0
      && strcmp (c->hooks[RT_HOOK_START_CONTAINER].hooks[0].path, "/sc") == 0
      && strcmp (c->hooks[RT_HOOK_POSTSTART].hooks[0].path, "/ps") == 0
      && c->hooks[RT_HOOK_POSTSTOP].hooks[0].args_len == 1,
      "full: all six hook kinds");
  is_str (rt_config_annotation (c, "org.example.key"), "value",
          "full: annotations");
  ok (rt_config_annotation (c, "missing") == NULL, "full: absent annotation");
  test_full_linux (c);
  rt_config_free (c);
}

/* ---- negative cases ------------------------------------------------- */

static void
expect_err_len (const char *json, size_t len, const char *msg, bool prefix)
{
  struct rt_config *cfg = NULL;
  struct cm_err *err = NULL;
  int r = oci_spec_parse (json, len, &cfg, &err);
  const char *got = err ? err->msg : NULL;

  ok (r < 0 && cfg == NULL && err != NULL, "rejected: %s", msg);
  if (prefix)
    {
      ok (got && strncmp (got, msg, strlen (msg)) == 0, "message starts '%s'",
          msg);
      if (got && strncmp (got, msg, strlen (msg)) != 0)
        printf ("#   got '%s'\n", got);
    }
  else
    is_str (got, msg, "message '%s'", msg);
  cm_err_free (&err);
  rt_config_free (cfg);
}

static void
expect_err (const char *json, const char *msg)
{
  expect_err_len (json, strlen (json), msg, false);
}

#define V "\"ociVersion\":\"1.0.2\""
#define P(x) "{" V ",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]," x "}}"
#define L(x) "{" V ",\"linux\":{" x "}}"
#define R(x) L ("\"resources\":{" x "}")
#define SC(x) L ("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"," x "}")
#define U32R "out of range (0..4294967295)"

static const struct
{
  const char *json, *msg;
} bad[] = {
  /* the three examples from the contract */
  { "{" V ",\"process\":{\"cwd\":\"/\",\"args\":[1]}}",
    "process.args[0]: expected string" },
  { L ("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":7}]"),
    "linux.namespaces[2].type: expected string" },
  { "{" V ",\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"/b\","
    "\"options\":\"ro\"}]}",
    "mounts[1].options: expected array of strings" },
  /* required fields */
  { "{}", "ociVersion: required" },
  { "{\"ociVersion\":null}", "ociVersion: required" },
  { "{" V ",\"process\":{\"args\":[\"sh\"]}}", "process.cwd: required" },
  { "{" V ",\"process\":{\"cwd\":\"/\"}}", "process.args: required" },
  { P ("\"cwd\":null"), "process.cwd: required" },
  { "{" V ",\"root\":{\"readonly\":true}}", "root.path: required" },
  { P ("\"user\":{\"uid\":0}"), "process.user.gid: required" },
  { P ("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1}]"),
    "process.rlimits[0].hard: required" },
  { "{" V ",\"hooks\":{\"prestart\":[{\"args\":[]}]}}",
    "hooks.prestart[0].path: required" },
  { L ("\"uidMappings\":[{\"containerID\":0,\"hostID\":1}]"),
    "linux.uidMappings[0].size: required" },
  { R ("\"devices\":[{\"access\":\"rwm\"}]"),
    "linux.resources.devices[0].allow: required" },
  { SC ("\"syscalls\":[{\"names\":[\"read\"]}]"),
    "linux.seccomp.syscalls[0].action: required" },
  { L ("\"seccomp\":{}"), "linux.seccomp.defaultAction: required" },
  { P ("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\"}"),
    "process.ioPriority.priority: required" },
  /* wrong types at various depths */
  { "{\"ociVersion\":1}", "ociVersion: expected string" },
  { "{" V ",\"process\":\"sh\"}", "process: expected object" },
  { P ("\"terminal\":\"yes\""), "process.terminal: expected boolean" },
  { P ("\"user\":{\"uid\":0,\"gid\":\"0\"}"),
    "process.user.gid: expected integer" },
  { P ("\"capabilities\":{\"bounding\":[\"CAP_KILL\",1]}"),
    "process.capabilities.bounding[1]: expected string" },
  { "{" V ",\"mounts\":{}}", "mounts: expected array of objects" },
  { "{" V ",\"mounts\":[\"/proc\"]}", "mounts[0]: expected object" },
  { "{" V ",\"mounts\":[{\"destination\":\"/a\",\"gidMappings\":"
    "[{\"containerID\":0,\"hostID\":\"1\",\"size\":1}]}]}",
    "mounts[0].gidMappings[0].hostID: expected integer" },
  { "{" V ",\"annotations\":[]}", "annotations: expected object of strings" },
  { "{" V ",\"annotations\":{\"a.b\":\"x\",\"c.d\":true}}",
    "annotations[\"c.d\"]: expected string" },
  { R ("\"unified\":{\"memory.high\":5}"),
    "linux.resources.unified[\"memory.high\"]: expected string" },
  { SC ("\"syscalls\":[{\"names\":[\"a\"],\"action\":\"x\",\"args\":"
        "[{\"index\":0,\"value\":1,\"op\":[]}]}]"),
    "linux.seccomp.syscalls[0].args[0].op: expected string" },
  { "{" V ",\"hooks\":{\"poststop\":{}}}",
    "hooks.poststop: expected array of objects" },
  { L ("\"timeOffsets\":{\"boottime\":[]}"),
    "linux.timeOffsets.boottime: expected object" },
  /* numbers: range and integer-ness */
  { P ("\"user\":{\"uid\":-1,\"gid\":0}"), "process.user.uid: " U32R ": -1" },
  { P ("\"user\":{\"uid\":4294967296,\"gid\":0}"),
    "process.user.uid: " U32R ": 4294967296" },
  { P ("\"user\":{\"uid\":1.5,\"gid\":0}"),
    "process.user.uid: expected integer, got 1.5" },
  { P ("\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[1,-3]}"),
    "process.user.additionalGids[1]: " U32R ": -3" },
  { P ("\"rlimits\":[{\"type\":\"RLIMIT_CPU\",\"soft\":-1,\"hard\":1}]"),
    "process.rlimits[0].soft: out of range (0..18446744073709551615): -1" },
  { P ("\"rlimits\":[{\"type\":\"RLIMIT_CPU\",\"soft\":1,"
       "\"hard\":18446744073709551616}]"),
    "process.rlimits[0].hard: out of range (0..18446744073709551615): "
    "18446744073709551616" },
  { P ("\"oomScoreAdj\":1001"),
    "process.oomScoreAdj: out of range (-1000..1000): 1001" },
  { P ("\"oomScoreAdj\":-1001"),
    "process.oomScoreAdj: out of range (-1000..1000): -1001" },
  { P ("\"consoleSize\":{\"height\":1,\"width\":-1}"),
    "process.consoleSize.width: " U32R ": -1" },
  { P ("\"user\":{\"uid\":0,\"gid\":0,\"umask\":512}"),
    "process.user.umask: out of range (0..511): 512" },
  { SC ("\"syscalls\":[{\"names\":[\"a\"],\"action\":\"x\","
        "\"errnoRet\":4294967296}]"),
    "linux.seccomp.syscalls[0].errnoRet: " U32R ": 4294967296" },
  { SC ("\"defaultErrnoRet\":-1"),
    "linux.seccomp.defaultErrnoRet: " U32R ": -1" },
  { SC ("\"syscalls\":[{\"names\":[\"a\"],\"action\":\"x\",\"args\":"
        "[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]"),
    "linux.seccomp.syscalls[0].args[0].index: out of range (0..5): 6" },
  { L ("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"major\":1e3}]"),
    "linux.devices[0].major: expected integer, got 1e3" },
  { L ("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\","
       "\"minor\":9223372036854775808}]"),
    "linux.devices[0].minor: out of range "
    "(-9223372036854775808..9223372036854775807): 9223372036854775808" },
  { L ("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"fileMode\":65536}]"),
    "linux.devices[0].fileMode: out of range (0..65535): 65536" },
  { R ("\"memory\":{\"limit\":-2}"),
    "linux.resources.memory.limit: out of range (-1..9223372036854775807): -2" },
  { R ("\"memory\":{\"swap\":1.0}"),
    "linux.resources.memory.swap: expected integer, got 1.0" },
  { R ("\"blockIO\":{\"weight\":65536}"),
    "linux.resources.blockIO.weight: out of range (0..65535): 65536" },
  { R ("\"devices\":[{\"allow\":true,\"major\":-2}]"),
    "linux.resources.devices[0].major: out of range "
    "(-1..9223372036854775807): -2" },
  { "{" V ",\"hooks\":{\"createRuntime\":[{\"path\":\"/x\",\"timeout\":0}]}}",
    "hooks.createRuntime[0].timeout: out of range (1..2147483647): 0" },
  { L ("\"timeOffsets\":{\"monotonic\":{\"nanosecs\":1000000000}}"),
    "linux.timeOffsets.monotonic.nanosecs: out of range (0..999999999): "
    "1000000000" },
  /* intelRdt is not applied, but a closID that is a path is refused */
  { L ("\"intelRdt\":{\"closID\":\"../../x\"}"),
    "linux.intelRdt.closID: invalid \"../../x\": a name, not a path" },
  { L ("\"intelRdt\":{\"closID\":\"..\"}"),
    "linux.intelRdt.closID: invalid \"..\": a name, not a path" },
  { L ("\"intelRdt\":{\"closID\":\".\"}"),
    "linux.intelRdt.closID: invalid \".\": a name, not a path" },
  { L ("\"personality\":{\"flags\":[]}"),
    "linux.personality.domain: required" },
  { L ("\"personality\":{\"domain\":7}"),
    "linux.personality.domain: expected string" },
  /* ociVersion: 1.x.y accepted (newer than 1.3 with a warning at create),
   * anything else refused */
  { "{\"ociVersion\":\"2.0.0\"}",
    "ociVersion: unsupported version \"2.0.0\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"0.9.0\"}",
    "ociVersion: unsupported version \"0.9.0\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"1.0\"}",
    "ociVersion: unsupported version \"1.0\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"1.0.2x\"}",
    "ociVersion: unsupported version \"1.0.2x\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"v1.0.0\"}",
    "ociVersion: unsupported version \"v1.0.0\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"1..0\"}",
    "ociVersion: unsupported version \"1..0\" (supported: 1.x.y; "
    "known up to 1.3)" },
  { "{\"ociVersion\":\"1.3\"}",
    "ociVersion: unsupported version \"1.3\" (supported: 1.x.y; "
    "known up to 1.3)" },
  /* Intel RDT (1.3 added schemata, enableMonitoring): refused */
  { L ("\"intelRdt\":{\"closID\":\"guaranteed\"}"),
    "linux.intelRdt: not supported by sandlock-oci (no Intel RDT / resctrl)" },
  { L ("\"intelRdt\":{\"schemata\":[\"L3:0=ff\"],\"enableMonitoring\":true}"),
    "linux.intelRdt: not supported by sandlock-oci (no Intel RDT / resctrl)" },
  /* runtime-spec 1.3 fields that are not implemented: refused by path */
  { L ("\"netDevices\":{\"eth0\":{\"name\":\"ctr0\"}}"),
    "linux.netDevices: not supported by sandlock-oci" },
  { L ("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\"}"),
    "linux.memoryPolicy: not supported by sandlock-oci" },
  /* the document itself */
  { "[]", "config.json: expected object" },
  { "{\"ociVersion\":\"1.0.0\",\"a\":\"x\\u0000y\"}",
    "config.json: invalid JSON: \\u0000 in a string is not supported" },
};

static void
test_bad (void)
{
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    expect_err (bad[i].json, bad[i].msg);

  /* yajl's own message follows the prefix. */
  expect_err_len ("{\"ociVersion\":", 14, "config.json: invalid JSON: ", true);
  expect_err_len ("{\"ociVersion\":\"1.0.0\"} x", 24,
                  "config.json: invalid JSON: ", true);
  expect_err_len ("", 0, "config.json: invalid JSON: ", true);
  expect_err_len ("{\"a\":1}\0{}", 10,
                  "config.json: invalid JSON: NUL byte in input", false);

  /* Nesting beyond the bound is refused before yajl builds the tree
   * (yajl_tree_free recurses per level). */
  {
    size_t n = 100000;
    char *deep = xmalloc (2 * n + 1);
    memset (deep, '[', n);
    memset (deep + n, ']', n);
    deep[2 * n] = '\0';
    expect_err_len (deep, 2 * n,
                    "config.json: invalid JSON: nested deeper than 128 levels",
                    false);
    free (deep);
  }
  /* A quote inside a comment must not hide the brackets after it. */
  for (int form = 0; form < 2; form++)
  {
    size_t n = 100000;
    char *deep = xmalloc (2 * n + 32);
    size_t k = (size_t) sprintf (deep, form ? "// \"\n" : "/*\"*/");
    memset (deep + k, '[', n);
    memset (deep + k + n, ']', n);
    deep[k + 2 * n] = '\0';
    expect_err_len (deep, k + 2 * n,
                    "config.json: invalid JSON: nested deeper than 128 levels",
                    false);
    free (deep);
  }
  /* Brackets inside strings do not count towards depth. */
  {
    struct rt_config *c = NULL;
    struct cm_err *err = NULL;
    char json[600];
    snprintf (json, sizeof json, "{%s,\"hostname\":\"%0300d\"}", V, 0);
    memset (strstr (json, "\"hostname\":\"") + 12, '[', 290);
    ok (oci_spec_parse (json, strlen (json), &c, &err) == 0,
        "brackets inside strings are not nesting");
    rt_config_free (c);
    cm_err_free (&err);
  }

  /* Oversize input. */
  {
    size_t n = OCI_SPEC_MAX_BYTES + 1;
    char *big = xmalloc (n);
    char want[128];
    memset (big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    snprintf (want, sizeof want, "config.json: too large (%zu bytes, limit %u)",
              n, OCI_SPEC_MAX_BYTES);
    expect_err_len (big, n, want, false);
    free (big);
  }
}

/* ---- accepted edge cases -------------------------------------------- */

static struct rt_config *
parse_ok (const char *json, const char *what)
{
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  int r = oci_spec_parse (json, strlen (json), &c, &err);
  ok (r == 0 && c != NULL, "accepted: %s", what);
  if (err)
    printf ("#   %s\n", err->msg);
  cm_err_free (&err);
  return c;
}

static void
test_edges (void)
{
  static const char *const versions[] = {
    "1.0.0", "1.0.2-dev", "1.1.0", "1.1.0-rc.1", "1.2.0", "1.2.1+dev",
    "1.3.0", "1.3.0-rc.1", "1.4.0", "1.10.0",
  };
  struct rt_config *c;

  for (size_t i = 0; i < ARRAY_SIZE (versions); i++)
    {
      char json[128];
      snprintf (json, sizeof json, "{\"ociVersion\":\"%s\"}", versions[i]);
      c = parse_ok (json, versions[i]);
      ok (c && c->process == NULL && c->root_path == NULL,
          "minimal config has no process and no root");
      rt_config_free (c);
    }
  ok (!oci_spec_version_newer ("1.3.0") && !oci_spec_version_newer ("1.0.2")
          && oci_spec_version_newer ("1.4.0")
          && oci_spec_version_newer ("1.10.0-dev"),
      "only a 1.x above 1.3 is newer than the parser knows");

  c = parse_ok ("{" V ",\"linux\":{\"personality\":{\"domain\":"
                "\"LINUX32\",\"flags\":[\"X\"]}}}", "personality");
  ok (c && strcmp (c->personality_domain, "LINUX32") == 0
      && c->personality_flags_len == 1
      && strcmp (c->personality_flags[0], "X") == 0,
      "linux.personality kept for the runtime to validate");
  rt_config_free (c);

  c = parse_ok ("{" V ",\"hostname\":null,\"process\":{\"cwd\":\"/\","
                "\"args\":[],\"capabilities\":null,\"scheduler\":null,"
                "\"user\":null,\"oomScoreAdj\":null},\"linux\":null,"
                "\"mounts\":null,\"root\":null,\"annotations\":null}",
                "null optional fields");
  ok (c && c->hostname == NULL && c->process->capabilities == NULL
      && c->process->scheduler == NULL && !c->process->oom_score_adj_present
      && c->process->user.uid == 0 && c->mounts_len == 0
      && c->namespaces_len == 0 && c->root_path == NULL,
      "null = absent everywhere");
  rt_config_free (c);

  c = parse_ok ("{" V ",\"hostname\":\"a\",\"hostname\":\"b\"}",
                "duplicate key");
  is_str (c ? c->hostname : NULL, "b", "duplicate key: last one wins");
  rt_config_free (c);

  c = parse_ok ("{" V ",/* yajl allows comments */\"x-unknown\":[{}],"
                "\"process\":{\"cwd\":\"/\",\"args\":[\"a\"],\"foo\":1,"
                "\"user\":{\"uid\":-0,\"gid\":0,\"bar\":null}}}",
                "unknown keys and comments");
  ok (c && c->process->user.uid == 0, "unknown keys ignored, -0 is 0");
  rt_config_free (c);

  c = parse_ok (P ("\"capabilities\":{}"), "empty capabilities object");
  ok (c && c->process->capabilities
      && c->process->capabilities->bounding_len == 0
      && c->process->capabilities->ambient_len == 0,
      "empty capabilities: present, every set empty");
  rt_config_free (c);

  c = parse_ok (L ("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\","
                   "\"major\":-9223372036854775808,\"minor\":0,"
                   "\"fileMode\":4095}]"), "int64 minimum, fileMode 07777");
  ok (c && c->devices[0].major == INT64_MIN
      && c->devices[0].file_mode == 07777, "int64 minimum round-trips");
  rt_config_free (c);
}

static void
test_process_parse (void)
{
  struct rt_process *p = NULL;
  struct cm_err *err = NULL;
  static const struct
  {
    const char *json, *msg;
  } pbad[] = {
    { "{\"cwd\":\"/\"}", "process.args: required" },
    { "{\"args\":[\"sh\"]}", "process.cwd: required" },
    { "{\"cwd\":\"/\",\"args\":[\"sh\"],\"user\":{\"uid\":0,\"gid\":-5}}",
      "process.user.gid: out of range (0..4294967295): -5" },
    { "{\"cwd\":\"/\",\"args\":[\"sh\"],\"env\":[\"A=1\",null]}",
      "process.env[1]: expected string" },
    { "[\"sh\"]", "process.json: expected object" },
    { "{\"cwd\":", "process.json: invalid JSON: " },
  };
  const char *js = "{\"cwd\":\"/tmp\",\"args\":[\"id\"],\"terminal\":true,"
                   "\"consoleSize\":{\"height\":3,\"width\":4}}";

  ok (oci_process_parse (js, strlen (js), &p, &err) == 0 && p
      && p->terminal && p->console_height == 3 && p->console_width == 4
      && p->capabilities == NULL, "process.json: bare object parses");
  rt_process_free (p);
  for (size_t i = 0; i < ARRAY_SIZE (pbad); i++)
    {
      const char *m = pbad[i].msg;
      bool prefix = m[strlen (m) - 1] == ' ';
      p = NULL;
      ok (oci_process_parse (pbad[i].json, strlen (pbad[i].json), &p, &err) < 0
          && p == NULL && err, "process.json rejected: %s", m);
      ok (err && (prefix ? strncmp (err->msg, m, strlen (m)) == 0
                         : strcmp (err->msg, m) == 0),
          "process.json message '%s'", m);
      if (err && (prefix ? strncmp (err->msg, m, strlen (m)) != 0
                         : strcmp (err->msg, m) != 0))
        printf ("#   got '%s'\n", err->msg);
      cm_err_free (&err);
    }
}

static void
test_load_errors (void)
{
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  char dir[] = "/tmp/test_spec.XXXXXX", path[64];
  FILE *f;

  ok (oci_spec_load ("tests/fixtures/spec/does-not-exist.json", &c, &err) < 0
      && err && err->errno_ == ENOENT
      && strstr (err->msg, "does-not-exist.json") != NULL,
      "load: missing file names the path");
  cm_err_free (&err);

  if (mkdtemp (dir) == NULL)
    {
      skip ("mkdtemp: %s", strerror (errno));
      return;
    }
  snprintf (path, sizeof path, "%s/config.json", dir);
  f = fopen (path, "w");
  fputs ("{\"ociVersion\":\"1.0.0\",\"process\":{\"cwd\":\"/\"}}", f);
  fclose (f);
  ok (oci_spec_load (path, &c, &err) < 0 && err
      && cm_startswith (err->msg, path)
      && strstr (err->msg, ": process.args: required") != NULL,
      "load: path errors are prefixed with the file");
  if (err && getenv ("TEST_VERBOSE"))
    printf ("#   got '%s'\n", err->msg);
  cm_err_free (&err);
  f = fopen (path, "w");
  fputs ("{oops", f);
  fclose (f);
  ok (oci_spec_load (path, &c, &err) < 0 && err
      && cm_startswith (err->msg, path)
      && strstr (err->msg, ": invalid JSON: ") != NULL,
      "load: invalid JSON names the file");
  if (err && getenv ("TEST_VERBOSE"))
    printf ("#   got '%s'\n", err->msg);
  cm_err_free (&err);
  unlink (path);
  rmdir (dir);
}

int
main (void)
{
  test_podman ();
  test_containerd ();
  test_process_samples ();
  test_full ();
  test_bad ();
  test_edges ();
  test_process_parse ();
  test_load_errors ();
  return tap_done ();
}
