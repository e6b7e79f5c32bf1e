/* OCI and Docker schema2 manifests and indexes, platform selection, and the
 * image config document.  Schema1 is refused: it carries no digests we can
 * verify layers against. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/util.h"
#include "image/priv.h"

void
img_desc_clear (struct img_desc *d)
{
  free (d->media_type);
  free (d->digest);
  free (d->os);
  free (d->arch);
  free (d->variant);
  free (d->ref_name);
  memset (d, 0, sizeof *d);
}

void
img_manifest_free (struct img_manifest *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->n; i++)
    img_desc_clear (&m->descs[i]);
  free (m->descs);
  img_desc_clear (&m->config);
  free (m->media_type);
  free (m->artifact_type);
  free (m);
}

static char *
dup_or_null (const char *s)
{
  return s ? xstrdup (s) : NULL;
}

static int
parse_desc (yajl_val v, const char *what, const char *path,
            struct img_desc *d, struct cm_err **err)
{
  yajl_val size = cm_json_get (v, "size");
  yajl_val plat = cm_json_get (v, "platform");
  const char *digest = cm_json_str (v, "digest");

  if (v == NULL || !YAJL_IS_OBJECT (v))
    return cm_err_set (err, 0, "%s: %s: expected an object", what, path);
  if (!img_digest_valid (digest))
    return cm_err_set (err, 0, "%s: %s.digest: missing or not a sha256 digest (%s)",
                       what, path, digest ? digest : "absent");
  if (size == NULL || !YAJL_IS_INTEGER (size) || YAJL_GET_INTEGER (size) < 0)
    return cm_err_set (err, 0, "%s: %s.size: expected a non-negative integer",
                       what, path);
  d->digest = xstrdup (digest);
  d->size = (uint64_t) YAJL_GET_INTEGER (size);
  d->media_type = dup_or_null (cm_json_str (v, "mediaType"));
  if (plat)
    {
      d->os = dup_or_null (cm_json_str (plat, "os"));
      d->arch = dup_or_null (cm_json_str (plat, "architecture"));
      d->variant = dup_or_null (cm_json_str (plat, "variant"));
    }
  d->ref_name = dup_or_null (cm_json_str (cm_json_get (v, "annotations"),
                                           "org.opencontainers.image.ref.name"));
  return 0;
}

static int
parse_desc_array (yajl_val arr, const char *what, const char *key,
                  struct img_manifest *m, struct cm_err **err)
{
  if (arr == NULL || !YAJL_IS_ARRAY (arr))
    return cm_err_set (err, 0, "%s: %s: expected an array", what, key);
  m->descs = xcalloc (arr->u.array.len + 1, sizeof *m->descs);
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      char path[64];
      snprintf (path, sizeof path, "%s[%zu]", key, i);
      if (parse_desc (arr->u.array.values[i], what, path, &m->descs[i], err) < 0)
        return -1;
      m->n++;
    }
  return 0;
}

/* A Content-Type that says nothing about the document: registries serve
 * these for layouts pushed as files, and some proxies rewrite to them. */
static bool
generic_type (const char *t)
{
  return t == NULL || *t == '\0' || strcmp (t, "application/json") == 0
         || strcmp (t, "text/plain") == 0 || strcmp (t, "application/octet-stream") == 0;
}

/* The document's type: its mediaType, which must agree with what the
 * transport said; else the transport's; else its shape. */
static int
document_type (yajl_val v, const char *served, const char *what, const char **out,
               struct cm_err **err)
{
  const char *own = cm_json_str (v, "mediaType");
  yajl_val sv = cm_json_get (v, "schemaVersion");
  if (generic_type (served))
    served = NULL;
  if ((own && cm_startswith (own, MT_DOCKER_V1)) || (served && cm_startswith (served, MT_DOCKER_V1))
      || (sv && YAJL_IS_INTEGER (sv) && YAJL_GET_INTEGER (sv) == 1))
    return cm_err_set (err, 0, "%s: Docker schema1 manifests are not supported "
                       "(re-push the image with a current client)", what);
  if (own && served && strcmp (own, served) != 0)
    return cm_err_set (err, 0, "%s: the document says it is `%s` but was served or "
                       "listed as `%s`", what, own, served);
  if (own == NULL && served
      && (strcmp (served, MT_DOCKER_MANIFEST) == 0 || strcmp (served, MT_DOCKER_LIST) == 0))
    return cm_err_set (err, 0, "%s: served as `%s`, but the document has no mediaType "
                       "(a Docker manifest or list always states it)", what, served);
  *out = own ? own : served ? served
       : cm_json_get (v, "manifests") ? MT_OCI_INDEX : MT_OCI_MANIFEST;
  return 0;
}

int
img_manifest_parse (const char *buf, size_t len, const char *media_type,
                    const char *what, struct img_manifest **out,
                    struct cm_err **err)
{
  yajl_val v = NULL;
  struct img_manifest *m;
  const char *mt;
  int ret;

  if ((v = cm_json_parse (buf, len, IMG_MAX_MANIFEST, what, err)) == NULL)
    return -1;
  if (document_type (v, media_type, what, &mt, err) < 0)
    {
      yajl_tree_free (v);
      return -1;
    }
  m = xcalloc (1, sizeof *m);
  m->media_type = xstrdup (mt);
  m->artifact_type = dup_or_null (cm_json_str (v, "artifactType"));
  if (strcmp (mt, MT_OCI_INDEX) == 0 || strcmp (mt, MT_DOCKER_LIST) == 0)
    {
      m->is_index = true;
      ret = parse_desc_array (cm_json_get (v, "manifests"), what, "manifests", m, err);
    }
  else if (strcmp (mt, MT_OCI_MANIFEST) == 0 || strcmp (mt, MT_DOCKER_MANIFEST) == 0)
    {
      ret = parse_desc (cm_json_get (v, "config"), what, "config", &m->config, err);
      if (ret == 0)
        ret = parse_desc_array (cm_json_get (v, "layers"), what, "layers", m, err);
    }
  else
    ret = cm_err_set (err, 0, "%s: unsupported manifest media type `%s`", what, mt);
  yajl_tree_free (v);
  if (ret < 0)
    {
      img_manifest_free (m);
      return -1;
    }
  *out = m;
  return 0;
}

static bool
in_list (const char *s, const char *const *list)
{
  for (; *list; list++)
    if (strcmp (s, *list) == 0)
      return true;
  return false;
}

/* Layer types (image-spec media-types.md, Docker's image manifest v2.2).
 * The bytes decide the decompressor (image/decomp.c): a "+gzip" layer
 * whose bytes are zstd still unpacks; the type only has to be a layer's. */
static const char *const LAYER_TYPES[] = {
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.oci.image.layer.v1.tar+zstd",
  "application/vnd.docker.image.rootfs.diff.tar",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
  NULL,
};
static const char *const FOREIGN_TYPES[] = {
  "application/vnd.oci.image.layer.nondistributable.v1.tar",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
  "application/vnd.docker.image.rootfs.foreign.diff.tar",
  "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
  NULL,
};

int
img_manifest_check_image (const struct img_manifest *m, const char *what,
                          struct cm_err **err)
{
  const char *ct = m->config.media_type;
  if (m->artifact_type)
    return cm_err_set (err, 0, "%s: not a container image: %s", what, m->artifact_type);
  if (ct == NULL)
    return cm_err_set (err, 0, "%s: config.mediaType: missing", what);
  if (strcmp (ct, MT_OCI_CONFIG) != 0 && strcmp (ct, MT_DOCKER_CONFIG) != 0)
    return cm_err_set (err, 0, "%s: not a container image: %s", what, ct);
  for (size_t i = 0; i < m->n; i++)
    {
      const char *lt = m->descs[i].media_type;
      if (lt == NULL)
        return cm_err_set (err, 0, "%s: layers[%zu].mediaType: missing", what, i);
      if (in_list (lt, FOREIGN_TYPES))
        return cm_err_set (err, 0, "%s: layers[%zu]: foreign (non-distributable) layers "
                           "are not supported: %s", what, i, lt);
      if (!in_list (lt, LAYER_TYPES))
        return cm_err_set (err, 0, "%s: not a container image: %s (layers[%zu])", what, lt, i);
    }
  return 0;
}

const char *
img_host_platform (void)
{
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64/v8";
#elif defined(__i386__)
  return "linux/386";
#elif defined(__arm__)
  return "linux/arm/v7";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "linux/ppc64le";
#elif defined(__s390x__)
  return "linux/s390x";
#elif defined(__riscv) && __riscv_xlen == 64
  return "linux/riscv64";
#else
  return "linux/unknown";
#endif
}

/* arm64's variant is optional ("v8" is implied), as in containerd. */
static bool
variant_matches (const char *want_arch, const char *want, const char *have)
{
  if (want == NULL || *want == '\0')
    return true;
  if (have == NULL || *have == '\0')
    return strcmp (want_arch, "arm64") == 0 && strcmp (want, "v8") == 0;
  return strcmp (want, have) == 0;
}

int
img_index_select (const struct img_manifest *idx, const char *platform,
                  const char *what, const struct img_desc **out,
                  struct cm_err **err)
{
  _cleanup_free_ char *p = xstrdup (platform ? platform : img_host_platform ());
  _cleanup_free_ char *list = xstrdup ("");
  char *os = p, *arch, *variant = NULL;

  arch = strchr (p, '/');
  if (arch == NULL)
    return cm_err_set (err, 0, "--platform `%s`: expected os/arch[/variant]", p);
  *arch++ = '\0';
  variant = strchr (arch, '/');
  if (variant)
    *variant++ = '\0';
  for (size_t i = 0; i < idx->n; i++)
    {
      const struct img_desc *d = &idx->descs[i];
      if (d->os && d->arch && strcmp (d->os, os) == 0 && strcmp (d->arch, arch) == 0
          && variant_matches (arch, variant, d->variant))
        {
          *out = d;
          return 0;
        }
    }
  for (size_t i = 0; i < idx->n; i++)
    {
      const struct img_desc *d = &idx->descs[i];
      char *n;
      if (d->os == NULL || strcmp (d->os, "unknown") == 0)
        continue;               /* attestation manifests */
      n = xasprintf ("%s%s%s/%s%s%s", list, *list ? ", " : "", d->os,
                     d->arch ? d->arch : "?", d->variant ? "/" : "",
                     d->variant ? d->variant : "");
      free (list);
      list = n;
    }
  return cm_err_set (err, 0, "%s: no image for platform %s/%s%s%s (available: %s)",
                     what, os, arch, variant ? "/" : "", variant ? variant : "",
                     *list ? list : "none");
}

void
img_config_doc_free (struct img_config_doc *c)
{
  if (c == NULL)
    return;
  cm_strv_free (c->entrypoint);
  cm_strv_free (c->cmd);
  cm_strv_free (c->env);
  cm_strv_free (c->ports);
  cm_strv_free (c->diff_ids);
  for (size_t i = 0; i < c->labels_len; i++)
    {
      free (c->label_keys[i]);
      free (c->label_values[i]);
    }
  free (c->label_keys);
  free (c->label_values);
  free (c->workdir);
  free (c->user);
  free (c->created);
  free (c->os);
  free (c->arch);
  free (c->variant);
  free (c);
}

int
img_config_parse (const char *buf, size_t len, struct img_config_doc **out,
                  struct cm_err **err)
{
  yajl_val v = NULL, cfg, labels, ports;
  struct img_config_doc *c;

  if ((v = cm_json_parse (buf, len, IMG_MAX_MANIFEST, "image config", err)) == NULL)
    return -1;
  c = xcalloc (1, sizeof *c);
  cfg = cm_json_get (v, "config");
  c->entrypoint = cm_json_strv (cfg, "Entrypoint");
  c->cmd = cm_json_strv (cfg, "Cmd");
  c->env = cm_json_strv (cfg, "Env");
  c->workdir = dup_or_null (cm_json_str (cfg, "WorkingDir"));
  c->user = dup_or_null (cm_json_str (cfg, "User"));
  c->created = dup_or_null (cm_json_str (v, "created"));
  c->os = dup_or_null (cm_json_str (v, "os"));
  c->arch = dup_or_null (cm_json_str (v, "architecture"));
  c->variant = dup_or_null (cm_json_str (v, "variant"));
  c->diff_ids = cm_json_strv (cm_json_get (v, "rootfs"), "diff_ids");
  labels = cm_json_get (cfg, "Labels");
  if (labels && YAJL_IS_OBJECT (labels))
    {
      size_t n = labels->u.object.len;
      c->label_keys = xcalloc (n + 1, sizeof (char *));
      c->label_values = xcalloc (n + 1, sizeof (char *));
      for (size_t i = 0; i < n; i++)
        if (YAJL_IS_STRING (labels->u.object.values[i]))
          {
            c->label_keys[c->labels_len] = xstrdup (labels->u.object.keys[i]);
            c->label_values[c->labels_len++]
                = xstrdup (YAJL_GET_STRING (labels->u.object.values[i]));
          }
    }
  ports = cm_json_get (cfg, "ExposedPorts");
  if (ports && YAJL_IS_OBJECT (ports))
    {
      c->ports = xcalloc (ports->u.object.len + 1, sizeof (char *));
      for (size_t i = 0; i < ports->u.object.len; i++)
        c->ports[i] = xstrdup (ports->u.object.keys[i]);
    }
  yajl_tree_free (v);
  *out = c;
  return 0;
}
