/* The runtime's own configuration file: system-wide defaults for the
 * run.oci.sandlock.* choices, for engines that cannot pass per-container
 * annotations or global flags (docs/security.md "Runtime defaults").
 *
 *   { "disable": ["seccomp"], "degrade": ["fs-truncate"],
 *     "lockAnnotations": true }
 *
 * Read from the runtime's environment and the host only, never from a
 * bundle: a container cannot change its own confinement. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "common/util.h"
#include "runtime/runtime.h"
#include "sysconfig.h"

#define SYSCONFIG_MAX_BYTES (64 * 1024)

/* Only root or the runtime's own user may decide its defaults. */
static int
read_trusted (const char *path, char **buf, struct cm_err **err)
{
  _cleanup_fd_ int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  size_t len;
  if (fd < 0)
    return cm_err_set (err, errno, "config file `%s`", path);
  if (fstat (fd, &st) < 0)
    return cm_err_set (err, errno, "config file `%s`", path);
  if (!S_ISREG (st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid ())
      || (st.st_mode & 022))
    return cm_err_set (err, EPERM, "config file `%s`: must be a regular "
                       "file owned by root (or this user) and writable "
                       "only by its owner", path);
  if (st.st_size > SYSCONFIG_MAX_BYTES)
    return cm_err_set (err, EFBIG, "config file `%s`: larger than %d bytes",
                       path, SYSCONFIG_MAX_BYTES);
  len = (size_t) st.st_size;
  *buf = xmalloc (len + 1);
  if (cm_read_all (fd, *buf, len) != (ssize_t) len)
    return cm_err_set (err, errno, "config file `%s`: read", path);
  (*buf)[len] = '\0';
  return 0;
}

/* "key": ["a", "b"] into "a,b". */
static int
join_list (const char *path, const char *key, yajl_val v, char **out,
           struct cm_err **err)
{
  _cleanup_free_ char *s = xstrdup ("");
  if (!YAJL_IS_ARRAY (v))
    return cm_err_set (err, 0, "config file `%s`: %s: expected an array of "
                       "protection names", path, key);
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      yajl_val e = v->u.array.values[i];
      if (!YAJL_IS_STRING (e))
        return cm_err_set (err, 0, "config file `%s`: %s[%zu]: expected a "
                           "string", path, key, i);
      char *n = xasprintf ("%s%s%s", s, i ? "," : "", e->u.string);
      free (s);
      s = n;
    }
  *out = cm_steal_ptr (&s);
  return 0;
}

static int
apply_lock (const char *path, yajl_val v, struct cm_err **err)
{
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return cm_err_set (err, 0, "config file `%s`: lockAnnotations: expected "
                       "true or false", path);
  if (YAJL_IS_TRUE (v))
    {
      _cleanup_free_ char *o = xasprintf ("config file `%s`", path);
      rt_confine_lock_annotations (o);
    }
  return 0;
}

static int
apply (const char *path, yajl_val root, struct cm_err **err)
{
  if (!YAJL_IS_OBJECT (root))
    return cm_err_set (err, 0, "config file `%s`: expected a JSON object",
                       path);
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *key = root->u.object.keys[i];
      bool disable = strcmp (key, "disable") == 0;
      _cleanup_free_ char *list = NULL, *origin = NULL;
      if (strcmp (key, "lockAnnotations") == 0)
        {
          if (apply_lock (path, root->u.object.values[i], err) < 0)
            return -1;
          continue;
        }
      if (!disable && strcmp (key, "degrade") != 0)
        return cm_err_set (err, 0, "config file `%s`: unknown key \"%s\" "
                           "(known: disable, degrade, lockAnnotations)",
                           path, key);
      if (join_list (path, key, root->u.object.values[i], &list, err) < 0)
        return -1;
      origin = xasprintf ("config file `%s`: %s", path, key);
      if (rt_confine_set_default (disable, list, origin, 1, err) < 0)
        return -1;
    }
  return 0;
}

int
oci_sysconfig_load (const char *path, bool required, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  char ebuf[256] = "";
  if (!required && access (path, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (read_trusted (path, &buf, err) < 0)
    return -1;
  yajl_val root = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  if (root == NULL)
    return cm_err_set (err, 0, "config file `%s`: not valid JSON: %s", path,
                       ebuf);
  int ret = apply (path, root, err);
  yajl_tree_free (root);
  return ret;
}

char *
oci_sysconfig_path (const char *argv0, bool *required)
{
  const char *dir = getenv ("SANDLOCK_OCI_CONFIG_DIR");
  const char *base = strrchr (argv0, '/');
  if (dir == NULL || *dir == '\0')
    dir = "/etc/sandlock-oci";
  base = base ? base + 1 : argv0;
  /* Installed as sandlock-oci-NAME (a link): the engine's runtime entry
   * for that name uses DIR/NAME.json, which must exist. */
  *required = strncmp (base, "sandlock-oci-", 13) == 0 && base[13];
  if (*required)
    return xasprintf ("%s/%s.json", dir, base + 13);
  return xasprintf ("%s/config.json", dir);
}

int
oci_sysconfig_apply (const char *argv0, const struct oci_sysconfig_flags *f,
                     struct cm_err **err)
{
  bool required = f->config != NULL;
  _cleanup_free_ char *path
      = f->config ? xstrdup (f->config) : oci_sysconfig_path (argv0, &required);
  if (oci_sysconfig_load (path, required, err) < 0)
    return -1;
  if (f->disable && rt_confine_set_default (true, f->disable,
                                            "--sandlock-disable", 2, err) < 0)
    return -1;
  if (f->degrade && rt_confine_set_default (false, f->degrade,
                                            "--sandlock-degrade", 2, err) < 0)
    return -1;
  return 0;
}
