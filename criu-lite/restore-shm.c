/* The shared memory of a restored tree: one memfd per object the image
 * names (device and inode where captured), sized to cover every mapping
 * of it and filled from the processes that saved its content, made in
 * the root restorer before it forks the others so that every restorer
 * inherits it; each maps it MAP_SHARED at its saved offset (restore.c,
 * restore-plan.c).  Like the pipes' table, process-wide. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "criu-lite/restore.h"
#include "criu-lite/tree.h"

struct obj
{
  uint64_t dev, ino, size;
  int fd;
};

static struct obj *objs;
static size_t nobjs;

static struct obj *
find (uint64_t dev, uint64_t ino)
{
  for (size_t i = 0; i < nobjs; i++)
    if (objs[i].dev == dev && objs[i].ino == ino)
      return &objs[i];
  return NULL;
}

static const struct cl_vma *
vma_at (const struct cl_image *img, uint64_t start)
{
  for (size_t i = 0; i < img->nvmas; i++)
    if (img->vmas[i].start == start)
      return &img->vmas[i];
  return NULL;  /* image.c checked that it is there */
}

/* Whether process |holder| of the tree saved content of object |s|. */
static bool
holds (const struct cl_image *imgs, const struct cl_tree_rec *recs, size_t n,
       const struct cl_shm *s)
{
  for (size_t i = 0; i < n; i++)
    if (recs[i].pid == s->owner)
      for (size_t k = 0; k < imgs[i].nshms; k++)
        if (imgs[i].shms[k].dev == s->dev && imgs[i].shms[k].ino == s->ino
            && imgs[i].shms[k].owner == s->owner)
          return true;
  return false;
}

static int
size_objects (const struct cl_image *imgs, const struct cl_tree_rec *recs,
              size_t n, struct cm_err **err)
{
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < imgs[i].nshms; k++)
      {
        const struct cl_shm *s = &imgs[i].shms[k];
        const struct cl_vma *v = vma_at (&imgs[i], s->start);
        struct obj *o = find (s->dev, s->ino);
        uint64_t end = v->pgoff + (v->end - v->start);
        if (!holds (imgs, recs, n, s))
          return cm_err_set (err, 0, "image: the shared memory process %d "
                             "maps at %#llx names process %d, which does not "
                             "hold it", recs[i].pid,
                             (unsigned long long) s->start, s->owner);
        if (o == NULL)
          {
            objs = xrealloc (objs, (nobjs + 1) * sizeof *objs);
            o = &objs[nobjs++];
            *o = (struct obj) { s->dev, s->ino, 0, -1 };
          }
        if (end > o->size)
          o->size = end;
      }
  return 0;
}

/* Process |img|'s saved pages of mapping |v| into the object. */
static int
fill (const struct cl_image *img, const struct cl_vma *v, char *map,
      struct cm_err **err)
{
  for (size_t r = 0; r < img->nruns; r++)
    {
      const struct cl_run *run = &img->runs[r];
      uint64_t done = 0;
      if (run->addr < v->start || run->addr >= v->end)
        continue;
      while (done < run->len)
        {
          ssize_t got = pread (img->pages_fd,
                               map + v->pgoff + (run->addr - v->start) + done,
                               run->len - done, (off_t) (run->off + done));
          if (got < 0 && errno == EINTR)
            continue;
          if (got <= 0)
            return cm_err_set (err, got < 0 ? errno : EIO, "pages.img: read "
                               "shared memory at %#llx",
                               (unsigned long long) run->addr);
          done += (uint64_t) got;
        }
    }
  return 0;
}

static int
make_object (struct obj *o, const struct cl_image *imgs,
             const struct cl_tree_rec *recs, size_t n, struct cm_err **err)
{
  char *map;
  int r = 0;
  o->fd = memfd_create ("criu-lite-shm", MFD_CLOEXEC);
  if (o->fd < 0)
    return cm_err_set (err, errno, "memfd_create for shared memory");
  if (ftruncate (o->fd, (off_t) o->size) < 0)
    return cm_err_set (err, errno, "size shared memory to %llu bytes",
                       (unsigned long long) o->size);
  map = mmap (NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0);
  if (map == MAP_FAILED)
    return cm_err_set (err, errno, "map shared memory");
  for (size_t i = 0; r == 0 && i < n; i++)
    for (size_t k = 0; r == 0 && k < imgs[i].nshms; k++)
      {
        const struct cl_shm *s = &imgs[i].shms[k];
        if (s->dev == o->dev && s->ino == o->ino && s->owner == recs[i].pid)
          r = fill (&imgs[i], vma_at (&imgs[i], s->start), map, err);
      }
  munmap (map, o->size);
  return r;
}

int
cl_shm_make (const struct cl_image *imgs, const struct cl_tree_rec *recs,
             size_t n, struct cm_err **err)
{
  if (size_objects (imgs, recs, n, err) < 0)
    return -1;
  for (size_t i = 0; i < nobjs; i++)
    if (make_object (&objs[i], imgs, recs, n, err) < 0)
      return -1;
  return 0;
}

int
cl_shm_fd (const struct cl_image *img, const struct cl_vma *v)
{
  for (size_t k = 0; k < img->nshms; k++)
    if (img->shms[k].start == v->start)
      {
        struct obj *o = find (img->shms[k].dev, img->shms[k].ino);
        return o ? o->fd : -1;
      }
  return -1;
}

void
cl_shm_close (void)
{
  for (size_t i = 0; i < nobjs; i++)
    if (objs[i].fd >= 0)
      close (objs[i].fd);
  free (objs);
  objs = NULL;
  nobjs = 0;
}
