/* list [-f table|json] [-q] */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/util.h"
#include "state.h"

/* A container whose state cannot be read is still listed, as "unknown"
 * with a warning saying why, so that it can be found and deleted (delete
 * -f removes it).  < 0 when it is gone after all (deleted meanwhile). */
static int
unreadable (const struct oci_globals *g, int rootfd, const char *id,
            struct oci_state *st, struct cm_err **e)
{
  bool there = faccessat (rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  if (there)
    oci_log_warning (g, (*e)->msg);
  cm_err_free (e);
  oci_state_free (st);
  if (!there)
    return -1;
  st->id = xstrdup (id);
  st->status = OCI_STATUS_UNKNOWN;
  return 0;
}

static int
cmd_list (struct oci_globals *g, int argc, char **argv, struct cm_err **err)
{
  static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                        { "quiet", no_argument, 0, 'q' },
                                        { 0, 0, 0, 0 } };
  bool json = false, quiet = false, first = true;
  DIR *d;
  struct dirent *de;
  int c;

  while ((c = getopt_long (argc, argv, "+f:q", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if (strcmp (optarg, "json") == 0)
          json = true;
        else if (strcmp (optarg, "table") != 0)
          return cm_err_set (err, 0, "list: --format: expected table or json");
        break;
      case 'q':
        quiet = true;
        break;
      default:
        return cm_err_set (err, 0, "list: usage: sandlock-oci list [-f "
                           "table|json] [-q]");
      }
  d = opendir (g->root);
  if (d == NULL && errno != ENOENT)
    return cm_err_set (err, errno, "list: --root `%s`", g->root);
  if (json)
    printf ("[");
  else if (!quiet)
    printf ("%-24s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS",
            "BUNDLE", "CREATED", "OWNER");
  while (d && (de = readdir (d)) != NULL)
    {
      struct oci_state st = { .dirfd = -1 };
      struct cm_err *e = NULL;
      if (de->d_name[0] == '.' || !oci_id_valid (de->d_name)
          || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
        continue;
      if (oci_state_load (g, de->d_name, &st, &e) < 0
          && unreadable (g, dirfd (d), de->d_name, &st, &e) < 0)
        continue;
      if (json)
        {
          _cleanup_free_ char *j = oci_state_json (&st, false);
          printf ("%s%s", first ? "" : ",", j);
        }
      else if (quiet)
        printf ("%s\n", st.id);
      else
        printf ("%-24s %-8d %-10s %-40s %-32s %s\n", st.id,
                st.status != OCI_STOPPED ? (int) st.pid : 0,
                oci_status_name (st.status),
                st.bundle ? st.bundle : "", st.created ? st.created : "",
                st.owner ? st.owner : "");
      first = false;
      oci_state_free (&st);
    }
  if (json)
    printf ("]\n");
  if (d)
    closedir (d);
  return 0;
}
OCI_COMMAND (list_command, "list", "list containers",
             "usage: sandlock-oci list [-f|--format table|json] [-q|--quiet]\n",
             cmd_list)
