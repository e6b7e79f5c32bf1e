/* criu-lite internals shared by restore.c and restore-plan.c. */
#ifndef SANDLOCK_CRIU_LITE_RESTORE_H
#define SANDLOCK_CRIU_LITE_RESTORE_H

#include "criu-lite/criu.h"
#include "criu-lite/internal.h"

struct cl_special
{
  uint64_t addr, len;          /* [vvar], [vvar_vclock], [vdso] */
};

struct cl_restore
{
  const struct cl_image *img;
  struct cl_special cur[3], saved[3];
  int *vma_fd;                 /* per saved mapping; -1 anonymous */
  int *fd_tmp;                 /* per saved fd: its high temporary */
  int pages_fd, report_fd, base_fd;
  uint64_t base, total, code_len, data_len, stack_len, spare_len;
  uint64_t entry, stack_top;
  struct cl_plan *plan;
  const struct criu_seal *seal;  /* made in every thread before it resumes */
};

int cl_restore_plan (struct cl_restore *r, struct cm_err **err);

struct cl_tree_rec;
/* Shared memory objects of a tree, made before the restorers fork
 * (restore-shm.c); the fd of |v|'s object, or -1. */
int cl_shm_make (const struct cl_image *imgs, const struct cl_tree_rec *recs,
                 size_t n, struct cm_err **err);
int cl_shm_fd (const struct cl_image *img, const struct cl_vma *v);
void cl_shm_close (void);
struct criu_image
{
  struct cl_tree_rec *recs;    /* tree.img */
  size_t n;
  struct cl_image *procs;      /* per record: core in memory, pages fd */
  int tmpfs_fd;                /* tmpfs.img, checked */
};

#endif
