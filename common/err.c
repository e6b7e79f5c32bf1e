#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static char *
vformat (const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    return NULL;
  return s;
}

int
(cm_err_set) (struct cm_err **err, int errno_, const char *fmt, ...)
{
  va_list ap;
  char *m;
  struct cm_err *e;

  if (err == NULL)
    return -1;
  va_start (ap, fmt);
  m = vformat (fmt, ap);
  va_end (ap);
  e = calloc (1, sizeof *e);
  if (e == NULL)
    {
      free (m);
      return -1;
    }
  e->errno_ = errno_;
  if (m != NULL && errno_ != 0)
    {
      char *full = NULL;
      if (asprintf (&full, "%s: %s", m, strerror (errno_)) >= 0)
        {
          free (m);
          m = full;
        }
    }
  e->msg = m ? m : strdup ("out of memory");
  /* Setting twice hides the first error, the cause: a caller that went on
   * after a failure, or a callee that failed without saying so. */
#ifdef SANDLOCK_DEBUG
  if (*err != NULL)
    {
      fprintf (stderr, "cm_err_set: an error is already set (\"%s\"); "
               "the new one: \"%s\"\n", (*err)->msg, e->msg);
      abort ();
    }
#endif
  if (*err != NULL)
    cm_err_free (err);
  *err = e;
  return -1;
}

int
(cm_err_wrap) (struct cm_err **err, const char *fmt, ...)
{
  va_list ap;
  char *prefix, *full = NULL;

  if (err == NULL || *err == NULL)
    return -1;
  va_start (ap, fmt);
  prefix = vformat (fmt, ap);
  va_end (ap);
  if (prefix == NULL)
    return -1;
  if (asprintf (&full, "%s: %s", prefix, (*err)->msg ? (*err)->msg : "") >= 0)
    {
      free ((*err)->msg);
      (*err)->msg = full;
    }
  free (prefix);
  return -1;
}

void
cm_err_free (struct cm_err **err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}
