/* criu-lite internals shared by restore.c and restore-plan.c. */
#ifndef SANDLOCK_CRIU_LITE_RESTORE_H
#define SANDLOCK_CRIU_LITE_RESTORE_H

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
};

int cl_restore_plan (struct cl_restore *r, struct cm_err **err);

struct cl_tree_rec;
struct criu_image
{
  struct cl_tree_rec *recs;    /* tree.img */
  size_t n;
  struct cl_image *procs;      /* per record: core in memory, pages fd */
  int tmpfs_fd;                /* tmpfs.img, checked */
};

#endif
