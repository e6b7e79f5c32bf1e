/* Platforms ("os/arch[/variant]") of cached and single-platform images:
 * what --platform asks for against what an image config says it is. */
#include <string.h>

#include "common/util.h"
#include "image/priv.h"

int
img_platform_check (const char *p, struct cm_err **err)
{
  const char *a = strchr (p, '/');
  if (a == NULL || a == p || a[1] == '\0' || a[1] == '/')
    return cm_err_set (err, 0, "--platform `%s`: expected os/arch[/variant]", p);
  return 0;
}

/* Splits |s| into os, arch, variant ("" when absent). */
static void
split (char *s, char **os, char **arch, char **variant)
{
  char *p;
  *os = s;
  *arch = *variant = (char *) "";
  if ((p = strchr (s, '/')) == NULL)
    return;
  *p = '\0';
  *arch = p + 1;
  if ((p = strchr (*arch, '/')) == NULL)
    return;
  *p = '\0';
  *variant = p + 1;
}

static bool
part_eq (const char *want, const char *have)
{
  return strcmp (have, "?") == 0 || strcmp (want, have) == 0;
}

bool
img_platform_matches (const char *want, const char *have)
{
  _cleanup_free_ char *w = xstrdup (want), *h = xstrdup (have ? have : "?/?");
  char *wos, *warch, *wvar, *hos, *harch, *hvar;
  split (w, &wos, &warch, &wvar);
  split (h, &hos, &harch, &hvar);
  if (!part_eq (wos, hos) || !part_eq (warch, harch))
    return false;
  if (*wvar == '\0' || strcmp (hvar, wvar) == 0)
    return true;
  return *hvar == '\0' && strcmp (warch, "arm64") == 0 && strcmp (wvar, "v8") == 0;
}
