/* The one error type of sandlock-oci (docs/architecture.md, "Errors").
 *
 * Contract: a function that fails returns < 0 and sets *err exactly once;
 * on success it returns >= 0 and leaves *err untouched.  Only main() prints.
 */
#ifndef SANDLOCK_COMMON_ERR_H
#define SANDLOCK_COMMON_ERR_H

struct cm_err
{
  int errno_;   /* 0 when the failure is not a system error */
  char *msg;    /* owned; already includes ": strerror" when errno_ != 0 */
};

/* Sets *err (must be NULL) from a format; appends strerror(errno_) when
 * errno_ != 0.  Always returns -1.  An error already set is replaced, and
 * with -DSANDLOCK_DEBUG (the ASan builds of the tests) aborts, naming both. */
int cm_err_set (struct cm_err **err, int errno_, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Prefixes context to an already-set *err ("ctx: old").  Returns -1. */
int cm_err_wrap (struct cm_err **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Both always return -1, and say so where the call is: a static analyzer
 * reads one file at a time and would otherwise follow a `return
 * cm_err_set (...)` as a possible success into the caller's success path.
 * (A statement expression, so that a plain `cm_err_set (...);` statement
 * draws no unused-value warning.) */
#define cm_err_set(...) ({ cm_err_set (__VA_ARGS__); -1; })
#define cm_err_wrap(...) ({ cm_err_wrap (__VA_ARGS__); -1; })

/* Frees *err and sets it to NULL; accepts NULL. */
void cm_err_free (struct cm_err **err);

#endif
