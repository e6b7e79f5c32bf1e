/* runtime/landlock.c: the rule list of a very large fs_readable annotation
 * (built in n log n or better; the time is measured and reported, never
 * asserted) keeps every rule and the replace/merge/deny semantics. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "common/util.h"
#include "oci/spec.h"
#include "runtime/landlock.h"

#define N 40000

static struct rt_config *
parse (const char *annotations)
{
  char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
      "\"annotations\":{%s},"
      "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}", annotations);
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

/* "/r/0,/r/1,...": every path twice, so replacement is exercised too. */
static char *
big_list (void)
{
  size_t cap = (size_t) N * 2 * 12 + 1, o = 0;
  char *s = xmalloc (cap);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < N; i++)
      o += (size_t) snprintf (s + o, cap - o, "%s/r/%d",
                              o ? "," : "", i);
  return s;
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_big_readable (void)
{
  _cleanup_free_ char *list = big_list ();
  _cleanup_free_ char *ann = xasprintf (
      "\"run.oci.sandlock.fs_readable\":\"%s\","
      "\"run.oci.sandlock.fs_writable\":\"/r/7,/w\","
      "\"run.oci.sandlock.fs_denied\":\"/r/1\"", list);
  struct rt_config *c = parse (ann);
  struct rt_ll_policy p;
  struct cm_err *err = NULL;
  ok (c != NULL, "config with a %d-path fs_readable parses", 2 * N);
  if (c == NULL)
    return;
  double t0 = now ();
  int r = rt_ll_policy_build (c, 7, &p, &err);
  double t1 = now ();
  printf ("# policy with %d fs_readable entries built in %.3f s\n", 2 * N,
          t1 - t0);
  ok (r == 0, "policy builds%s%s", err ? ": " : "", err ? err->msg : "");
  if (r == 0)
    {
      /* "/", the std device nodes, N readable minus the denied /r/1, /w. */
      size_t want = 0;
      for (size_t i = 0; i < p.rules_len; i++)
        want += cm_startswith (p.rules[i].path, "/r/");
      ok (want == N - 1, "one rule per distinct path (%zu of %d)", want,
          N - 1);
      const struct rt_ll_rule *a = rt_ll_policy_find (&p, "/r/39999");
      ok (a && a->access == RT_LL_FS_READ, "the last path is read-only");
      const struct rt_ll_rule *w = rt_ll_policy_find (&p, "/r/7");
      ok (w && (w->access & RT_LL_FS_WRITE_FILE),
          "fs_writable replaces the readable rule at the same path");
      ok (rt_ll_policy_find (&p, "/r/1") == NULL
              && rt_ll_policy_find (&p, "/r/10") != NULL,
          "fs_denied drops /r/1 and nothing beside it");
      ok (rt_ll_policy_find (&p, "/w") != NULL, "fs_writable /w kept");
      bool order = true;
      for (size_t i = 1; i < p.rules_len && order; i++)
        order = p.rules[i].path != NULL;
      ok (order, "no hole left by removed rules");
      rt_ll_policy_clear (&p);
    }
  cm_err_free (&err);
  rt_config_free (c);
}

/* Bad records are refused, naming the file; a record made by a real child
 * (Landlock applied in a fork) is taken back and accepted. */
static void
test_pins (void)
{
  struct rt_config *c = parse ("\"run.oci.sandlock.fs_readable\":\"/\"");
  struct rt_ll_policy p;
  struct cm_err *err = NULL;
  if (c == NULL || rt_ll_policy_build (c, rt_ll_abi () ? rt_ll_abi () : 7, &p,
                                       &err) < 0)
    {
      ok (0, "policy for the pin tests");
      rt_config_free (c);
      return;
    }
  ok (rt_ll_pins_use (&p, NULL, 0, &err) < 0 && err
          && strstr (err->msg, "landlock.pins") != NULL,
      "exec without a record is refused: %s", err ? err->msg : "");
  cm_err_free (&err);
  ok (rt_ll_pins_use (&p, "garbage!garbage!garbage!", 24, &err) < 0 && err
          && strstr (err->msg, "landlock.pins: not a Landlock rule record"),
      "a foreign file is refused: %s", err ? err->msg : "");
  cm_err_free (&err);

  if (rt_ll_abi () == 0)
    {
      skip ("Landlock unavailable: no real record");
      rt_ll_policy_clear (&p);
      rt_config_free (c);
      return;
    }
  ok (rt_ll_pins_record (&p, &err) == 0, "record memfd");
  pid_t pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      _exit (rt_ll_child_apply (&p, &err) < 0 ? 1 : 0);
    }
  int status = -1;
  waitpid (pid, &status, 0);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0, "child applied");
  char *rec = NULL;
  size_t len = 0;
  ok (rt_ll_pins_take (&p, &rec, &len, &err) == 0 && len > 0, "record taken");
  struct stat st;
  stat ("/", &st);
  size_t root = (size_t) (rt_ll_policy_find (&p, "/") - p.rules);
  ok (rt_ll_pins_use (&p, rec, len, &err) == 0 && p.pin_check,
      "the child's own record is accepted%s%s", err ? ": " : "",
      err ? err->msg : "");
  const struct rt_ll_pin *pin = rt_ll_pins_find (&p, root);
  ok (pin && pin->ino == (uint64_t) st.st_ino
          && pin->dev == (uint64_t) st.st_dev && pin->type == S_IFDIR,
      "the \"/\" rule is pinned to /'s inode");
  if (len > 40)
    {
      rec[len - 40 + 8] ^= 0x55;        /* the last pin's access */
      ok (rt_ll_pins_use (&p, rec, len, &err) < 0 && err
              && strstr (err->msg, "does not match the config"),
          "a record that disagrees with the config is refused");
      cm_err_free (&err);
    }
  free (rec);
  rt_ll_policy_clear (&p);
  rt_config_free (c);
}

int
main (void)
{
  test_big_readable ();
  test_pins ();
  return tap_done ();
}
