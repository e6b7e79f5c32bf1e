/* criu-lite internals: tree.img (tree.c). */
#ifndef SANDLOCK_CRIU_LITE_TREE_H
#define SANDLOCK_CRIU_LITE_TREE_H

#include "criu-lite/internal.h"

struct cl_tree_rec
{
  int32_t pid, ppid, pgid, sid;
};

int cl_tree_write (int dirfd, const struct cl_tree_rec *recs, size_t n,
                   struct cm_err **err);
/* Loads and checks dir/tree.img: sha256, parents listed first. */
int cl_tree_load (const char *dir, struct cl_tree_rec **out, size_t *n,
                  struct cm_err **err);

#endif
