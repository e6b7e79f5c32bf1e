/* The caller's call lists (criu.h, struct criu_seal): checked once, made
 * from C by every restoring process (the narrowing); the stub makes the
 * seal itself from the plan (restore-plan.c, stub.c). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "criu-lite/seal.h"

int
cl_seal_check (const struct criu_seal *s, const char *what, struct cm_err **err)
{
  if (s == NULL)
    return 0;
  if (s->ncalls && s->calls == NULL)
    return cm_err_set (err, EINVAL, "restore: %s: calls missing", what);
  for (size_t i = 0; i < s->nrelocs; i++)
    if (s->relocs[i] % 8 || s->relocs[i] + 8 > s->data_len)
      return cm_err_set (err, EINVAL, "restore: %s: relocation %zu outside "
                         "its data", what, i);
  for (size_t i = 0; i < s->ncalls; i++)
    for (int k = 0; k < 6; k++)
      if ((s->calls[i].ptr_args >> k & 1)
          && (s->calls[i].arg[k] < 0 || (size_t) s->calls[i].arg[k] >= s->data_len))
        return cm_err_set (err, EINVAL, "restore: %s: call %zu argument %d "
                           "outside its data", what, i, k);
  return 0;
}

int
cl_seal_run (const struct criu_seal *s, const char *what, struct cm_err **err)
{
  _cleanup_free_ uint64_t *data = NULL;
  if (s == NULL || s->ncalls == 0)
    return 0;
  data = xcalloc (s->data_len / 8 + 1, 8);
  memcpy (data, s->data, s->data_len);
  for (size_t i = 0; i < s->nrelocs; i++)
    data[s->relocs[i] / 8] += (uint64_t) (uintptr_t) data;
  for (size_t i = 0; i < s->ncalls; i++)
    {
      const struct criu_call *c = &s->calls[i];
      long a[6];
      for (int k = 0; k < 6; k++)
        a[k] = c->arg[k] + (c->ptr_args >> k & 1 ? (long) (uintptr_t) data : 0);
      if (syscall (c->nr, a[0], a[1], a[2], a[3], a[4], a[5]) < 0
          && errno != c->ok_errno)
        return cm_err_set (err, errno, "restore: %s: system call %ld (step %zu)",
                           what, c->nr, i);
    }
  return 0;
}
