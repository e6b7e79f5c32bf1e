/* Minimal TAP for unit tests: the plan is printed at the end from the count,
 * so adding a check never means editing a number.  Exit 77 = skip. */
#ifndef SANDLOCK_TESTS_TAP_H
#define SANDLOCK_TESTS_TAP_H
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                   \
  do {                                                                  \
    int ok_c_ = !!(cond);                                               \
    tap_n++;                                                            \
    if (!ok_c_)                                                         \
      tap_failed++;                                                     \
    printf ("%sok %d - ", ok_c_ ? "" : "not ", tap_n);                  \
    printf (__VA_ARGS__);                                               \
    printf ("\n");                                                      \
    if (!ok_c_)                                                         \
      printf ("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
  } while (0)

#define is_str(a, b, ...)                                               \
  do {                                                                  \
    const char *is_a_ = (a), *is_b_ = (b);                              \
    int is_c_ = is_a_ && is_b_ && strcmp (is_a_, is_b_) == 0;           \
    ok (is_c_, __VA_ARGS__);                                            \
    if (!is_c_)                                                         \
      printf ("#   got '%s', expected '%s'\n", is_a_ ? is_a_ : "(null)", \
              is_b_ ? is_b_ : "(null)");                                \
  } while (0)

#define skip(...)                                                       \
  do {                                                                  \
    tap_n++;                                                            \
    printf ("ok %d # skip ", tap_n);                                    \
    printf (__VA_ARGS__);                                               \
    printf ("\n");                                                      \
  } while (0)

static inline int
tap_done (void)
{
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
#endif
