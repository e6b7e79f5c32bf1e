/* Unit tests: the state.json loader (oci/state_json.c) on what create can
 * write (annotations up to config.json's cap) and on what it never writes
 * (corrupt, hostile); delete -f's salvage of an unreadable state. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "oci/state.h"
#include "runtime/runtime.h"
#include "tap.h"

static int
parse (const char *json, struct oci_state *st, struct cm_err **err)
{
  memset (st, 0, sizeof *st);
  st->dirfd = -1;
  st->id = xstrdup ("c1");
  return oci_state_parse (st, json, strlen (json), err);
}

static void
refused (const char *json, const char *want, const char *what)
{
  struct oci_state st;
  struct cm_err *err = NULL;
  int r = parse (json, &st, &err);
  ok (r < 0 && err && strstr (err->msg, want), "%s: refused (%s)", what,
      err ? err->msg : "accepted");
  cm_err_free (&err);
  oci_state_free (&st);
}

static void
test_big_annotations (void)
{
  size_t n = 4u << 20;          /* over the old 1 MiB loader cap */
  struct oci_state st = { .dirfd = -1 }, back;
  struct cm_err *err = NULL;
  _cleanup_free_ char *v = xmalloc (n + 1), *j = NULL;
  struct rt_kv kv = { (char *) "big", v };

  memset (v, 'a', n);
  v[n] = '\0';
  st.id = (char *) "c1";
  st.status = OCI_CREATED;
  st.bundle = (char *) "/b";
  st.annotations = &kv;
  st.annotations_len = 1;
  j = oci_state_gen (&st, false, true);
  ok (parse (j, &back, &err) == 0 && back.annotations_len == 1
          && strlen (back.annotations[0].value) == n,
      "a 4 MiB annotation round-trips through state.json");
  cm_err_free (&err);
  oci_state_free (&back);
}

static void
test_refused (void)
{
  char *deep = xmalloc (4096);
  memset (deep, '[', 4095);
  deep[4095] = '\0';
  refused ("{\"status\":\"created\",\"bundle\":\"/b\",\"x\":", "corrupt",
           "truncated");
  refused ("{\"bundle\":\"/b\"}", "incomplete", "no status");
  refused ("{\"status\":\"created\",\"bundle\":\"/b\",\"pid\":4294967297}",
           "pid", "pid beyond pid_t");
  refused ("{\"status\":\"created\",\"bundle\":\"/b\",\"pid\":-1}", "pid",
           "negative pid");
  refused ("{\"status\":\"created\",\"bundle\":\"/b\",\"pid\":1.5}", "pid",
           "fractional pid");
  refused ("{\"status\":7,\"bundle\":\"/b\"}", "status: expected string",
           "status of the wrong type");
  refused ("{\"status\":\"created\",\"bundle\":\"/b\",\"annotations\":"
           "{\"k\":1}}", "annotations.k", "non-string annotation");
  refused ("{\"status\":\"created\",\"bundle\":\"/b\\u0000/x\"}", "\\u0000",
           "NUL inside a string");
  refused (deep, "nested deeper", "deep nesting (yajl_tree_free recursion)");
  refused ("{\"status\":\"dancing\",\"bundle\":\"/b\"}",
           "status: unknown \"dancing\"", "a status that is not ours");
  refused ("{\"status\":\"unknown\",\"bundle\":\"/b\"}",
           "status: unknown \"unknown\"", "\"unknown\" (list's, never stored)");
  free (deep);
}

/* Every status goes to state.json by its one name and comes back as the
 * same enum value. */
static void
test_status_names (void)
{
  for (enum oci_status s = OCI_CREATING; s <= OCI_STOPPED; s++)
    {
      struct oci_state st = { .dirfd = -1 }, back;
      struct cm_err *err = NULL;
      _cleanup_free_ char *j = NULL;
      st.id = (char *) "c1";
      st.status = s;
      st.bundle = (char *) "/b";
      j = oci_state_gen (&st, false, true);
      ok (parse (j, &back, &err) == 0 && back.status == s
              && oci_status_from_name (oci_status_name (s)) == s,
          "status %s round-trips", oci_status_name (s));
      cm_err_free (&err);
      oci_state_free (&back);
    }
}

/* A "creating" state with a live process (its create was killed after
 * clone) stays "creating": never startable. */
static void
test_creating_stays (void)
{
  struct oci_state st = { .dirfd = -1 };
  st.status = OCI_CREATING;
  st.pid = getpid ();
  st.start_time = rt_proc_start_time (st.pid);
  oci_state_refresh (&st);
  is_str (oci_status_name (st.status), "creating", "a killed create's live child is not "
          "reported as created");
  oci_state_free (&st);
}

/* kill, delete -f and a failed start signal the container's init only
 * while it is the process state.json names: a pid now held by a process
 * that started at another time is left alone. */
static void
test_proc_signal (void)
{
  int status = 0;
  pid_t pid = fork ();
  if (pid == 0)
    {
      pause ();
      _exit (0);
    }
  uint64_t start = rt_proc_start_time (pid);
  errno = 0;
  ok (rt_proc_signal (pid, start + 1, SIGKILL) < 0 && errno == ESRCH,
      "another start time: ESRCH, no signal");
  ok (rt_proc_alive (pid, start), "the process was not signalled");
  ok (rt_proc_signal (pid, start, SIGKILL) == 0, "its own start time: sent");
  ok (waitpid (pid, &status, 0) == pid && WIFSIGNALED (status)
      && WTERMSIG (status) == SIGKILL, "and it died of it");
  errno = 0;
  ok (rt_proc_signal (pid, start, SIGKILL) < 0 && errno == ESRCH,
      "once reaped: ESRCH");
}

static void
test_salvage (void)
{
  char tmpl[] = "/tmp/sandlock-unit.XXXXXX";
  struct oci_globals g = { 0 };
  struct oci_state st = { .dirfd = -1 };
  struct cm_err *err = NULL;
  _cleanup_free_ char *dir = NULL;
  _cleanup_fd_ int dfd = -1;
  static const char bad[] = "{\"status\":\"created\",\"pid\":1,";
  static const char config[]
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
        "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\"},"
        "\"linux\":{\"cgroupsPath\":\"/salvage/c1\"}}";

  if (mkdtemp (tmpl) == NULL)
    {
      skip ("mkdtemp failed");
      return;
    }
  g.root = tmpl;
  dir = xasprintf ("%s/c1", tmpl);
  mkdir (dir, 0700);
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok (cm_atomic_write_at (dfd, "state.json", bad, strlen (bad), 0600, &err)
          == 0
          && cm_atomic_write_at (dfd, "config.json", config, strlen (config),
                                 0600, &err) == 0,
      "write a corrupt state.json and a config.json");
  ok (oci_state_load (&g, "c1", &st, &err) < 0 && err
          && strstr (err->msg, "corrupt"),
      "load refuses it, naming it corrupt");
  cm_err_free (&err);
  oci_state_free (&st);
  ok (oci_state_load_any (&g, "c1", &st, &err) == 0, "load_any takes it");
  is_str (oci_status_name (st.status), "stopped", "as stopped");
  ok (st.pid == 0, "without a pid whose start time is unknown");
  is_str (st.cgroup_path, "/salvage/c1",
          "with the cgroup config.json names");
  ok (oci_state_remove (&g, &st, &err) == 0, "and it can be removed");
  oci_state_free (&st);
  ok (oci_state_load_any (&g, "c1", &st, &err) == 1, "then it is gone");
  oci_state_free (&st);
  rmdir (tmpl);
}

int
main (void)
{
  test_big_annotations ();
  test_refused ();
  test_status_names ();
  test_creating_stays ();
  test_proc_signal ();
  test_salvage ();
  return tap_done ();
}
