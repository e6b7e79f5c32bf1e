/* Reference parsing (image/ref.c). */
#include "common/util.h"
#include "image/image.h"
#include "tests/unit/tap.h"

static void
check (const char *in, const char *reg, const char *repo, const char *tag,
       const char *digest)
{
  struct img_ref *r = NULL;
  struct cm_err *e = NULL;
  int ret = img_ref_parse (in, &r, &e);
  ok (ret == 0, "parse %s%s%s", in, e ? ": " : "", e ? e->msg : "");
  if (ret < 0)
    {
      cm_err_free (&e);
      return;
    }
  is_str (r->registry, reg, "%s registry", in);
  is_str (r->repository, repo, "%s repository", in);
  if (tag)
    is_str (r->tag, tag, "%s tag", in);
  else
    ok (r->tag == NULL, "%s has no tag", in);
  if (digest)
    is_str (r->digest, digest, "%s digest", in);
  img_ref_free (r);
}

static void
bad (const char *in, const char *why)
{
  struct img_ref *r = NULL;
  struct cm_err *e = NULL;
  int ret = img_ref_parse (in, &r, &e);
  ok (ret < 0 && e && strstr (e->msg, why), "refuse %s (%s)", in, e ? e->msg : "accepted");
  cm_err_free (&e);
  img_ref_free (r);
}

int
main (void)
{
  const char *d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  _cleanup_free_ char *withd = xasprintf ("docker://busybox@%s", d);
  _cleanup_free_ char *both = xasprintf ("docker://busybox:1@%s", d);
  struct img_ref *r = NULL;
  struct cm_err *e = NULL;

  check ("docker://busybox", "registry-1.docker.io", "library/busybox", "latest", NULL);
  check ("docker://docker.io/busybox:1.36", "registry-1.docker.io", "library/busybox", "1.36", NULL);
  check ("docker://user/app", "registry-1.docker.io", "user/app", "latest", NULL);
  check ("docker://127.0.0.1:5000/a/b:v1", "127.0.0.1:5000", "a/b", "v1", NULL);
  check ("docker://localhost/x", "localhost", "x", "latest", NULL);
  check ("docker://quay.io/org/img-name_x.y:t", "quay.io", "org/img-name_x.y", "t", NULL);
  check (withd, "registry-1.docker.io", "library/busybox", NULL, d);
  bad (both, "not both");
  bad ("busybox", "missing transport");
  bad ("busybox:1.36", "missing transport (docker://, oci:, oci-archive:, docker-daemon:; e.g. docker://busybox:1.36)");
  bad ("http://example.com/x", "unknown transport `http://`");
  bad ("https://example.com/x", "unknown transport `https://`");
  bad ("docker-archive:/tmp/x.tar", "transport `docker-archive:` is not supported");
  bad ("containers-storage:busybox", "transport `containers-storage:` is not supported");
  bad ("docker://BusyBox", "invalid repository");
  bad ("docker://busybox:bad/tag", "invalid");
  bad ("docker://busybox@sha256:abc", "invalid digest");
  bad ("docker://a//b", "invalid repository");
  bad ("oci:", "missing path");
  bad ("docker://-x", "invalid repository");       /* a separator first (fuzzer find) */
  bad ("docker://_", "invalid repository");

  ok (img_ref_parse ("oci:/x/lay:v2", &r, &e) == 0 && strcmp (r->path, "/x/lay") == 0
      && strcmp (r->tag, "v2") == 0, "oci: path and tag");
  img_ref_free (r);
  ok (img_ref_parse ("oci:/x/a:b/lay", &r, &e) == 0 && strcmp (r->path, "/x/a:b/lay") == 0
      && r->tag == NULL, "oci: a colon inside the path is not a tag");
  img_ref_free (r);
  ok (img_ref_parse ("oci-archive:f.tar", &r, &e) == 0 && r->transport == IMG_OCI_ARCHIVE,
      "oci-archive:");
  img_ref_free (r);
  ok (img_ref_parse ("docker-daemon:busybox:latest", &r, &e) == 0
      && strcmp (r->path, "busybox:latest") == 0, "docker-daemon:");
  {
    _cleanup_free_ char *f = img_ref_format (r);
    is_str (f, "docker-daemon:busybox:latest", "format docker-daemon");
  }
  img_ref_free (r);
  ok (img_ref_parse ("docker://busybox", &r, &e) == 0, "parse for format");
  {
    _cleanup_free_ char *f = img_ref_format (r);
    is_str (f, "docker://registry-1.docker.io/library/busybox:latest", "canonical text");
  }
  img_ref_free (r);
  ok (img_digest_valid (d), "digest valid");
  ok (!img_digest_valid ("sha256:ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"),
      "uppercase digest refused");
  return tap_done ();
}
