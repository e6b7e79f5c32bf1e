/* Pinned parent directories of recent fast-path lookups (runtime/vroot.h
 * says what can go stale and why it does not matter beyond
 * VR_DCACHE_TTL_MS).  Sixteen slots, replaced oldest first: a loop over a
 * few directories hits, and a miss costs the one openat2 it would have
 * cost anyway.  A slot is found only by the credentials it was resolved
 * with (vr_cred_tag): another caller's pin would skip the search checks
 * of the directories above it.  The clock is the vDSO's: no system call. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "vroot.h"

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
drop (struct vr_dcache *dc, size_t i)
{
  if (dc->s[i].vpath == NULL)
    return;
  free (dc->s[i].vpath);
  close (dc->s[i].fd);
  dc->s[i].vpath = NULL;
}

int
vr_dcache_get (struct vr_dcache *dc, const char *vpath, uint64_t cred)
{
  int64_t t = now_ms ();
  for (size_t i = 0; i < VR_DCACHE_N; i++)
    {
      if (dc->s[i].vpath == NULL || dc->s[i].cred != cred
          || strcmp (dc->s[i].vpath, vpath) != 0)
        continue;
      if (t - dc->s[i].born < VR_DCACHE_TTL_MS)
        return dc->s[i].fd;
      drop (dc, i);
      return -1;
    }
  return -1;
}

void
vr_dcache_put (struct vr_dcache *dc, const char *vpath, uint64_t cred, int fd)
{
  size_t i = dc->next++ % VR_DCACHE_N;
  drop (dc, i);
  dc->s[i].vpath = xstrdup (vpath);
  dc->s[i].fd = fd;
  dc->s[i].cred = cred;
  dc->s[i].born = now_ms ();
}

void
vr_dcache_clear (struct vr_dcache *dc)
{
  for (size_t i = 0; i < VR_DCACHE_N; i++)
    drop (dc, i);
}
