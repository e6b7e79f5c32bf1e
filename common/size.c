#include <stdbool.h>
#include <string.h>

#include "common/size.h"

/* The unit after the digits: its shift, or -1 when |u| is not one. */
static int
unit_shift (const char *u)
{
  static const char units[] = "kmgt";
  const char *p;
  int shift = 0;
  if (*u && (p = strchr (units, *u | 0x20)) != NULL)
    {
      shift = 10 * (int) (p - units + 1);
      u++;
      if ((*u | 0x20) == 'i')
        u++;
    }
  if ((*u | 0x20) == 'b')
    u++;
  return *u ? -1 : shift;
}

int
cm_size_parse (const char *s, uint64_t *out, const char **why)
{
  uint64_t v = 0;
  const char *p = s;
  int shift;
  if (*p < '0' || *p > '9')
    {
      *why = "expected a byte count: digits, then optionally k, m, g or t";
      return -1;
    }
  for (; *p >= '0' && *p <= '9'; p++)
    if (__builtin_mul_overflow (v, 10, &v)
        || __builtin_add_overflow (v, (uint64_t) (*p - '0'), &v))
      {
        *why = "too large";
        return -1;
      }
  if ((shift = unit_shift (p)) < 0)
    {
      *why = "unknown unit (expected k, m, g or t, with an optional b or ib)";
      return -1;
    }
  if (shift && v > (UINT64_MAX >> shift))
    {
      *why = "too large";
      return -1;
    }
  if ((v <<= shift) == 0)
    {
      *why = "must be more than 0";
      return -1;
    }
  *out = v;
  return 0;
}
