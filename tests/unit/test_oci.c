/* Unit tests: container id rules, signal names, state.json round trip and
 * reconciliation, the default config. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "oci/spec.h"
#include "oci/spec_default.h"
#include "oci/state.h"
#include "runtime/runtime.h"
#include "tap.h"

static void
test_ids (void)
{
  static const char *good[] = { "a", "abc-DEF_1.2+3", "0", "x.y", "image-bundles2" };
  static const char *bad[] = { "", ".", "..", "a/b", "a b", "a;b", "ä", "a\n",
                                 OCI_IMAGE_BUNDLES };
  char *long_ok = xmalloc (256), *too_long = xmalloc (257);
  for (size_t i = 0; i < ARRAY_SIZE (good); i++)
    ok (oci_id_valid (good[i]), "id \"%s\" is valid", good[i]);
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    ok (!oci_id_valid (bad[i]), "id #%zu is refused", i);
  /* A directory name under --root: NAME_MAX. */
  memset (long_ok, 'a', 255);
  long_ok[255] = '\0';
  memset (too_long, 'a', 256);
  too_long[256] = '\0';
  ok (oci_id_valid (long_ok), "255 characters is the limit");
  ok (!oci_id_valid (too_long), "256 characters is refused");
  ok (!oci_id_valid (NULL), "NULL is refused");
  free (long_ok);
  free (too_long);
}

static void
test_signals (void)
{
  ok (rt_signal_parse ("KILL") == SIGKILL, "KILL");
  ok (rt_signal_parse ("SIGKILL") == SIGKILL, "SIGKILL");
  ok (rt_signal_parse ("sigterm") == SIGTERM, "case-insensitive");
  ok (rt_signal_parse ("9") == 9, "number");
  ok (rt_signal_parse ("WINCH") == SIGWINCH, "WINCH");
  ok (rt_signal_parse ("RTMIN") == SIGRTMIN, "RTMIN");
  ok (rt_signal_parse ("RTMIN+3") == SIGRTMIN + 3, "RTMIN+3");
  ok (rt_signal_parse ("SIGRTMAX-2") == SIGRTMAX - 2, "SIGRTMAX-2");
  ok (rt_signal_parse ("0") == -1, "0 refused");
  ok (rt_signal_parse ("65") == -1, "beyond SIGRTMAX refused");
  ok (rt_signal_parse ("-9") == -1, "negative refused");
  ok (rt_signal_parse ("9x") == -1, "trailing junk refused");
  ok (rt_signal_parse ("NOPE") == -1, "unknown name refused");
  ok (rt_signal_parse ("RTMIN+99") == -1, "RTMIN out of range refused");
  ok (rt_signal_parse ("") == -1 && rt_signal_parse (NULL) == -1, "empty");
}

static void
test_state (void)
{
  char tmpl[] = "/tmp/sandlock-unit.XXXXXX";
  struct oci_globals g = { 0 };
  struct oci_state st = { .dirfd = -1 }, st2 = { .dirfd = -1 },
                   st3 = { .dirfd = -1 };
  struct cm_err *err = NULL;
  _cleanup_free_ char *json = NULL;
  struct rt_kv ann = { (char *) "k", (char *) "v\"quoted\"" };

  if (mkdtemp (tmpl) == NULL)
    {
      skip ("mkdtemp failed");
      return;
    }
  g.root = tmpl;
  ok (oci_state_create (&g, "c1", &st, &err) == 0, "create state dir");
  st.status = OCI_CREATED;
  st.pid = getpid ();
  st.start_time = rt_proc_start_time (getpid ());
  st.bundle = xstrdup ("/b");
  st.rootfs = xstrdup ("/b/rootfs");
  st.created = oci_now_rfc3339 ();
  st.owner = xstrdup ("root");
  st.cgroup_path = xstrdup ("/sandlock-oci/c1");
  st.annotations = xcalloc (1, sizeof ann);
  st.annotations[0].key = xstrdup (ann.key);
  st.annotations[0].value = xstrdup (ann.value);
  st.annotations_len = 1;
  ok (oci_state_save (&st, &err) == 0, "save state.json");
  ok (oci_state_create (&g, "c1", &st2, &err) < 0 && err
      && strstr (err->msg, "already exists"), "a duplicate id is refused");
  cm_err_free (&err);
  oci_state_free (&st2);
  oci_state_free (&st);          /* releases the lock */

  ok (oci_state_load (&g, "c1", &st3, &err) == 0, "load state.json");
  is_str (st3.bundle, "/b", "bundle round-trips");
  is_str (st3.cgroup_path, "/sandlock-oci/c1", "cgroup path round-trips");
  ok (st3.annotations_len == 1 && strcmp (st3.annotations[0].value,
                                          "v\"quoted\"") == 0,
      "annotation with quotes round-trips");
  ok (st3.pid == getpid (), "pid round-trips");
  /* our process, no exec.fifo in the directory: running */
  is_str (oci_status_name (st3.status), "running", "a live pid without the fifo is running");
  json = oci_state_json (&st3, false);
  ok (strstr (json, "\"ociVersion\"") && strstr (json, "\"created\"")
      && !strstr (json, "start_time"),
      "public state JSON has the spec fields and no internal ones");
  /* a recycled pid: same number, other start time */
  st3.start_time += 12345;
  oci_state_refresh (&st3);
  is_str (oci_status_name (st3.status), "stopped", "a pid with another start time is stopped");
  ok (oci_state_remove (&g, &st3, &err) == 0, "remove the state dir");
  oci_state_free (&st3);
  ok (oci_state_load (&g, "c1", &st3, &err) < 0 && err
      && strstr (err->msg, "does not exist"), "gone after remove");
  cm_err_free (&err);
  oci_state_free (&st3);
  rmdir (tmpl);
}

static void
test_default_config (void)
{
  struct oci_default_opts o = { .root_readonly = true, .rootless = true };
  _cleanup_free_ char *j = oci_default_config_json (&o);
  struct rt_config *c = NULL;
  struct cm_err *err = NULL;
  bool has_user = false;
  ok (oci_spec_parse (j, strlen (j), &c, &err) == 0,
      "the default config parses with our own parser");
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->namespaces_len; i++)
    has_user |= strcmp (c->namespaces[i].type, "user") == 0;
  ok (has_user && c->uid_mappings_len == 1
      && c->uid_mappings[0].host_id == getuid (),
      "--rootless maps the caller in a user namespace");
  ok (c->root_readonly && c->process && c->process->no_new_privileges,
      "read-only root and no_new_privs by default");
  rt_config_free (c);
}

int
main (void)
{
  test_ids ();
  test_signals ();
  test_state ();
  test_default_config ();
  return tap_done ();
}
