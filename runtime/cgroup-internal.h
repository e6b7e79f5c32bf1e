/* Internals shared by runtime/cgroup.c (layout, paths, lifecycle),
 * runtime/cgroup-v1.c and runtime/cgroup-v2.c.  Every operation takes a
 * struct cg_host that names the mount points, so unit tests can point the
 * same code at a fake tree in a temp dir.  Not a public API. */
#ifndef SANDLOCK_RUNTIME_CGROUP_INTERNAL_H
#define SANDLOCK_RUNTIME_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

/* Largest cgroup file we read (cgroup.procs of a big container). */
#define CG_FILE_MAX (1 << 20)

enum cg_layout
{
  CG_NONE,
  CG_V1,
  CG_V2,
  CG_HYBRID
};

/* One v1 hierarchy: where it is mounted and what it carries. */
struct cg_v1h
{
  char *dir;                    /* "/sys/fs/cgroup/cpu,cpuacct" */
  char *ctrls;                  /* ",cpu,cpuacct," or ",name=systemd," */
};

struct cg_host
{
  enum cg_layout layout;
  char *v2_mount;               /* cgroup2 mount point, NULL when none */
  struct cg_v1h *v1;
  size_t v1_len;
};

struct rt_cgroup
{
  struct cg_host host;
  char *path;                   /* "/a/b": relative to every hierarchy root */
  /* Per hierarchy: the cgroup directory exists (and is ours to use). */
  bool *v1_on;
  bool v2_on;
  /* Directories create made, in creation order (undo on failure). */
  char **made;
  size_t made_len;
};

/* Layout detection from mountinfo text (first mount of each hierarchy). */
int cg_host_parse (const char *mountinfo, struct cg_host *h,
                   struct cm_err **err);
/* The host's layout, parsed once from /proc/self/mountinfo (cached);
 * NULL with *err set when it cannot be read. */
const struct cg_host *cg_host_get (struct cm_err **err);
void cg_host_copy (struct cg_host *dst, const struct cg_host *src);
void cg_host_clear (struct cg_host *h);
const char *cg_layout_name (enum cg_layout l);

/* Path rules (docs/cgroups.md). */
int cg_validate_path (const char *p, struct cm_err **err);
int cg_systemd_path (const char *spec, char **out, struct cm_err **err);
/* |self_cgroup| is the text of /proc/self/cgroup. */
int cg_resolve_path (const struct rt_cgroup_opts *o, enum cg_layout layout,
                     const char *self_cgroup, char **out, struct cm_err **err);
uint64_t cg_shares_to_weight (uint64_t shares);
/* Does |r| set any limit (devices rules aside)? */
bool cg_resources_needed (const struct rt_resources *r);
uint64_t cg_blkio_to_io_weight (uint64_t weight);

/* create/open on an explicit host (the public ones use cg_host_get). */
int cg_create_on (const struct cg_host *h, const char *path,
                  const struct rt_resources *r, pid_t pid,
                  struct rt_cgroup **out, struct cm_err **err);
int cg_open_on (const struct cg_host *h, const char *path,
                struct rt_cgroup **out, struct cm_err **err);

/* File helpers: |dir|/|file|. */
int cg_write (const char *dir, const char *file, const char *val,
              struct cm_err **err);
int cg_writef (const char *dir, const char *file, struct cm_err **err,
               const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* Reads a file into *out.  An absent file is not an error: 0 with *out
 * NULL (the caller says what its absence means); any other failure is -1
 * with *err set. */
int cg_read (const char *dir, const char *file, char **out,
             struct cm_err **err);
bool cg_exists (const char *dir, const char *file);
/* Value of "key N" in a flat-keyed file (cpu.stat, memory.events). */
bool cg_keyed (const char *text, const char *key, uint64_t *out);
/* A number or "max" (UINT64_MAX). */
uint64_t cg_num (const char *text);
/* Records |dir| as created by us (undo list). */
void cg_made (struct rt_cgroup *cg, const char *dir);

/* v1 (runtime/cgroup-v1.c) */
int cg_v1_index (const struct cg_host *h, const char *ctrl);
char *cg_v1_dir (const struct rt_cgroup *cg, const char *ctrl);
int cg_v1_check (const struct cg_host *h, const struct rt_resources *r,
                 struct cm_err **err);
int cg_v1_mkdirs (struct rt_cgroup *cg, struct cm_err **err);
int cg_v1_apply (struct rt_cgroup *cg, const struct rt_resources *r,
                 bool update, struct cm_err **err);
int cg_v1_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err);
int cg_v1_is_frozen (struct rt_cgroup *cg, struct cm_err **err);
int cg_v1_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
                 struct cm_err **err);

/* v2 (runtime/cgroup-v2.c); also the hybrid "unified" tree. */
char *cg_v2_dir (const struct rt_cgroup *cg);
int cg_v2_check (const struct cg_host *h, const struct rt_resources *r,
                 struct cm_err **err);
int cg_v2_mkdirs (struct rt_cgroup *cg, const struct rt_resources *r,
                  struct cm_err **err);
int cg_v2_apply (struct rt_cgroup *cg, const struct rt_resources *r,
                 struct cm_err **err);
int cg_v2_freeze (struct rt_cgroup *cg, bool frozen, struct cm_err **err);
/* The one wait on cgroup.events (freeze and emptiness): until |key|
 * reads |want| (0), the file is gone (1), or |deadline| (cg_now_ms)
 * passes (-1, ETIMEDOUT). */
long cg_now_ms (void);              /* CLOCK_MONOTONIC */
int cg_v2_events_wait (const char *dir, const char *key, uint64_t want,
                       long deadline, struct cm_err **err);
int cg_v2_is_frozen (struct rt_cgroup *cg, struct cm_err **err);
int cg_v2_stats (struct rt_cgroup *cg, struct rt_cgroup_stats *st,
                 struct cm_err **err);
/* 1 when cgroup.kill did the job, 0 when unavailable, < 0 on error. */
int cg_v2_kill (struct rt_cgroup *cg, struct cm_err **err);

/* blockIO devices, hugepageLimits, network, rdma (runtime/cgroup-limits.c).
 * Errors name the linux.resources field. */
bool cg_limits_needed (const struct rt_resources *r);
int cg_v1_limits_check (const struct cg_host *h, const struct rt_resources *r,
                        struct cm_err **err);
int cg_v1_limits_apply (struct rt_cgroup *cg, const struct rt_resources *r,
                        struct cm_err **err);
/* Does |r| need v2 controller |c| (of length |cl|) for these limits? */
bool cg_v2_limits_need (const struct rt_resources *r, const char *c,
                        size_t cl);
int cg_v2_limits_check (const struct rt_resources *r, struct cm_err **err);
int cg_v2_limits_apply (const char *dir, const struct rt_resources *r,
                        struct cm_err **err);

/* Device rules (runtime/cgroup-devices.c). */
#define CG_DEV_M 1u             /* = BPF_DEVCG_ACC_MKNOD */
#define CG_DEV_R 2u
#define CG_DEV_W 4u
#define CG_DEV_RWM 7u

struct cg_dev_rule
{
  bool allow;
  char type;                    /* 'a', 'b', 'c' */
  int64_t major, minor;         /* -1 = any */
  unsigned access;              /* CG_DEV_* bits */
};

/* Validates |r|'s linux.resources.devices (errors name the JSON path) and
 * returns them followed by the default devices; the implicit first rule
 * is "deny all".  *out is malloc'd. */
int cg_dev_rules (const struct rt_resources *r, struct cg_dev_rule **out,
                  size_t *n, struct cm_err **err);
/* The verdict of |rules| for one request: the last matching rule wins (an
 * allow rule matches when it covers every requested right, a deny rule
 * when it names any); none matching denies.  The BPF program computes the
 * same; tests compare the two. */
bool cg_dev_match (const struct cg_dev_rule *rules, size_t n, char type,
                   uint32_t major, uint32_t minor, unsigned access);
struct bpf_insn;
/* The BPF_PROG_TYPE_CGROUP_DEVICE program for |rules|; returns the number
 * of instructions, *out is malloc'd. */
size_t cg_dev_prog (const struct cg_dev_rule *rules, size_t n,
                    struct bpf_insn **out);
/* Restricts devices in |cg|: v1 devices files when the host has the v1
 * controller, else the BPF program on the v2 directory.  When that is not
 * possible (no hierarchy, bpf(2) not permitted) it fails only if
 * |required|.  |update| only adds the given rules (v1); on v2 the program
 * attached at create stays as it is. */
int cg_dev_apply (struct rt_cgroup *cg, const struct rt_resources *r,
                  bool required, bool update, struct cm_err **err);
/* Can this process load the device program?  Loads the default one and
 * closes it, attaching nothing: 0, or the errno of bpf(2) (rt_kfeat's
 * RT_KF_BPF_DEVICE, which callers ask instead). */
int cg_dev_bpf_probe (void);

#endif
