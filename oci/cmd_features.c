/* features: what this runtime implements, as runtime-spec features.json
 * (https://github.com/opencontainers/runtime-spec/blob/main/features.md).
 *
 * Lists come from the tables validation itself uses (mount options,
 * namespaces, seccomp actions/operators/flags: runtime/runtime.h
 * rt_feature_*), from libcap and libseccomp (capabilities up to the
 * kernel's cap_last_cap, architectures libseccomp resolves) and from the
 * kernel (seccomp flags it accepts: rt_kfeat), so the output cannot claim more than
 * `create` accepts. */
#include <ctype.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "runtime/runtime.h"
#include "state.h"

#define S(g, s) yajl_gen_string ((g), (const unsigned char *) (s), strlen (s))

/* The keys of config.json "hooks" (oci/spec.c hook_keys). */
static const char *const hook_names[] = { "prestart",        "createRuntime",
                                          "createContainer", "startContainer",
                                          "poststart",       "poststop" };
_Static_assert (ARRAY_SIZE (hook_names) == RT_HOOK_KINDS,
                "features: hook list out of step with RT_HOOK_KINDS");

/* sandlock-oci's own config annotations (runtime/landlock.c; documented in
 * docs/oci-mapping.md), each with a one-line description as its value. */
static const char *const sandlock_annotations[][2] = {
  { "run.oci.sandlock.degrade", "protections to enforce only when the kernel "
    "has them: fs fs-refer fs-truncate fs-ioctl-dev net-tcp scope-signal "
    "scope-abstract-unix" },
  { "run.oci.sandlock.disable", "protections never to enforce (same names, "
    "or seccomp for the default blocklist)" },
  { "run.oci.sandlock.fs_readable", "container paths given a Landlock "
    "read+execute rule" },
  { "run.oci.sandlock.fs_writable", "container paths given a Landlock write "
    "rule" },
  { "run.oci.sandlock.fs_denied", "container paths denied (grants below are "
    "dropped)" },
  { "run.oci.sandlock.net_allow_bind", "TCP ports and ranges bind(2) may use "
    "(Landlock)" },
  { "run.oci.sandlock.net_allow_connect", "TCP ports and ranges connect(2) "
    "may reach (Landlock)" },
  { "run.oci.sandlock.scope", "namespace (default: IPC scopes only where "
    "the pid/network namespace is shared beyond the pod) or container" },
  { "run.oci.sandlock.cow.on_exit", "what becomes of the cow mounts' "
    "branches after exit 0: commit (default), abort, keep or defer" },
  { "run.oci.sandlock.cow.on_error", "the same after a failure: abort "
    "(default), commit, keep or defer" },
  { "run.oci.sandlock.cow.storage", "directory the cow branches are kept "
    "in (default: under the state root)" },
  { "run.oci.sandlock.cow.rootfs_lower", "read-only lower of an overlay "
    "root with an upper of the container's own (run --image, bundle --cow)" },
  { "run.oci.sandlock.cow.max_disk", "hard limit on what each cow layer "
    "may hold (bytes, or k/m/g/t): the write that crosses it fails with "
    "ENOSPC (a tmpfs upper; rootful only)" },
};

/* The runtime's mount options and oci/'s own "cow" (docs/cow.md). */
static const char *
mount_option (size_t i)
{
  const char *o = rt_feature_mount_option (i);
  if (o == NULL && (i == 0 || rt_feature_mount_option (i - 1) != NULL))
    return "cow";
  return o;
}

/* Every SCMP_ARCH_* this libseccomp header defines; filtered at run time by
 * what the linked libseccomp resolves (seccomp.c add_arches does the same
 * lower-case lookup). */
static const char *const arch_names[] = {
  "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",    "SCMP_ARCH_X32",
  "SCMP_ARCH_ARM",     "SCMP_ARCH_AARCH64",   "SCMP_ARCH_MIPS",
  "SCMP_ARCH_MIPS64",  "SCMP_ARCH_MIPS64N32", "SCMP_ARCH_MIPSEL",
  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
  "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",   "SCMP_ARCH_S390",
  "SCMP_ARCH_S390X",   "SCMP_ARCH_PARISC",    "SCMP_ARCH_PARISC64",
  "SCMP_ARCH_RISCV64", "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K",
  "SCMP_ARCH_SH",      "SCMP_ARCH_SHEB",
};

static bool
arch_known (const char *name)
{
  char low[32];
  size_t k = 0;
  for (const char *p = name + strlen ("SCMP_ARCH_"); *p && k < sizeof low - 1;
       p++)
    low[k++] = (char) tolower ((unsigned char) *p);
  low[k] = '\0';
  return seccomp_arch_resolve_name (low) != 0;
}

static int
strp_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A sorted JSON array from a NULL-terminated getter. */
static void
gen_sorted (yajl_gen g, const char *key, const char *(*get) (size_t))
{
  size_t n = 0;
  const char **v;
  while (get (n))
    n++;
  v = xcalloc (n ? n : 1, sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = get (i);
  qsort (v, n, sizeof *v, strp_cmp);
  S (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp (v[i], v[i - 1]) != 0)
      S (g, v[i]);
  yajl_gen_array_close (g);
  free (v);
}

static void
gen_bool_obj (yajl_gen g, const char *key, bool enabled)
{
  S (g, key);
  yajl_gen_map_open (g);
  S (g, "enabled");
  yajl_gen_bool (g, enabled);
  yajl_gen_map_close (g);
}

static void
gen_capabilities (yajl_gen g)
{
  _cleanup_free_ char *s = NULL;
  struct cm_err *e = NULL;
  int last = CAP_LAST_CAP;

  if (cm_read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &s,
                       NULL, &e) == 0)
    last = atoi (s);
  cm_err_free (&e);
  S (g, "capabilities");
  yajl_gen_array_open (g);
  for (int c = 0; c <= last; c++)
    {
      char *n = cap_to_name ((cap_value_t) c);
      /* libcap names capabilities it does not know by number: skip them,
       * create would refuse them too (cap_from_name). */
      if (n && !isdigit ((unsigned char) n[0]))
        {
          char up[64];
          size_t k = 0;
          for (const char *p = n; *p && k < sizeof up - 1; p++)
            up[k++] = (char) toupper ((unsigned char) *p);
          up[k] = '\0';
          S (g, up);
        }
      cap_free (n);
    }
  yajl_gen_array_close (g);
}

static void
gen_seccomp (yajl_gen g)
{
  unsigned flag = 0;
  const struct rt_kfeat *k = rt_kfeat (RT_KF_SECCOMP);
  bool enabled = k->seccomp_filter;

  S (g, "seccomp");
  yajl_gen_map_open (g);
  S (g, "enabled");
  yajl_gen_bool (g, enabled);
  gen_sorted (g, "actions", rt_feature_seccomp_action);
  gen_sorted (g, "operators", rt_feature_seccomp_operator);
  S (g, "archs");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < ARRAY_SIZE (arch_names); i++)
    if (arch_known (arch_names[i]))
      S (g, arch_names[i]);
  yajl_gen_array_close (g);
  S (g, "knownFlags");
  yajl_gen_array_open (g);
  for (size_t i = 0; rt_feature_seccomp_flag (i, &flag); i++)
    S (g, rt_feature_seccomp_flag (i, &flag));
  yajl_gen_array_close (g);
  S (g, "supportedFlags");
  yajl_gen_array_open (g);
  for (size_t i = 0; rt_feature_seccomp_flag (i, &flag); i++)
    if ((k->seccomp_flags & flag) == flag)
      S (g, rt_feature_seccomp_flag (i, &flag));
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static void
gen_linux (yajl_gen g)
{
  S (g, "linux");
  yajl_gen_map_open (g);
  gen_sorted (g, "namespaces", rt_feature_namespace);
  gen_capabilities (g);
  S (g, "cgroup");
  yajl_gen_map_open (g);
  S (g, "v1");
  yajl_gen_bool (g, 1);
  S (g, "v2");
  yajl_gen_bool (g, 1);
  /* --systemd-cgroup maps the path but never talks to systemd. */
  S (g, "systemd");
  yajl_gen_bool (g, 0);
  S (g, "systemdUser");
  yajl_gen_bool (g, 0);
  /* linux.resources.rdma goes to rdma.max (runtime/cgroup-limits.c). */
  S (g, "rdma");
  yajl_gen_bool (g, 1);
  yajl_gen_map_close (g);
  gen_seccomp (g);
  gen_bool_obj (g, "apparmor", false);
  gen_bool_obj (g, "selinux", false);
  gen_bool_obj (g, "intelRdt", false);
  S (g, "mountExtensions");
  yajl_gen_map_open (g);
  gen_bool_obj (g, "idmap", false);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

static void
gen_annotations (yajl_gen g)
{
  const struct scmp_version *v = seccomp_version ();
  char ver[64];

  snprintf (ver, sizeof ver, "%u.%u.%u", v->major, v->minor, v->micro);
  S (g, "annotations");
  yajl_gen_map_open (g);
  S (g, "io.github.seccomp.libseccomp.version");
  S (g, ver);
  {
    /* What restricts device nodes here (docs/security.md). */
    _cleanup_free_ char *dev = rt_cgroup_devices_describe ();
    S (g, "org.sandlock-oci.devices");
    S (g, dev);
  }
  for (size_t i = 0; i < ARRAY_SIZE (sandlock_annotations); i++)
    {
      S (g, sandlock_annotations[i][0]);
      S (g, sandlock_annotations[i][1]);
    }
  yajl_gen_map_close (g);
  /* They can widen or switch off confinement: a caller that filters
   * annotations (CRI) should treat them as privileged. */
  S (g, "potentiallyUnsafeConfigAnnotations");
  yajl_gen_array_open (g);
  S (g, "run.oci.sandlock.");
  yajl_gen_array_close (g);
}

static int
cmd_features (struct oci_globals *gl, int argc, char **argv,
              struct cm_err **err)
{
  yajl_gen g;
  const unsigned char *buf;
  size_t len;

  if (argc != 1)
    return cm_err_set (err, 0, "features: usage: sandlock-oci features");
  g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "    ");
  yajl_gen_map_open (g);
  S (g, "ociVersionMin");
  S (g, "1.0.0");
  S (g, "ociVersionMax");
  S (g, "1.2.0");
  S (g, "hooks");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < ARRAY_SIZE (hook_names); i++)
    S (g, hook_names[i]);
  yajl_gen_array_close (g);
  gen_sorted (g, "mountOptions", mount_option);
  gen_linux (g);
  gen_annotations (g);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  fwrite (buf, 1, len, stdout);
  yajl_gen_free (g);
  return 0;
}
OCI_COMMAND (features_command, "features",
             "print the features this runtime implements (features.json)",
             "usage: sandlock-oci features\n\n"
             "Prints runtime-spec features.json: supported OCI versions,\n"
             "hooks, mount options, namespaces, capabilities, cgroup and\n"
             "seccomp support, and sandlock-oci's own annotations.\n",
             cmd_features)
