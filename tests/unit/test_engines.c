/* runtime/landlock.c, landlock-scope.c, landlock-dev.c: what engines can
 * choose (issue 16 items 15-18): defaults from the runtime's config file
 * and flags under the annotations, ':' as a list separator, IPC scopes by
 * namespace, IOCTL_DEV for bind-mounted devices.  Runs from the repo
 * root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/landlock.h"

/* A minimal config with |ann| as annotations and |ns| as namespaces. */
static struct rt_config *
cfg (const char *ann, const char *ns, const char *extra)
{
  char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
      "\"annotations\":{%s},\"mounts\":[%s],"
      "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}%s%s]}}",
      ann ? ann : "", extra ? extra : "", ns ? "," : "", ns ? ns : "");
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

static char *
build (struct rt_config *c, struct rt_ll_policy *p)
{
  struct cm_err *err = NULL;
  memset (p, 0, sizeof *p);
  if (rt_ll_policy_build (c, 7, p, &err) < 0)
    {
      char *m = xstrdup (err->msg);
      cm_err_free (&err);
      return m;
    }
  return NULL;
}

static int
set_default (bool disable, const char *v, const char *origin, int rank,
             char **msg)
{
  struct cm_err *err = NULL;
  int r = rt_ll_set_default (disable, v, origin, rank, &err);
  *msg = err ? xstrdup (err->msg) : NULL;
  cm_err_free (&err);
  return r;
}

static void
reset_defaults (void)
{
  char *m;
  set_default (true, NULL, NULL, 0, &m);
  set_default (false, NULL, NULL, 0, &m);
}

static void
test_defaults (void)
{
  struct rt_ll_policy p;
  struct rt_config *c = cfg (NULL, NULL, NULL);
  char *m, *e;

  ok (set_default (true, "scope-signal", "config file `f`: disable", 1, &m)
          == 0, "file default accepted");
  e = build (c, &p);
  ok (e == NULL && p.mode[RT_LL_P_SCOPE_SIGNAL] == RT_LL_DISABLE
          && !p.seccomp_default_disabled,
      "file: disable=scope-signal applies without an annotation");
  rt_ll_policy_clear (&p);
  set_default (true, "seccomp", "--sandlock-disable", 2, &m);
  e = build (c, &p);
  ok (e == NULL && p.mode[RT_LL_P_SCOPE_SIGNAL] == RT_LL_STRICT
          && p.seccomp_default_disabled,
      "flag replaces the file's disable list");
  rt_ll_policy_clear (&p);
  set_default (true, "scope-abstract-unix", "config file `f`: disable", 1,
               &m);
  e = build (c, &p);
  ok (e == NULL && p.seccomp_default_disabled
          && p.mode[RT_LL_P_SCOPE_ABSTRACT_UNIX] == RT_LL_STRICT,
      "a file read after the flag does not replace it");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  c = cfg ("\"run.oci.sandlock.disable\":\"fs-truncate\"", NULL, NULL);
  set_default (false, "fs-truncate", "--sandlock-degrade", 2, &m);
  e = build (c, &p);
  ok (e == NULL && p.mode[RT_LL_P_FS_TRUNCATE] == RT_LL_DISABLE
          && !p.seccomp_default_disabled,
      "annotation replaces the flag's disable and wins over its degrade (%s)",
      e ? e : "");
  free (e);
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  ok (set_default (true, "fs,bogus", "--sandlock-disable", 2, &m) < 0
          && strstr (m, "--sandlock-disable: unknown protection \"bogus\""),
      "a bad flag names the flag (%s)", m ? m : "");
  free (m);
  ok (set_default (true, "fs-refer", "config file `f`: disable", 1, &m) < 0
          && strstr (m, "config file `f`: disable: fs-refer cannot"),
      "disable=fs-refer refused, naming the file and key");
  free (m);
  reset_defaults ();
  set_default (true, "fs-truncate", "--sandlock-disable", 2, &m);
  set_default (false, "fs-truncate", "--sandlock-degrade", 2, &m);
  c = cfg (NULL, NULL, NULL);
  e = build (c, &p);
  ok (e && strstr (e, "named in both"), "one layer naming a protection in "
      "both lists is an error (%s)", e ? e : "");
  free (e);
  rt_config_free (c);
  reset_defaults ();
}

static void
test_separator (void)
{
  struct rt_ll_policy p;
  struct rt_config *c = cfg ("\"run.oci.sandlock.disable\":\" fs-truncate : "
                             "scope-signal,seccomp\"", NULL, NULL);
  char *e = build (c, &p);
  ok (e == NULL && p.mode[RT_LL_P_FS_TRUNCATE] == RT_LL_DISABLE
          && p.mode[RT_LL_P_SCOPE_SIGNAL] == RT_LL_DISABLE
          && p.seccomp_default_disabled,
      "':' and ',' both separate list items (%s)", e ? e : "");
  free (e);
  rt_ll_policy_clear (&p);
  rt_config_free (c);
}

static void
test_scopes (void)
{
  struct rt_ll_policy p;
  const uint64_t both = RT_LL_SCOPE_SIGNAL | RT_LL_SCOPE_ABSTRACT_UNIX;
  struct rt_config *c = cfg (NULL, NULL, NULL);
  char *e = build (c, &p);
  ok (e == NULL && p.scoped == both, "no pid/net namespace: both scopes");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  c = cfg (NULL, "{\"type\":\"pid\"},{\"type\":\"network\"}", NULL);
  e = build (c, &p);
  ok (e == NULL && p.scoped == 0 && p.pidns_private && p.netns_private,
      "namespaces created for the container: no scopes");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  c = cfg (NULL, "{\"type\":\"pid\",\"path\":\"/proc/self/ns/pid\"},"
           "{\"type\":\"network\",\"path\":\"/proc/self/ns/net\"}", NULL);
  e = build (c, &p);
  ok (e == NULL && p.scoped == both && !p.pidns_private,
      "joining the runtime's own namespaces by path keeps both scopes");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  c = cfg ("\"run.oci.sandlock.scope\":\"container\"",
           "{\"type\":\"pid\"},{\"type\":\"network\"}", NULL);
  e = build (c, &p);
  ok (e == NULL && p.scoped == both, "scope=container keeps both");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  c = cfg ("\"run.oci.sandlock.scope\":\"pod\"", NULL, NULL);
  e = build (c, &p);
  ok (e && strstr (e, "annotation run.oci.sandlock.scope: \"pod\""),
      "a bad scope value names the annotation (%s)", e ? e : "");
  free (e);
  rt_config_free (c);
}

static void
test_bound_devices (void)
{
  struct rt_ll_policy p;
  struct rt_config *c = cfg (NULL, NULL,
                             "{\"destination\":\"/x/null\",\"type\":\"bind\","
                             "\"source\":\"/dev/null\",\"options\":[\"rbind\"]},"
                             "{\"destination\":\"/x/file\",\"type\":\"bind\","
                             "\"source\":\"/etc/hostname\"}");
  char *e = build (c, &p);
  const struct rt_ll_rule *r = rt_ll_policy_find (&p, "/x/null");
  ok (e == NULL && r && (r->access & RT_LL_FS_IOCTL_DEV)
          && r->origin == RT_LL_O_DEVICE && r->want_type == S_IFCHR
          && r->want_rdev == makedev (1, 3),
      "a bound char device the default rules allow: IOCTL_DEV on that node");
  r = rt_ll_policy_find (&p, "/x/file");
  ok (r && !(r->access & RT_LL_FS_IOCTL_DEV), "a bound file: no IOCTL_DEV");
  rt_ll_policy_clear (&p);
  rt_config_free (c);

  struct stat st;
  if (stat ("/dev/kvm", &st) < 0 || !S_ISCHR (st.st_mode))
    {
      skip ("no /dev/kvm");
      return;
    }
  c = cfg (NULL, NULL, "{\"destination\":\"/dev/kvm\",\"type\":\"bind\","
           "\"source\":\"/dev/kvm\"}");
  e = build (c, &p);
  r = rt_ll_policy_find (&p, "/dev/kvm");
  ok (e == NULL && r && !(r->access & RT_LL_FS_IOCTL_DEV),
      "a bound device the rules do not allow: no IOCTL_DEV");
  rt_ll_policy_clear (&p);
  rt_config_free (c);
}

int
main (void)
{
  test_defaults ();
  test_separator ();
  test_scopes ();
  test_bound_devices ();
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
