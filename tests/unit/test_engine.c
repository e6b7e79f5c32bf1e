/* Units behind update -r and features: oci_resources_parse and the
 * runtime's name tables. */
#include <stdlib.h>
#include <string.h>

#include "oci/spec.h"
#include "runtime/runtime.h"
#include "tap.h"

static void
test_resources_ok (void)
{
  const char *j = "{\"memory\":{\"limit\":20971520,\"swap\":-1},"
                  "\"cpu\":{\"shares\":512,\"quota\":-1,\"cpus\":\"0-1\"},"
                  "\"pids\":{\"limit\":7},\"blockIO\":{\"weight\":100},"
                  "\"unified\":{\"memory.high\":\"1G\"}}";
  struct rt_resources *r = NULL;
  struct cm_err *err = NULL;

  ok (oci_resources_parse (j, strlen (j), &r, &err) == 0 && err == NULL,
      "a full LinuxResources object parses");
  if (r == NULL)
    return;
  ok (r->memory.limit_present && r->memory.limit == 20971520,
      "memory.limit");
  ok (r->memory.swap_present && r->memory.swap == -1, "memory.swap -1");
  ok (!r->memory.reservation_present, "absent reservation stays absent");
  ok (r->cpu.shares_present && r->cpu.shares == 512, "cpu.shares");
  ok (r->cpu.quota_present && r->cpu.quota == -1, "cpu.quota -1");
  is_str (r->cpu.cpus, "0-1", "cpu.cpus");
  ok (r->pids.limit_present && r->pids.limit == 7, "pids.limit");
  ok (r->blkio.weight_present && r->blkio.weight == 100, "blockIO.weight");
  ok (r->unified_len == 1, "unified");
  rt_resources_free (r);
}

static void
expect_error (const char *j, const char *want, const char *what)
{
  struct rt_resources *r = NULL;
  struct cm_err *err = NULL;
  int ret = oci_resources_parse (j, strlen (j), &r, &err);
  ok (ret < 0 && r == NULL && err && strstr (err->msg, want), "%s", what);
  if (err && !strstr (err->msg, want))
    printf ("#   got '%s', want '%s'\n", err->msg, want);
  cm_err_free (&err);
  rt_resources_free (r);
}

static void
test_resources_errors (void)
{
  expect_error ("{\"memory\":{\"limit\":\"x\"}}",
                "resources.memory.limit: expected integer",
                "a string limit names its path");
  expect_error ("{\"pids\":{\"limit\":1.5}}", "resources.pids.limit",
                "a float where an integer is required");
  expect_error ("{\"cpu\":[]}", "resources.cpu", "cpu must be an object");
  expect_error ("[1]", "resources: expected object",
                "the document must be an object");
  expect_error ("{\"memory\":", "invalid JSON", "truncated JSON");
}

static bool
listed (const char *(*get) (size_t), const char *name)
{
  for (size_t i = 0; get (i); i++)
    if (strcmp (get (i), name) == 0)
      return true;
  return false;
}

static void
test_feature_tables (void)
{
  unsigned flag = 0;
  size_t n = 0;

  ok (listed (rt_feature_mount_option, "rro")
          && listed (rt_feature_mount_option, "rbind")
          && listed (rt_feature_mount_option, "rslave")
          && listed (rt_feature_mount_option, "nosymfollow"),
      "mount options: flags, recursive attributes, binds, propagation");
  ok (!listed (rt_feature_mount_option, "tmpcopyup"),
      "mount options: nothing the runtime does not implement");
  ok (listed (rt_feature_namespace, "network")
          && listed (rt_feature_namespace, "time")
          && !listed (rt_feature_namespace, "net"),
      "namespaces: spec names, not the \"net\" alias");
  ok (listed (rt_feature_seccomp_action, "SCMP_ACT_ERRNO")
          && listed (rt_feature_seccomp_action, "SCMP_ACT_KILL_PROCESS")
          && listed (rt_feature_seccomp_action, "SCMP_ACT_NOTIFY"),
      "seccomp actions");
  ok (listed (rt_feature_seccomp_operator, "SCMP_CMP_MASKED_EQ"),
      "seccomp operators");
  while (rt_feature_seccomp_flag (n, &flag))
    n++;
  ok (n == 3 && rt_feature_seccomp_flag (0, &flag)
          && strcmp (rt_feature_seccomp_flag (0, &flag),
                     "SECCOMP_FILTER_FLAG_LOG") == 0 && flag == 2,
      "seccomp flags with their values");
}

int
main (void)
{
  test_resources_ok ();
  test_resources_errors ();
  test_feature_tables ();
  return tap_done ();
}
