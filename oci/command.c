#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "common/json.h"
#include "common/util.h"

static struct oci_command *commands;

void
oci_command_register (struct oci_command *c)
{
  /* Keep the list sorted by name so --help reads well. */
  struct oci_command **p = &commands;
  while (*p && strcmp ((*p)->name, c->name) < 0)
    p = &(*p)->next;
  c->next = *p;
  *p = c;
}

const struct oci_command *
oci_command_find (const char *name)
{
  for (const struct oci_command *c = commands; c; c = c->next)
    if (strcmp (c->name, name) == 0)
      return c;
  return NULL;
}

const struct oci_command *
oci_command_list (void)
{
  return commands;
}

static void
log_line (const struct oci_globals *g, const char *level, const char *msg)
{
  FILE *f;
  int fd;
  char ts[64];
  struct timeval tv;
  struct tm tm;

  if (g == NULL || g->log == NULL)
    return;
  fd = open (g->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  f = fdopen (fd, "a");
  if (f == NULL)
    {
      close (fd);
      return;
    }
  gettimeofday (&tv, NULL);
  gmtime_r (&tv.tv_sec, &tm);
  strftime (ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  if (g->log_format == OCI_LOG_JSON)
    {
      fprintf (f, "{\"level\":\"%s\",\"msg\":", level);
      cm_json_write_str (f, msg);
      fprintf (f, ",\"time\":\"%s.%06ldZ\"}\n", ts, (long) tv.tv_usec);
    }
  else
    fprintf (f, "%s.%06ldZ %s: %s\n", ts, (long) tv.tv_usec, level, msg);
  fclose (f);
}

void
oci_log_error (const struct oci_globals *g, const char *msg)
{
  fprintf (stderr, "sandlock-oci: %s\n", msg);
  log_line (g, "error", msg);
}

/* Warnings and debug lines go to --log alone when it is given, as runc's
 * do: containerd's shim hands the container's stdio to the runtime, so a
 * line on stderr at create would land in the container's own output. */
void
oci_log_warning (const struct oci_globals *g, const char *msg)
{
  if (g == NULL || g->log == NULL)
    fprintf (stderr, "sandlock-oci: warning: %s\n", msg);
  log_line (g, "warning", msg);
}

void
oci_hook_warning (const void *g, const char *msg)
{
  oci_log_warning (g, msg);
}

void
oci_debug (const struct oci_globals *g, const char *fmt, ...)
{
  va_list ap;
  char *m = NULL;
  if (g == NULL || !g->debug)
    return;
  va_start (ap, fmt);
  if (vasprintf (&m, fmt, ap) < 0)
    m = NULL;
  va_end (ap);
  if (m == NULL)
    return;
  if (g->log == NULL)
    fprintf (stderr, "sandlock-oci: debug: %s\n", m);
  log_line (g, "debug", m);
  free (m);
}
