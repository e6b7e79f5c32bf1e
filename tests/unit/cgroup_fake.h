/* Reading and writing files of the fake cgroup trees the cgroup unit tests
 * build under a temp dir.  Included by test_cgroup.c and test_cgroup_limits.c. */
#ifndef TESTS_UNIT_CGROUP_FAKE_H
#define TESTS_UNIT_CGROUP_FAKE_H

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "runtime/cgroup-internal.h"

static inline void
put (const char *dir, const char *file, const char *text)
{
  char *p = xasprintf ("%s/%s", dir, file);
  FILE *f = fopen (p, "w");
  if (f)
    {
      fputs (text, f);
      fclose (f);
    }
  free (p);
}

/* FILE's first line, or NULL when it cannot be read; the caller frees. */
static inline char *
get (const char *dir, const char *file)
{
  char *t = NULL;
  struct cm_err *e = NULL;
  if (cg_read (dir, file, &t, &e) != 0)
    {
      cm_err_free (&e);
      return NULL;
    }
  t[strcspn (t, "\n")] = '\0';
  return t;
}

#endif
