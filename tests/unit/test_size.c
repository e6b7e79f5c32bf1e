/* common/size.c: the byte counts of annotations such as
 * run.oci.sandlock.cow.max_disk (podman's units; docs/cow.md "Quota"). */
#include <stdint.h>

#include "common/size.h"
#include "tests/unit/tap.h"

static void
good (const char *s, uint64_t want)
{
  uint64_t v = 0;
  const char *why = NULL;
  int r = cm_size_parse (s, &v, &why);
  ok (r == 0 && v == want, "\"%s\" = %llu (got %llu%s%s)", s,
      (unsigned long long) want, (unsigned long long) v, why ? ": " : "",
      why ? why : "");
}

static void
bad (const char *s, const char *why_has)
{
  uint64_t v = 12345;
  const char *why = NULL;
  int r = cm_size_parse (s, &v, &why);
  ok (r < 0 && v == 12345 && why && strstr (why, why_has),
      "\"%s\" refused (%s)", s, why ? why : "no reason");
}

int
main (void)
{
  good ("1", 1);
  good ("1048576", 1048576);
  good ("10b", 10);
  good ("10B", 10);
  good ("4k", 4096);
  good ("4K", 4096);
  good ("4kb", 4096);
  good ("4KiB", 4096);
  good ("4ki", 4096);
  good ("3m", 3ull << 20);
  good ("3M", 3ull << 20);
  good ("3MB", 3ull << 20);
  good ("2g", 2ull << 30);
  good ("2G", 2ull << 30);
  good ("2GiB", 2ull << 30);
  good ("5t", 5ull << 40);
  good ("007", 7);
  good ("18446744073709551615", UINT64_MAX);
  good ("16777215t", 16777215ull << 40);

  bad ("", "expected a byte count");
  bad ("0", "more than 0");
  bad ("0k", "more than 0");
  bad ("-1", "expected a byte count");
  bad ("-5m", "expected a byte count");
  bad ("+5", "expected a byte count");
  bad (" 5", "expected a byte count");
  bad ("5 m", "unknown unit");
  bad ("m", "expected a byte count");
  bad ("abc", "expected a byte count");
  bad ("5x", "unknown unit");
  bad ("5mm", "unknown unit");
  bad ("5ib", "unknown unit");
  bad ("5kbb", "unknown unit");
  bad ("1.5g", "unknown unit");
  bad ("5m ", "unknown unit");
  bad ("0x10", "unknown unit");
  bad ("18446744073709551616", "too large");
  bad ("99999999999999999999999", "too large");
  bad ("16777216t", "too large");
  bad ("17179869184g", "too large");
  return tap_done ();
}
