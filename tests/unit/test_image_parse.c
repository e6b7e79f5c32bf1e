/* Manifest/index parsing, platform selection, WWW-Authenticate, auth file
 * lookup and the path cleaning behind the unpacker (image/ internals). */
#include <stdio.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"
#include "tests/unit/tap.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"

/* A manifest with config type |ct|, one layer of type |lt|, body
 * mediaType |own| (NULL: none), and |extra| members. */
static char *
man_doc (const char *own, const char *ct, const char *lt, const char *extra)
{
  return xasprintf ("{\"schemaVersion\":2,%s%s%s\"config\":{\"mediaType\":\"%s\","
                    "\"digest\":\"" D1 "\",\"size\":10},\"layers\":[{\"mediaType\":\"%s\","
                    "\"digest\":\"" D2 "\",\"size\":5}]%s}",
                    own ? "\"mediaType\":\"" : "", own ? own : "", own ? "\"," : "", ct, lt,
                    extra);
}

/* parse with |served|, then check as an image; 0 or -1 with *e set. */
static int
parse_check (const char *doc, const char *served, struct cm_err **e)
{
  struct img_manifest *m = NULL;
  int r = img_manifest_parse (doc, strlen (doc), served, "t", &m, e);
  if (r == 0)
    r = img_manifest_check_image (m, "t", e);
  img_manifest_free (m);
  return r;
}

static void
media_types (void)
{
  const char *gz = "application/vnd.oci.image.layer.v1.tar+gzip";
  struct cm_err *e = NULL;
  struct
  {
    const char *own, *served, *ct, *lt, *extra, *want;   /* want NULL: accepted */
  } c[] = {
    { MT_OCI_MANIFEST, MT_OCI_MANIFEST, MT_OCI_CONFIG, gz, "", NULL },
    { NULL, MT_OCI_MANIFEST, MT_OCI_CONFIG, gz, "", NULL },
    { NULL, "application/octet-stream", MT_OCI_CONFIG, gz, "", NULL },
    { NULL, "text/plain", MT_OCI_CONFIG, gz, "", NULL },
    { MT_DOCKER_MANIFEST, MT_DOCKER_MANIFEST, MT_DOCKER_CONFIG,
      "application/vnd.docker.image.rootfs.diff.tar.gzip", "", NULL },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG, "application/vnd.docker.image.rootfs.diff.tar", "", NULL },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG, "application/vnd.oci.image.layer.v1.tar+zstd", "", NULL },
    { MT_DOCKER_MANIFEST, MT_OCI_MANIFEST, MT_DOCKER_CONFIG, gz, "",
      "says it is `" MT_DOCKER_MANIFEST "` but was served or listed as `" MT_OCI_MANIFEST "`" },
    { MT_OCI_INDEX, MT_OCI_MANIFEST, MT_OCI_CONFIG, gz, "", "says it is `" MT_OCI_INDEX "`" },
    { NULL, MT_DOCKER_MANIFEST, MT_DOCKER_CONFIG, gz, "", "has no mediaType" },
    { MT_OCI_MANIFEST, NULL, "application/vnd.cncf.helm.config.v1+json",
      "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "",
      "not a container image: application/vnd.cncf.helm.config.v1+json" },
    { MT_OCI_MANIFEST, NULL, "application/vnd.oci.empty.v1+json", gz, "",
      "not a container image: application/vnd.oci.empty.v1+json" },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG, gz, ",\"artifactType\":\"application/spdx+json\"",
      "not a container image: application/spdx+json" },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG, "application/x-evil", "",
      "not a container image: application/x-evil (layers[0])" },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG, "application/vnd.dev.cosign.simplesigning.v1+json", "",
      "not a container image: application/vnd.dev.cosign.simplesigning.v1+json" },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG,
      "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", "", "foreign" },
    { MT_OCI_MANIFEST, NULL, MT_OCI_CONFIG,
      "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", "", "foreign" },
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    {
      _cleanup_free_ char *doc = man_doc (c[i].own, c[i].ct, c[i].lt, c[i].extra);
      int r = parse_check (doc, c[i].served, &e);
      if (c[i].want == NULL)
        ok (r == 0, "accepted: %s served as %s, config %s, layer %s %s", c[i].own ? c[i].own : "-",
            c[i].served ? c[i].served : "-", c[i].ct, c[i].lt, e ? e->msg : "");
      else
        ok (r < 0 && e && strstr (e->msg, c[i].want), "refused (%s): %s", c[i].want,
            e ? e->msg : "accepted");
      cm_err_free (&e);
    }
  {
    const char *doc = "{\"schemaVersion\":2,\"config\":{\"digest\":\"" D1 "\",\"size\":1},"
                      "\"layers\":[]}";
    ok (parse_check (doc, NULL, &e) < 0 && strstr (e->msg, "config.mediaType: missing"),
        "a config descriptor without mediaType: %s", e ? e->msg : "accepted");
    cm_err_free (&e);
  }
}

static void
manifests (void)
{
  const char *man = "{\"schemaVersion\":2,\"mediaType\":\"" MT_OCI_MANIFEST "\","
                    "\"config\":{\"digest\":\"" D1 "\",\"size\":10},"
                    "\"layers\":[{\"mediaType\":\"x\",\"digest\":\"" D2 "\",\"size\":5}]}";
  const char *idx = "{\"schemaVersion\":2,\"mediaType\":\"" MT_DOCKER_LIST "\",\"manifests\":["
                    "{\"digest\":\"" D1 "\",\"size\":1,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}},"
                    "{\"digest\":\"" D2 "\",\"size\":2,\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\"}}]}";
  struct img_manifest *m = NULL;
  const struct img_desc *d = NULL;
  struct cm_err *e = NULL;

  ok (img_manifest_parse (man, strlen (man), NULL, "t", &m, &e) == 0 && !m->is_index
      && m->n == 1 && m->descs[0].size == 5 && strcmp (m->config.digest, D1) == 0,
      "OCI manifest");
  img_manifest_free (m);
  ok (img_manifest_parse (idx, strlen (idx), MT_DOCKER_LIST, "t", &m, &e) == 0 && m->is_index
      && m->n == 2, "manifest list");
  ok (img_index_select (m, "linux/arm64", "t", &d, &e) == 0 && strcmp (d->digest, D2) == 0,
      "select linux/arm64");
  ok (img_index_select (m, "linux/arm64/v8", "t", &d, &e) == 0, "arm64 v8 matches no variant");
  ok (img_index_select (m, "linux/s390x", "t", &d, &e) < 0 && strstr (e->msg, "linux/amd64, linux/arm64"),
      "no match lists the platforms: %s", e ? e->msg : "");
  cm_err_free (&e);
  ok (img_index_select (m, "linux", "t", &d, &e) < 0, "bad --platform");
  cm_err_free (&e);
  img_manifest_free (m);
  ok (img_manifest_parse ("{\"schemaVersion\":1,\"fsLayers\":[]}", 33, NULL, "t", &m, &e) < 0
      && strstr (e->msg, "schema1"), "schema1 refused");
  cm_err_free (&e);
  {
    const char *b = "{\"config\":{\"digest\":\"sha256:12\",\"size\":1},\"layers\":[]}";
    ok (img_manifest_parse (b, strlen (b), MT_OCI_MANIFEST, "t", &m, &e) < 0
        && strstr (e->msg, "config.digest"), "bad digest names the path");
  }
  cm_err_free (&e);
  {
    const char *b = "{\"config\":{\"digest\":\"" D1 "\",\"size\":-1},\"layers\":[]}";
    ok (img_manifest_parse (b, strlen (b), MT_OCI_MANIFEST, "t", &m, &e) < 0
        && strstr (e->msg, "config.size"), "negative size refused");
  }
  cm_err_free (&e);
  ok (img_manifest_parse ("[1]", 3, NULL, "t", &m, &e) < 0, "non-object refused");
  cm_err_free (&e);
  ok (img_manifest_parse ("{", 1, NULL, "t", &m, &e) < 0, "truncated JSON refused");
  cm_err_free (&e);
}

static void
challenges (void)
{
  struct img_challenge c;
  ok (img_challenge_parse ("Bearer realm=\"https://auth.example/token\",service=\"reg\","
                           "scope=\"repository:a/b:pull\"", &c) == 0
      && strcmp (c.scheme, "bearer") == 0 && strcmp (c.realm, "https://auth.example/token") == 0
      && strcmp (c.service, "reg") == 0 && strcmp (c.scope, "repository:a/b:pull") == 0,
      "bearer challenge");
  img_challenge_clear (&c);
  ok (img_challenge_parse ("Basic realm=\"x\\\"y\"", &c) == 0 && strcmp (c.scheme, "basic") == 0
      && strcmp (c.realm, "x\"y") == 0, "basic with an escaped quote");
  img_challenge_clear (&c);
  ok (img_challenge_parse ("bearer realm=unquoted , service = s", &c) == 0
      && strcmp (c.realm, "unquoted") == 0 && strcmp (c.service, "s") == 0, "tokens and spaces");
  img_challenge_clear (&c);
  ok (img_challenge_parse ("Bearer realm=\"open", &c) < 0, "unterminated quote refused");
  ok (img_challenge_parse ("", &c) < 0, "empty refused");
}

static void
authfile (void)
{
  char path[] = "/tmp/test_image_auth.XXXXXX";
  int fd = mkstemp (path);
  char *up = NULL, *note = NULL;
  struct cm_err *e = NULL;
  const char *j = "{\"auths\":{\"https://index.docker.io/v1/\":{\"auth\":\"dTpw\"},"
                  "\"reg.example:5000\":{\"auth\":\"YWxpY2U6czNjcmV0\"}},"
                  "\"credHelpers\":{\"other.example\":\"pass\"}}";
  ok (fd >= 0 && write (fd, j, strlen (j)) == (ssize_t) strlen (j), "write auth file");
  close (fd);
  ok (img_auth_lookup (path, "reg.example:5000", &up, &note, &e) == 1 && strcmp (up, "alice:s3cret") == 0,
      "auths entry decoded");
  free (up);
  ok (img_auth_lookup (path, "registry-1.docker.io", &up, &note, &e) == 1 && strcmp (up, "u:p") == 0,
      "docker hub key form");
  free (up);
  ok (img_auth_lookup (path, "other.example", &up, &note, &e) == 0 && note && strstr (note, "docker-credential-pass"),
      "credential helper noted, not run");
  free (note);
  unlink (path);
}

/* An `auth` that is not base64 of user:pass: a clear error naming the
 * file, the key and the registry (it used to be built from the freed
 * tree: a use-after-free ASan reports here). */
static void
authfile_bad (const char *auth, const char *what)
{
  char path[] = "/tmp/test_image_auth.XXXXXX";
  int fd = mkstemp (path);
  char *up = NULL, *note = NULL, *j;
  struct cm_err *e = NULL;
  j = xasprintf ("{\"auths\":{\"reg.example:5000\":{\"auth\":\"%s\"}}}", auth);
  ok (fd >= 0 && write (fd, j, strlen (j)) == (ssize_t) strlen (j), "write auth file (%s)", what);
  close (fd);
  ok (img_auth_lookup (path, "reg.example:5000", &up, &note, &e) < 0 && e && e->msg
      && strstr (e->msg, path) && strstr (e->msg, "reg.example:5000")
      && strstr (e->msg, "not base64 of user:password") && up == NULL,
      "auth %s: error names the file and the registry: %s", what, e && e->msg ? e->msg : "?");
  cm_err_free (&e);
  free (j);
  unlink (path);
}

static void
paths (void)
{
  char *p = NULL;
  ok (img_clean_path ("./a//b/./c", &p) == 0 && strcmp (p, "a/b/c") == 0, "clean ./a//b/./c");
  free (p);
  ok (img_clean_path ("./", &p) == 0 && strcmp (p, "") == 0, "./ is the root");
  free (p);
  ok (img_clean_path ("a/../b", &p) < 0, ".. inside refused");
  ok (img_clean_path ("../x", &p) < 0, "leading .. refused");
  ok (img_clean_path ("/etc/passwd", &p) < 0, "absolute refused");
  ok (img_clean_path ("a/..", &p) < 0, "trailing .. refused");
  ok (img_clean_path ("a/..b/c", &p) == 0 && strcmp (p, "a/..b/c") == 0, "..b is a name");
  free (p);
}

static void
digests (void)
{
  char out[72];
  img_sha256_str ("abc", 3, out);
  is_str (out, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256(abc)");
}

int
main (void)
{
  manifests ();
  media_types ();
  challenges ();
  authfile ();
  authfile_bad ("bm9jb2xvbg==", "base64 of `nocolon`");
  authfile_bad ("!!notbase64", "not base64");
  authfile_bad ("dTpwAA==", "NUL inside");
  paths ();
  digests ();
  return tap_done ();
}
