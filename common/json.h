/* Writing JSON by hand where a generator would be overkill (log lines,
 * small messages): one escaping routine for the whole project. */
#ifndef SANDLOCK_COMMON_JSON_H
#define SANDLOCK_COMMON_JSON_H

#include <stdio.h>

/* Writes |s| as a quoted JSON string ("null" when |s| is NULL): quotes,
 * backslashes and control characters escaped. */
void cm_json_write_str (FILE *f, const char *s);

#endif
