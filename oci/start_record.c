/* What `start` needs of the config, recorded at create in start.json next
 * to state.json, so that start neither parses config.json again (a cost on
 * every start) nor sees a config edited after create (runc reads the config
 * at create only).  The record is a config.json of its own — ociVersion
 * (the poststart failure rule depends on it) and hooks.poststart — read
 * back with the one config parser. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "lifecycle.h"
#include "spec.h"

#define START_RECORD "start.json"

#define S(g, s) yajl_gen_string ((g), (const unsigned char *) (s), strlen (s))

static void
gen_strv (yajl_gen g, const char *key, char *const *v, size_t n)
{
  if (n == 0)
    return;
  S (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    S (g, v[i]);
  yajl_gen_array_close (g);
}

static void
gen_hook (yajl_gen g, const struct rt_hook *h)
{
  yajl_gen_map_open (g);
  S (g, "path");
  S (g, h->path);
  gen_strv (g, "args", h->args, h->args_len);
  gen_strv (g, "env", h->env, h->env_len);
  if (h->timeout_present)
    {
      S (g, "timeout");
      yajl_gen_integer (g, h->timeout);
    }
  yajl_gen_map_close (g);
}

int
oci_start_record_save (int dirfd, const struct rt_config *cfg,
                       struct cm_err **err)
{
  const struct rt_hook_list *l = &cfg->hooks[RT_HOOK_POSTSTART];
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;
  int r;

  yajl_gen_map_open (g);
  S (g, "ociVersion");
  S (g, cfg->oci_version);
  S (g, "hooks");
  yajl_gen_map_open (g);
  S (g, "poststart");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < l->len; i++)
    gen_hook (g, &l->hooks[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  r = cm_atomic_write_at (dirfd, START_RECORD, buf, len, 0600, err);
  yajl_gen_free (g);
  return r;
}

int
oci_start_record_load (int dirfd, struct rt_config **out, struct cm_err **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (cm_read_file_at (dirfd, START_RECORD, OCI_SPEC_MAX_BYTES, &buf, &len,
                       err) < 0)
    {
      if ((*err)->errno_ != ENOENT)
        return -1;
      /* A container created by a runtime that kept no record: its config
       * as created is next to it. */
      cm_err_free (err);
      if (cm_read_file_at (dirfd, "config.json", OCI_SPEC_MAX_BYTES, &buf,
                           &len, err) < 0)
        return -1;
    }
  return oci_spec_parse (buf, len, out, err);
}
