/* runtime/landlock.c, seccomp.c, caps.c: config.json -> Landlock rule list
 * at every ABI, annotation parsing and its errors, seccomp translation and
 * its errors, capability names.  The last checks fork and apply the
 * child-side functions for real (Landlock on "/", the default seccomp
 * filter) and look at the errno the kernel returns.  Runs from the repo
 * root. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/caps.h"
#include "runtime/confine.h"
#include "runtime/landlock.h"
#include "runtime/seccomp.h"

/* A config like `sandlock-oci spec` writes, with |extra| spliced in at the
 * top level (e.g. an annotations object). */
static struct rt_config *
cfg (const char *extra, const char *linux_extra)
{
  char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\","
      "\"readonly\":true},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\","
      "\"user\":{\"uid\":0,\"gid\":0},\"capabilities\":{\"bounding\":"
      "[\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"],\"permitted\":"
      "[\"CAP_KILL\"]}},"
      "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"},"
      "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"options\":[\"nosuid\","
      "\"mode=755\"]},{\"destination\":\"/dev/pts\",\"type\":\"devpts\"},"
      "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"options\":[\"ro\"]},"
      "{\"destination\":\"/data\",\"type\":\"tmpfs\",\"options\":[\"rw\"]},"
      "{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"options\":"
      "[\"bind\",\"ro\"]}]%s%s,\"linux\":{\"namespaces\":[{\"type\":"
      "\"mount\"}]%s%s}}",
      extra ? "," : "", extra ? extra : "", linux_extra ? "," : "",
      linux_extra ? linux_extra : "");
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
ann (const char *annotations)
{
  char *a = xasprintf ("\"annotations\":{%s}", annotations);
  struct rt_config *c = cfg (a, NULL);
  free (a);
  return c;
}

/* Builds at |abi|; returns the error text (malloc'd) or NULL. */
static char *
build (struct rt_config *c, int abi, struct rt_ll_policy *p)
{
  struct cm_err *err = NULL;
  memset (p, 0, sizeof *p);
  if (rt_ll_policy_build (c, abi, p, &err) < 0)
    {
      char *m = xstrdup (err->msg);
      cm_err_free (&err);
      return m;
    }
  return NULL;
}

static bool
contains (const char *hay, const char *needle)
{
  return hay && strstr (hay, needle);
}

static uint64_t
access_of (const struct rt_ll_policy *p, const char *path)
{
  const struct rt_ll_rule *r = rt_ll_policy_find (p, path);
  return r ? r->access : 0;
}

static void
test_default_rules (void)
{
  struct rt_config *c = cfg (NULL, NULL);
  struct rt_ll_policy p;
  char *e = build (c, 7, &p);
  ok (e == NULL, "ABI 7: default config builds (%s)", e ? e : "");
  uint64_t all = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE
                 | RT_LL_FS_IOCTL_DEV;
  ok (p.handled_fs == all, "ABI 7 handles every fs right");
  ok (p.handled_net == 0, "no net_allow_* annotation: network not handled");
  ok (p.state[RT_LL_P_NET_TCP] == RT_LL_NOT_REQUESTED, "net-tcp not requested");
  ok (p.scoped == (RT_LL_SCOPE_SIGNAL | RT_LL_SCOPE_ABSTRACT_UNIX),
      "signal and abstract-unix scoping on by default");
  ok (access_of (&p, "/") == RT_LL_FS_READ, "read-only root: / is RX");
  ok (access_of (&p, "/proc") == RT_LL_FS_WRITE, "/proc rw by its mount");
  ok (access_of (&p, "/sys") == RT_LL_FS_READ, "/sys ro by its mount");
  ok (access_of (&p, "/data") == RT_LL_FS_WRITE, "/data rw mount is writable");
  ok (access_of (&p, "/etc/hosts") == RT_LL_FS_READ, "ro bind is read-only");
  ok (access_of (&p, "/dev") == RT_LL_FS_WRITE,
      "/dev tmpfs writable but without IOCTL_DEV");
  ok ((access_of (&p, "/dev/pts") & RT_LL_FS_IOCTL_DEV)
          && (access_of (&p, "/dev/tty") & RT_LL_FS_IOCTL_DEV)
          && (access_of (&p, "/dev/ptmx") & RT_LL_FS_IOCTL_DEV)
          && (access_of (&p, "/dev/console") & RT_LL_FS_IOCTL_DEV),
      "ttys and ptys get IOCTL_DEV");
  ok (access_of (&p, "/dev/null") == RT_LL_FS_DEVICE,
      "/dev/null read+write, no ioctl");
  ok (p.masks_len == 0, "no masks without fs_denied");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);

  c = cfg (NULL, "\"devices\":[{\"path\":\"/dev/net/tun\",\"type\":\"c\","
           "\"major\":10,\"minor\":200},{\"path\":\"/dev/zero\",\"type\":"
           "\"c\",\"major\":1,\"minor\":5}]");
  e = build (c, 7, &p);
  ok (e == NULL && (access_of (&p, "/dev/net/tun") & RT_LL_FS_IOCTL_DEV),
      "an explicitly configured device gets IOCTL_DEV");
  ok (!(access_of (&p, "/dev/zero") & RT_LL_FS_IOCTL_DEV),
      "a standard node listed in linux.devices does not");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);
}

static void
test_abis (void)
{
  struct rt_config *c = cfg (NULL, NULL);
  struct rt_ll_policy p;
  char *e;

  e = build (c, 0, &p);
  ok (contains (e, "\"fs\"") && contains (e, "no Landlock")
          && contains (e, "run.oci.sandlock.degrade=fs"),
      "ABI 0: strict fs fails naming the degrade annotation: %s", e);
  free (e);
  e = build (c, 1, &p);
  ok (contains (e, "\"fs-refer\" needs Landlock ABI 2 but this kernel has "
                   "ABI 1"),
      "ABI 1: strict fs-refer fails: %s", e);
  free (e);
  e = build (c, 3, &p);
  ok (contains (e, "\"fs-ioctl-dev\" needs Landlock ABI 5"),
      "ABI 3: strict fs-ioctl-dev fails: %s", e);
  free (e);
  e = build (c, 5, &p);
  ok (contains (e, "\"scope-signal\" needs Landlock ABI 6")
          && contains (e, "degrade=scope-signal"),
      "ABI 5: strict scope-signal fails: %s", e);
  free (e);
  e = build (c, 6, &p);
  ok (e == NULL, "ABI 6 builds");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.degrade\":\"fs-refer, fs-truncate,"
           "fs-ioctl-dev,scope-signal,scope-abstract-unix\"");
  static const uint64_t want[8] = {
    [1] = RT_LL_FS_V1,
    [2] = RT_LL_FS_V1 | RT_LL_FS_REFER,
    [3] = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE,
    [4] = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE,
    [5] = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE
          | RT_LL_FS_IOCTL_DEV,
    [6] = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE
          | RT_LL_FS_IOCTL_DEV,
    [7] = RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE
          | RT_LL_FS_IOCTL_DEV,
  };
  for (int abi = 1; abi <= 7; abi++)
    {
      e = build (c, abi, &p);
      ok (e == NULL && p.handled_fs == want[abi]
              && p.scoped == (abi >= 6 ? 3u : 0u),
          "degradable policy at ABI %d handles exactly that ABI's rights",
          abi);
      bool masked = true;
      for (size_t i = 0; i < p.rules_len; i++)
        masked = masked && (p.rules[i].access & ~p.handled_fs) == 0;
      ok (masked, "ABI %d: every rule within the handled set", abi);
      if (abi == 1)
        ok (p.state[RT_LL_P_FS_REFER] == RT_LL_DEGRADED, "fs-refer degraded");
      rt_ll_policy_clear (&p);
      free (e);
    }
  rt_config_free (c);
}

static void
expect_err (const char *annotations, const char *needle, const char *what)
{
  struct rt_config *c = ann (annotations);
  struct rt_ll_policy p;
  char *e = c ? build (c, 7, &p) : xstrdup ("(config did not parse)");
  ok (contains (e, needle), "%s: %s", what, e ? e : "(no error)");
  if (e == NULL)
    rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);
}

static void
test_annotation_errors (void)
{
  expect_err ("\"run.oci.sandlock.degrade\":\"fs,bogus\"",
              "annotation run.oci.sandlock.degrade: unknown protection "
              "\"bogus\"", "unknown protection name");
  expect_err ("\"run.oci.sandlock.disable\":\"fs-refer\"",
              "fs-refer cannot be disabled", "disable=fs-refer refused");
  expect_err ("\"run.oci.sandlock.degrade\":\"fs\","
              "\"run.oci.sandlock.disable\":\"fs\"",
              "named in both", "a protection both degraded and disabled");
  expect_err ("\"run.oci.sandlock.fs_readable\":\"/ok,tmp/x\"",
              "annotation run.oci.sandlock.fs_readable: \"tmp/x\" is not an "
              "absolute path", "relative fs_readable");
  expect_err ("\"run.oci.sandlock.fs_writable\":\"/a/../../etc\"",
              "annotation run.oci.sandlock.fs_writable: \"/a/../../etc\"",
              "fs_writable with ..");
  expect_err ("\"run.oci.sandlock.fs_denied\":\"/\"",
              "run.oci.sandlock.fs_denied", "fs_denied=/");
  expect_err ("\"run.oci.sandlock.net_allow_bind\":\"80x\"",
              "annotation run.oci.sandlock.net_allow_bind: \"80x\" is not a "
              "TCP port", "bad port");
  expect_err ("\"run.oci.sandlock.net_allow_connect\":\"90-80\"",
              "run.oci.sandlock.net_allow_connect: range 90-80 is backwards",
              "backwards range");
  expect_err ("\"run.oci.sandlock.net_allow_connect\":\"70000\"",
              "is not a TCP port (0-65535)", "port out of range");
}

static void
test_annotation_rules (void)
{
  struct rt_ll_policy p;
  struct rt_config *c;
  char *e;

  c = ann ("\"run.oci.sandlock.fs_readable\":\"/data\","
           "\"run.oci.sandlock.fs_writable\":\"/var//lib/./x/\"");
  e = build (c, 7, &p);
  ok (e == NULL && access_of (&p, "/data") == RT_LL_FS_READ,
      "fs_readable overrides the rw mount at the same path");
  ok (access_of (&p, "/var/lib/x") == RT_LL_FS_WRITE,
      "fs_writable adds a normalised write rule");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.fs_denied\":\"/data, /etc/secret\"");
  e = build (c, 7, &p);
  ok (e == NULL && rt_ll_policy_find (&p, "/data") == NULL,
      "fs_denied drops the grant at the denied path");
  ok (p.masks_len == 2 && strcmp (p.masks[0], "/data") == 0
          && strcmp (p.masks[1], "/etc/secret") == 0,
      "denied paths under the granted root are masked");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.fs_denied\":\"/etc/secret\"");
  c->namespaces_len = 0;
  e = build (c, 7, &p);
  ok (contains (e, "masking \"/etc/secret\" needs a mount namespace"),
      "fs_denied without a mount namespace refused: %s", e);
  c->namespaces_len = 1;
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.disable\":\"fs\"");
  e = build (c, 7, &p);
  ok (e == NULL && p.handled_fs == 0 && p.rules_len == 0,
      "disable=fs: no fs rights handled, no rules");
  ok (p.scoped == 3, "disable=fs keeps the scopes");
  ok (p.state[RT_LL_P_FS_TRUNCATE] == RT_LL_DISABLED,
      "fs refinements are disabled with fs");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.net_allow_bind\":\"80, 8000-8002,80\","
           "\"run.oci.sandlock.degrade\":\"fs-ioctl-dev,scope-signal,"
           "scope-abstract-unix\"");
  e = build (c, 7, &p);
  ok (e == NULL && p.handled_net == RT_LL_NET_BIND_TCP,
      "only bind handled when only net_allow_bind is given");
  ok (p.bind_ports_len == 4 && p.bind_ports[0] == 80
          && p.bind_ports[3] == 8002,
      "ports deduplicated and ranges expanded");
  rt_ll_policy_clear (&p);
  free (e);
  e = build (c, 3, &p);
  ok (contains (e, "\"net-tcp\" needs Landlock ABI 4"),
      "net rules on ABI 3 are strict: %s", e);
  free (e);
  rt_config_free (c);

  c = ann ("\"run.oci.sandlock.net_allow_connect\":\"\","
           "\"run.oci.sandlock.degrade\":\"net-tcp,fs-ioctl-dev,"
           "scope-signal,scope-abstract-unix\"");
  e = build (c, 7, &p);
  ok (e == NULL && p.handled_net == RT_LL_NET_CONNECT_TCP
          && p.connect_ports_len == 0,
      "empty net_allow_connect: every TCP connect denied");
  rt_ll_policy_clear (&p);
  free (e);
  e = build (c, 3, &p);
  ok (e == NULL && p.handled_net == 0
          && p.state[RT_LL_P_NET_TCP] == RT_LL_DEGRADED,
      "degrade=net-tcp on ABI 3 runs without network rules");
  rt_ll_policy_clear (&p);
  free (e);
  rt_config_free (c);
}

/* ---- seccomp ----------------------------------------------------------- */

static char *
compile (const char *seccomp_json, struct rt_sc_prog *prog)
{
  char *l = xasprintf ("\"seccomp\":%s", seccomp_json);
  struct rt_config *c = cfg (NULL, l);
  struct cm_err *err = NULL;
  char *msg = NULL;
  free (l);
  if (c == NULL)
    return xstrdup ("(config did not parse)");
  memset (prog, 0, sizeof *prog);
  if (rt_sc_compile (c, false, prog, &err) < 0)
    {
      msg = xstrdup (err->msg);
      cm_err_free (&err);
    }
  rt_config_free (c);
  return msg;
}

static void
sc_expect_err (const char *json, const char *needle, const char *what)
{
  struct rt_sc_prog prog;
  char *e = compile (json, &prog);
  ok (contains (e, needle), "%s: %s", what, e ? e : "(no error)");
  if (e == NULL)
    rt_sc_prog_clear (&prog);
  free (e);
}

static void
test_seccomp (void)
{
  struct rt_sc_prog prog;
  char *e;

  e = compile ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":"
               "[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\"],\"flags\":["
               "\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\","
               "\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],\"syscalls\":["
               "{\"names\":[\"getpid\",\"no_such_syscall_xyz\"],\"action\":"
               "\"SCMP_ACT_ERRNO\",\"errnoRet\":42},"
               "{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_KILL\","
               "\"args\":[{\"index\":0,\"value\":255,\"valueTwo\":7,\"op\":"
               "\"SCMP_CMP_MASKED_EQ\"},{\"index\":0,\"value\":99,\"op\":"
               "\"SCMP_CMP_EQ\"}]},"
               "{\"names\":[\"mkdirat\"],\"action\":\"SCMP_ACT_TRAP\",\"args\":"
               "[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_NE\"},{\"index\":"
               "2,\"value\":8,\"op\":\"SCMP_CMP_GE\"}]},"
               "{\"names\":[\"uname\"],\"action\":\"SCMP_ACT_LOG\"},"
               "{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_TRACE\"},"
               "{\"names\":[\"getuid\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
               "{\"names\":[\"getgid\"],\"action\":\"SCMP_ACT_KILL_THREAD\"},"
               "{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
               &prog);
  ok (e == NULL && prog.insns && prog.len > 10,
      "every action, op and flag translates; unknown syscall skipped (%s)",
      e ? e : "");
  ok (prog.flags == (SECCOMP_FILTER_FLAG_LOG
                     | SECCOMP_FILTER_FLAG_SPEC_ALLOW),
      "LOG+SPEC_ALLOW kept, WAIT_KILLABLE_RECV dropped without a listener");
  ok (!prog.is_default && !prog.notify, "a user profile, no notify");
  rt_sc_prog_clear (&prog);
  free (e);

  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_NOPE\"}",
                 "linux.seccomp.defaultAction: unknown action "
                 "\"SCMP_ACT_NOPE\"", "unknown default action");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}",
                 "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY",
                 "notify as default refused");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":"
                 "[\"SCMP_ARCH_PDP11\"]}",
                 "linux.seccomp.architectures[0]: unknown architecture",
                 "unknown architecture");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":"
                 "[\"SECCOMP_FILTER_FLAG_BOGUS\"]}",
                 "linux.seccomp.flags[0]: unknown flag", "unknown flag");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\"},{"
                 "\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_FOO\"}]}",
                 "linux.seccomp.syscalls[1].action: unknown action",
                 "unknown rule action");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":"
                 "[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_ABOUT\"}]}]}",
                 "linux.seccomp.syscalls[0].args[0].op: unknown operator",
                 "unknown operator");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"nonexistent_call\"],\"action\":"
                 "\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,"
                 "\"op\":\"SCMP_CMP_SOMETIMES\"}]}]}",
                 "linux.seccomp.syscalls[0].args[0].op: unknown operator",
                 "a bad operator is refused even on a skipped rule");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":["
                 "{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":2,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":3,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":4,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":5,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
                 "{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]}]}",
                 "linux.seccomp.syscalls[0].args: more than 6 comparisons",
                 "seven comparisons on different arguments");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"read\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                 "linux.seccomp.listenerPath: required",
                 "NOTIFY without listenerPath");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":"
                 "\"/nonexistent/agent.sock\",\"syscalls\":[{\"names\":"
                 "[\"read\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                 "linux.seccomp.listenerPath: connect to "
                 "`/nonexistent/agent.sock`", "listener not there");
  /* SECCOMP_RET_DATA is 16 bits: 65536 would be errno 0, a fake success. */
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
                 "\"errnoRet\":65536}]}",
                 "linux.seccomp.syscalls[0].errnoRet: 65536 is out of range "
                 "for SCMP_ACT_ERRNO (0..4094)", "errnoRet above 16 bits");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ERRNO\","
                 "\"defaultErrnoRet\":4095}",
                 "linux.seccomp.defaultErrnoRet: 4095 is out of range",
                 "defaultErrnoRet of MAX_ERRNO (libseccomp's EINVAL before)");
  sc_expect_err ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                 "\"names\":[\"read\"],\"action\":\"SCMP_ACT_TRACE\","
                 "\"errnoRet\":65536}]}",
                 "linux.seccomp.syscalls[0].errnoRet: 65536 is out of range "
                 "for SCMP_ACT_TRACE (0..65535)", "trace data above 16 bits");
  e = compile ("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":"
               "4094,\"syscalls\":[{\"names\":[\"read\"],\"action\":"
               "\"SCMP_ACT_TRACE\",\"errnoRet\":65535}]}", &prog);
  ok (e == NULL, "errno 4094 and trace data 65535 are accepted (%s)",
      e ? e : "");
  if (e == NULL)
    rt_sc_prog_clear (&prog);
  free (e);

  /* The podman sample's profile. */
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  int r = oci_spec_load ("tests/fixtures/samples/podman-config.json", &c,
                         &err);
  ok (r == 0, "podman sample parses");
  memset (&prog, 0, sizeof prog);
  if (r == 0)
    {
      r = rt_sc_compile (c, false, &prog, &err);
      ok (r == 0 && prog.len > 100 && !prog.is_default,
          "podman's seccomp profile compiles (%zu insns)", prog.len);
      ok (rt_sc_needs_early_load (&prog),
          "podman (noNewPrivileges false, no CAP_SYS_ADMIN): early load");
      rt_sc_prog_clear (&prog);
      rt_config_free (c);
    }
  if (err)
    {
      printf ("# %s\n", err->msg);
      cm_err_free (&err);
    }

  /* The default blocklist, plain and privileged. */
  c = cfg (NULL, NULL);
  r = rt_sc_compile (c, false, &prog, &err);
  ok (r == 0 && prog.is_default && prog.len > 50,
      "no linux.seccomp: the default blocklist (%zu insns)", prog.len);
  size_t plain = prog.len;
  rt_sc_prog_clear (&prog);
  r = rt_sc_compile (c, true, &prog, &err);
  ok (r == 0 && prog.insns == NULL, "disable=seccomp: no default filter");
  rt_config_free (c);
  c = cfg (NULL, NULL);
  free (c->process->capabilities->bounding[0]);
  c->process->capabilities->bounding[0] = xstrdup ("CAP_SYS_ADMIN");
  r = rt_sc_compile (c, false, &prog, &err);
  ok (r == 0 && prog.len < plain,
      "CAP_SYS_ADMIN bounded: mount API and namespace flags allowed (%zu < "
      "%zu)", prog.len, plain);
  rt_sc_prog_clear (&prog);
  rt_config_free (c);
}

/* ---- capabilities ------------------------------------------------------ */

static void
test_caps (void)
{
  struct rt_config *c = cfg (NULL, NULL);
  struct rt_caps_plan *cp = NULL;
  struct cm_err *err = NULL;
  struct rt_capabilities *k = c->process->capabilities;
  uint64_t b, e, p, i, a;
  bool noroot;

  ok (rt_caps_prepare (c->process, &cp, &err) == 0, "valid caps prepare");
  rt_caps_plan_masks (cp, &b, &e, &p, &i, &a, &noroot);
  ok (b == (1ULL << 5) && e == b && p == b && i == 0 && a == 0,
      "CAP_KILL is bit 5 in bounding/effective/permitted");
  ok (!noroot, "root with bounding == permitted needs no securebits");
  rt_caps_free (cp);

  k->bounding = xrealloc (k->bounding, 4 * sizeof *k->bounding);
  k->bounding[1] = xstrdup ("CAP_CHOWN");
  k->bounding[2] = xstrdup ("CAP_SETUID");
  k->bounding[3] = xstrdup ("CAP_FOO");
  k->bounding_len = 4;
  ok (rt_caps_prepare (c->process, &cp, &err) < 0 && err
          && strcmp (err->msg, "process.capabilities.bounding[3]: unknown "
                     "capability \"CAP_FOO\"") == 0,
      "unknown capability named with its JSON path: %s",
      err ? err->msg : "");
  cm_err_free (&err);
  free (k->bounding[3]);
  k->bounding[3] = xstrdup ("chown");
  ok (rt_caps_prepare (c->process, &cp, &err) < 0 && err
          && strstr (err->msg, "bounding[3]"),
      "a name without CAP_ is refused");
  cm_err_free (&err);
  free (k->bounding[3]);
  k->bounding_len = 3;

  /* uid 0, bounding wider than permitted: securebits. */
  for (size_t n = 0; n < k->permitted_len; n++)
    free (k->permitted[n]);
  for (size_t n = 0; n < k->effective_len; n++)
    free (k->effective[n]);
  k->permitted_len = k->effective_len = 0;
  ok (rt_caps_prepare (c->process, &cp, &err) == 0, "empty permitted ok");
  rt_caps_plan_masks (cp, &b, &e, &p, &i, &a, &noroot);
  ok (noroot && p == 0 && e == 0,
      "root without capabilities gets SECBIT_NOROOT");
  rt_caps_free (cp);

  k->effective_len = 1;
  k->effective[0] = xstrdup ("CAP_CHOWN");
  ok (rt_caps_prepare (c->process, &cp, &err) < 0 && err
          && strstr (err->msg, "process.capabilities.effective: CAP_CHOWN is "
                     "not in the permitted set"),
      "effective outside permitted refused: %s", err ? err->msg : "");
  cm_err_free (&err);
  rt_config_free (c);
}

/* ---- child side, for real ------------------------------------------------ */

/* Forks; the child runs |fn| and exits with its result. */
static int
in_child (int (*fn) (void *), void *arg)
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    _exit (fn (arg));
  int st;
  if (waitpid (pid, &st, 0) < 0)
    return -1;
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

static int
child_landlock (void *arg)
{
  const struct rt_ll_policy *p = arg;
  struct cm_err *err = NULL;
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (rt_ll_child_apply (p, &err) < 0)
    return 100;
  /* Read allowed, write to the temp dir denied by Landlock. */
  int fd = open ("/proc/self/status", O_RDONLY);
  if (fd < 0)
    return 101;
  close (fd);
  fd = open ("/tmp/sandlock-unit-landlock", O_WRONLY | O_CREAT, 0600);
  if (fd >= 0)
    return 102;
  return errno == EACCES ? 0 : 103;
}

static int
child_seccomp (void *arg)
{
  const struct rt_sc_prog *p = arg;
  struct cm_err *err = NULL;
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (rt_sc_child_load (p, "running", &err) < 0)
    return 100;
  if (syscall (SYS_bpf, 999, 0, 0) != -1 || errno != EPERM)
    return 101;
  if (syscall (SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
    return 102;
  if (syscall (SYS_unshare, CLONE_NEWUSER) != -1 || errno != EPERM)
    return 103;
  if (syscall (SYS_getpid) <= 0)
    return 104;
  syscall (SYS_getpid | 0x40000000);    /* x32: the bad-arch action */
  return 105;
}

static void
test_child (void)
{
  if (rt_ll_abi () < 6)
    skip ("Landlock ABI %d < 6 on this kernel", rt_ll_abi ());
  else
    {
      struct rt_config *c = cfg (NULL, NULL);
      struct rt_ll_policy p;
      c->root_readonly = true;
      char *e = build (c, rt_ll_abi (), &p);
      unlink ("/tmp/sandlock-unit-landlock");
      int r = in_child (child_landlock, &p);
      ok (e == NULL && r == 0,
          "real Landlock on /: reads work, a write outside the rules is "
          "EACCES (child %d)", r);
      rt_ll_policy_clear (&p);
      free (e);
      rt_config_free (c);
    }

  struct rt_config *c = cfg (NULL, NULL);
  struct rt_sc_prog prog;
  struct cm_err *err = NULL;
  if (rt_sc_compile (c, false, &prog, &err) == 0)
    {
      int r = in_child (child_seccomp, &prog);
      ok (r == 128 + SIGSYS,
          "real default filter: bpf EPERM, clone3 ENOSYS, unshare(NEWUSER) "
          "EPERM, x32 killed (child %d)", r);
      rt_sc_prog_clear (&prog);
    }
  else
    {
      ok (0, "compile default: %s", err->msg);
      cm_err_free (&err);
    }
  rt_config_free (c);
}

int
main (void)
{
  test_default_rules ();
  test_abis ();
  test_annotation_errors ();
  test_annotation_rules ();
  test_seccomp ();
  test_caps ();
  test_child ();
  char *d = rt_confine_describe_host ();
  ok (contains (d, "landlock.scope-signal:"), "describe_host lists protections");
  free (d);
  return tap_done ();
}
