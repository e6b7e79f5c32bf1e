/* A namespace-less container's supervisor state, prepared before the init
 * exists (runtime/vroot-setup.c; docs/nsless.md "What is left").
 * runtime/-private. */
#ifndef SANDLOCK_RUNTIME_VROOT_SETUP_H
#define SANDLOCK_RUNTIME_VROOT_SETUP_H

#include "vroot-sup.h"

struct vr_setup
{
  char *dir;                    /* <state>/vroot */
  char *exec_path;              /* <state>/vroot/exec: the init's kernel cwd */
  char *tmpfs_path;             /* <state>/vroot/tmpfs: tmpfs-<i> directories */
  int exec_dir;                 /* O_PATH of exec_path */
  struct vr_mount_spec *specs;
  size_t nspecs;
  char **owned;                 /* strings the specs borrow */
  struct vroot v;
  bool built;
  char *cwd;                    /* process.cwd, canonical in the view */
  struct vr_sup sup;            /* handed to vr_sup_answer */
  int trapped[160];             /* vr_trapped_syscalls */
  size_t ntrapped;
};

/* Makes the private directories under |state_dir|, draws |c|'s mounts over
 * |rootfs| (runtime/vroot-config.c), resolves process.cwd in the view
 * (created when missing, as runc does) and readies the supervisor.
 * Errors name the field (mounts[i], process.cwd).  On failure nothing is
 * left open (the directories stay for `delete` with the state). */
int vr_setup_prepare (struct vr_setup *s, const struct rt_config *c,
                      const char *rootfs, const char *state_dir,
                      struct cm_err **err)
    __attribute__ ((nonnull (1, 2, 3, 4)));

void vr_setup_free (struct vr_setup *s);

#endif
