/* The default config.json, like `runc spec`: the namespaces, mounts,
 * masked/readonly paths and capabilities a container gets unless it asks for
 * something else.  Generated with yajl_gen so values are always escaped. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "spec_default.h"

#define S(g, s) yajl_gen_string ((g), (const unsigned char *) (s), strlen (s))

static void
strv (yajl_gen g, const char *key, const char *const *v)
{
  S (g, key);
  yajl_gen_array_open (g);
  for (; *v; v++)
    S (g, *v);
  yajl_gen_array_close (g);
}

static void
mount (yajl_gen g, const char *dest, const char *type, const char *src,
       const char *const *opts)
{
  yajl_gen_map_open (g);
  S (g, "destination");
  S (g, dest);
  S (g, "type");
  S (g, type);
  S (g, "source");
  S (g, src);
  strv (g, "options", opts);
  yajl_gen_map_close (g);
}

/* What the namespace-less view draws of the defaults: /proc, /dev (its
 * default nodes) and /dev/shm, with the options it honours. */
static void
gen_mounts_nsless (yajl_gen g)
{
  static const char *const proc_o[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const dev_o[] = { "nosuid", NULL };
  S (g, "mounts");
  yajl_gen_array_open (g);
  mount (g, "/proc", "proc", "proc", proc_o);
  mount (g, "/dev", "tmpfs", "tmpfs", dev_o);
  mount (g, "/dev/shm", "tmpfs", "shm", proc_o);
  yajl_gen_array_close (g);
}

static void
gen_mounts (yajl_gen g, bool rootless)
{
  static const char *const proc_o[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const dev_o[]
      = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_o[] = { "nosuid", "noexec", "newinstance",
                                       "ptmxmode=0666", "mode=0620", "gid=5",
                                       NULL };
  static const char *const pts_rl_o[] = { "nosuid", "noexec", "newinstance",
                                          "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm_o[] = { "nosuid", "noexec", "nodev",
                                       "mode=1777", "size=65536k", NULL };
  static const char *const sys_o[]
      = { "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const sys_rl_o[]
      = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cg_o[]
      = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

  S (g, "mounts");
  yajl_gen_array_open (g);
  mount (g, "/proc", "proc", "proc", proc_o);
  mount (g, "/dev", "tmpfs", "tmpfs", dev_o);
  mount (g, "/dev/pts", "devpts", "devpts", rootless ? pts_rl_o : pts_o);
  mount (g, "/dev/shm", "tmpfs", "shm", shm_o);
  mount (g, "/dev/mqueue", "mqueue", "mqueue", proc_o);
  if (rootless)
    mount (g, "/sys", "none", "/sys", sys_rl_o);
  else
    {
      mount (g, "/sys", "sysfs", "sysfs", sys_o);
      mount (g, "/sys/fs/cgroup", "cgroup", "cgroup", cg_o);
    }
  yajl_gen_array_close (g);
}

static const char *const default_caps[]
    = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

static void
gen_process (yajl_gen g, const struct oci_default_opts *o)
{
  static const char *const def_args[] = { "sh", NULL };
  static const char *const def_env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "TERM=xterm", NULL };
  static const char *const sets[]
      = { "bounding", "effective", "permitted", NULL };

  S (g, "process");
  yajl_gen_map_open (g);
  S (g, "terminal");
  yajl_gen_bool (g, o->terminal);
  S (g, "user");
  yajl_gen_map_open (g);
  S (g, "uid");
  yajl_gen_integer (g, o->uid);
  S (g, "gid");
  yajl_gen_integer (g, o->gid);
  if (o->additional_gids_len)
    {
      S (g, "additionalGids");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < o->additional_gids_len; i++)
        yajl_gen_integer (g, o->additional_gids[i]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
  strv (g, "args", o->args ? (const char *const *) o->args : def_args);
  strv (g, "env", o->env ? (const char *const *) o->env : def_env);
  S (g, "cwd");
  S (g, o->cwd ? o->cwd : "/");
  S (g, "capabilities");
  yajl_gen_map_open (g);
  for (const char *const *s = sets; *s; s++)
    strv (g, *s, default_caps);
  yajl_gen_map_close (g);
  S (g, "rlimits");
  yajl_gen_array_open (g);
  yajl_gen_map_open (g);
  S (g, "type");
  S (g, "RLIMIT_NOFILE");
  S (g, "hard");
  yajl_gen_integer (g, 1024);
  S (g, "soft");
  yajl_gen_integer (g, 1024);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
  S (g, "noNewPrivileges");
  yajl_gen_bool (g, 1);
  yajl_gen_map_close (g);
}

static void
idmap (yajl_gen g, const char *key, unsigned host)
{
  S (g, key);
  yajl_gen_array_open (g);
  yajl_gen_map_open (g);
  S (g, "containerID");
  yajl_gen_integer (g, 0);
  S (g, "hostID");
  yajl_gen_integer (g, host);
  S (g, "size");
  yajl_gen_integer (g, 1);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
}

static void
gen_linux (yajl_gen g, const struct oci_default_opts *o)
{
  static const char *const ns[]
      = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
  static const char *const masked[]
      = { "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
          "/proc/sched_debug", "/sys/firmware", "/proc/scsi", NULL };
  static const char *const ro[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
          "/proc/sysrq-trigger", NULL };

  S (g, "linux");
  yajl_gen_map_open (g);
  if (o->rootless && !o->nsless)
    {
      idmap (g, "uidMappings", (unsigned) getuid ());
      idmap (g, "gidMappings", (unsigned) getgid ());
    }
  S (g, "namespaces");
  yajl_gen_array_open (g);
  for (const char *const *n = ns; *n && !o->nsless; n++)
    {
      if (o->rootless && strcmp (*n, "network") == 0)
        continue;
      yajl_gen_map_open (g);
      S (g, "type");
      S (g, *n);
      yajl_gen_map_close (g);
    }
  if (o->rootless && !o->nsless)
    {
      yajl_gen_map_open (g);
      S (g, "type");
      S (g, "user");
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  strv (g, "maskedPaths", masked);
  strv (g, "readonlyPaths", ro);
  yajl_gen_map_close (g);
}

char *
oci_default_config_json (const struct oci_default_opts *o)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;
  char *out;

  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "\t");
  yajl_gen_map_open (g);
  S (g, "ociVersion");
  S (g, "1.2.0");
  gen_process (g, o);
  S (g, "root");
  yajl_gen_map_open (g);
  S (g, "path");
  S (g, o->root_path ? o->root_path : "rootfs");
  S (g, "readonly");
  yajl_gen_bool (g, o->root_readonly);
  yajl_gen_map_close (g);
  S (g, "hostname");
  S (g, o->hostname ? o->hostname : "sandlock");
  if (o->nsless)
    gen_mounts_nsless (g);
  else
    gen_mounts (g, o->rootless);
  if (o->annotations_len)
    {
      S (g, "annotations");
      yajl_gen_map_open (g);
      for (size_t i = 0; i < o->annotations_len; i++)
        {
          S (g, o->annotations[i].key);
          S (g, o->annotations[i].value);
        }
      yajl_gen_map_close (g);
    }
  gen_linux (g, o);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  out = xmalloc (len + 2);
  memcpy (out, buf, len);
  out[len] = '\n';
  out[len + 1] = '\0';
  yajl_gen_free (g);
  return out;
}
