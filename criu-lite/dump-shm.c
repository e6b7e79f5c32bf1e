/* Shared memory across a tree: a MAP_SHARED mapping of a shmem object
 * (shared anonymous memory, a memfd, SysV shm) is recorded with the
 * object's device and inode (as /proc/PID/maps shows them), and its
 * content is saved once: by the first process dumped that maps that part
 * of the object; a later one names that process instead (section shmem).
 * Restore makes one object per device and inode (restore-shm.c). */
#include "criu-lite/internal.h"
#include "common/util.h"

bool
cl_shm_note (struct cl_dump *d, const struct cl_vma *v, uint64_t dev,
             uint64_t ino)
{
  struct cl_shm_tab *t = d->shm_seen;
  struct cl_shm rec = { v->start, dev, ino, cl_ns_tid (d->pid, d->pid), 0 };
  uint64_t len = v->end - v->start;
  bool held = false;
  for (size_t i = 0; t && i < t->n && !held; i++)
    if (t->v[i].dev == dev && t->v[i].ino == ino && t->v[i].pgoff <= v->pgoff
        && v->pgoff + len <= t->v[i].pgoff + t->v[i].len)
      {
        rec.owner = t->v[i].owner;
        held = true;
      }
  if (!held && t)
    {
      t->v = xrealloc (t->v, (t->n + 1) * sizeof *t->v);
      t->v[t->n++] = (struct cl_shm_seen) { dev, ino, v->pgoff, len, rec.owner };
    }
  cl_buf_add (&d->shms, &rec, sizeof rec);
  return held;
}
