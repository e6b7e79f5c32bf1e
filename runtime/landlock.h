/* Landlock policy of one container: derived from config.json and the
 * run.oci.sandlock.* annotations in the parent (rt_ll_policy_build), applied
 * with raw syscalls in the container process (rt_ll_child_apply).  Internal
 * to runtime/; the public face is runtime/confine.h.  docs/security.md. */
#ifndef SANDLOCK_RUNTIME_LANDLOCK_H
#define SANDLOCK_RUNTIME_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "config.h"

/* Access rights, spelled locally: Debian 12's <linux/landlock.h> predates
 * ABI 4-7 and we must build (and run) against older and newer kernels. */
#define RT_LL_FS_EXECUTE (1ULL << 0)
#define RT_LL_FS_WRITE_FILE (1ULL << 1)
#define RT_LL_FS_READ_FILE (1ULL << 2)
#define RT_LL_FS_READ_DIR (1ULL << 3)
#define RT_LL_FS_REMOVE_DIR (1ULL << 4)
#define RT_LL_FS_REMOVE_FILE (1ULL << 5)
#define RT_LL_FS_MAKE_CHAR (1ULL << 6)
#define RT_LL_FS_MAKE_DIR (1ULL << 7)
#define RT_LL_FS_MAKE_REG (1ULL << 8)
#define RT_LL_FS_MAKE_SOCK (1ULL << 9)
#define RT_LL_FS_MAKE_FIFO (1ULL << 10)
#define RT_LL_FS_MAKE_BLOCK (1ULL << 11)
#define RT_LL_FS_MAKE_SYM (1ULL << 12)
#define RT_LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define RT_LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define RT_LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define RT_LL_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define RT_LL_NET_CONNECT_TCP (1ULL << 1)
#define RT_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)    /* ABI 6 */
#define RT_LL_SCOPE_SIGNAL (1ULL << 1)

#define RT_LL_FS_V1 ((1ULL << 13) - 1)
/* Rights the kernel accepts on a rule for a non-directory. */
#define RT_LL_FS_FILE                                                   \
  (RT_LL_FS_EXECUTE | RT_LL_FS_WRITE_FILE | RT_LL_FS_READ_FILE          \
   | RT_LL_FS_TRUNCATE | RT_LL_FS_IOCTL_DEV)
#define RT_LL_FS_READ (RT_LL_FS_EXECUTE | RT_LL_FS_READ_FILE | RT_LL_FS_READ_DIR)
/* Write grant: everything but IOCTL_DEV, which only ttys and explicitly
 * configured devices get, and MAKE_CHAR/MAKE_BLOCK, which only a device
 * cgroup rule allowing "m" adds (docs/security.md). */
#define RT_LL_FS_WRITE                                                  \
  ((RT_LL_FS_V1 | RT_LL_FS_REFER | RT_LL_FS_TRUNCATE)                   \
   & ~(RT_LL_FS_MAKE_CHAR | RT_LL_FS_MAKE_BLOCK))
#define RT_LL_FS_TTY                                                    \
  (RT_LL_FS_READ_FILE | RT_LL_FS_WRITE_FILE | RT_LL_FS_READ_DIR         \
   | RT_LL_FS_IOCTL_DEV)
#define RT_LL_FS_DEVICE                                                 \
  (RT_LL_FS_READ_FILE | RT_LL_FS_WRITE_FILE)

/* The protections a user can degrade or disable by name. */
enum rt_ll_prot
{
  RT_LL_P_FS,
  RT_LL_P_FS_REFER,
  RT_LL_P_FS_TRUNCATE,
  RT_LL_P_FS_IOCTL_DEV,
  RT_LL_P_NET_TCP,
  RT_LL_P_SCOPE_SIGNAL,
  RT_LL_P_SCOPE_ABSTRACT_UNIX,
  RT_LL_P_N
};

enum rt_ll_mode
{
  RT_LL_STRICT = 0,     /* default: kernel lacks it => create fails */
  RT_LL_DEGRADE,        /* enforce when available, else run without */
  RT_LL_DISABLE,        /* never enforce */
};

enum rt_ll_state
{
  RT_LL_ACTIVE,
  RT_LL_DEGRADED,       /* degradable and unavailable: not enforced */
  RT_LL_DISABLED,
  RT_LL_NOT_REQUESTED,  /* net-tcp without net_allow_* annotations */
};

enum rt_ll_origin
{
  RT_LL_O_ROOT,         /* root.path */
  RT_LL_O_MOUNT,        /* mounts[] */
  RT_LL_O_DEVICE,       /* a /dev node */
  RT_LL_O_ANNOTATION,   /* fs_readable / fs_writable */
};

struct rt_ll_rule
{
  char *path;           /* absolute, as the container sees it, normalised */
  uint64_t access;      /* already intersected with handled_fs */
  enum rt_ll_origin origin;
  /* RT_LL_O_DEVICE: what must be there, else the rule is skipped. */
  uint32_t want_type;   /* S_IFCHR, S_IFBLK, S_IFIFO, S_IFDIR; 0 = any */
  uint64_t want_rdev;   /* st_rdev of a device node; 0 = any */
};

/* The inode one rule of the init was added on (runtime/landlock-pin.c).
 * The init's domain holds a reference to each such inode, so while the
 * container runs its (dev, ino) names that inode and no other. */
struct rt_ll_pin
{
  uint64_t index;       /* rule number in the policy */
  uint64_t access;      /* the rule's access, to check the lists agree */
  uint64_t dev, ino;
  uint32_t type;        /* st_mode & S_IFMT */
  uint32_t pad_;
};

struct rt_ll_policy
{
  int abi;
  enum rt_ll_mode mode[RT_LL_P_N];
  enum rt_ll_state state[RT_LL_P_N];
  uint64_t handled_fs, handled_net, scoped;
  struct rt_ll_rule *rules;
  size_t rules_len;
  size_t *index, index_cap;     /* path -> rule, only while building */
  uint16_t *bind_ports, *connect_ports;
  size_t bind_ports_len, connect_ports_len;
  char **masks;         /* fs_denied paths under a granted tree: mounted over */
  size_t masks_len;
  /* create: the child writes the pins of the rules it added to pin_fd */
  bool pin_record;
  int pin_fd;
  /* exec: only rules with a pin, and only on the very inode pinned */
  bool pin_check;
  struct rt_ll_pin *pins;       /* sorted by index */
  size_t pins_len;
  bool seccomp_default_disabled;  /* disable=seccomp */
  /* The pid / network namespace holds only the container's pod
   * (runtime/landlock-scope.c). */
  bool pidns_private, netns_private;
};

/* Protection names as used in annotations and by `check`. */
const char *rt_ll_prot_name (enum rt_ll_prot p);
/* The ABI that introduced protection |p|. */
int rt_ll_prot_abi (enum rt_ll_prot p);

/* The running kernel's Landlock ABI, 0 when Landlock is unavailable.
 * Probed once and cached. */
int rt_ll_abi (void);

/* Builds the policy for |c| as if the kernel had Landlock ABI |abi| (so
 * tests can ask for any ABI).  Validates every run.oci.sandlock.*
 * annotation; errors name the annotation or JSON path.  A strict
 * protection the ABI lacks fails naming the annotation that degrades it. */
int rt_ll_policy_build (const struct rt_config *c, int abi,
                        struct rt_ll_policy *out, struct cm_err **err);

void rt_ll_policy_clear (struct rt_ll_policy *p);

/* A process-wide default for run.oci.sandlock.disable (|disable|) or
 * .degrade: the runtime's config file (|rank| 1) or a global flag (2);
 * the higher rank replaces the lower, and a container's annotation
 * replaces both.  |origin| names the source in errors.  The items are
 * validated now.  |value| NULL forgets that default (for tests). */
int rt_ll_set_default (bool disable, const char *value, const char *origin,
                       int rank, struct cm_err **err);

/* From the runtime's config file: annotations that widen confinement
 * (disable, degrade, fs_writable) become errors naming |origin|; NULL
 * lifts the lock (for tests). */
void rt_ll_lock_annotations (const char *origin);

/* Drops the IPC scopes whose namespace holds only the container's pod
 * (created for it, or joined by a path that is not the initial or the
 * runtime's own namespace), unless annotation run.oci.sandlock.scope is
 * "container".  Sets pidns_private / netns_private. */
int rt_ll_scope_by_namespace (const struct rt_config *c,
                              struct rt_ll_policy *p, struct cm_err **err);

/* When mounts[|i|] binds a character device that the config lets the
 * container use (linux.resources.devices allows reading or writing it,
 * or linux.devices lists it), its st_rdev; else 0. */
uint64_t rt_ll_bound_device (const struct rt_config *c, size_t i);

/* The rule for exactly |path|, NULL when there is none.  For tests. */
const struct rt_ll_rule *rt_ll_policy_find (const struct rt_ll_policy *p,
                                            const char *path);

/* In the container process after every mount: masks fs_denied paths,
 * builds the ruleset with raw syscalls and restricts the process.  Needs
 * CAP_SYS_ADMIN or no_new_privs.  Paths are resolved from the current root
 * (the container's).  A rule whose path does not exist is skipped (it
 * grants nothing); so is a device rule whose path is or crosses a symlink
 * or is not the expected node, and with pin_check any rule whose path no
 * longer opens to its pinned inode.  An fs_readable/fs_writable path that
 * crosses a symlink fails (at create). */
int rt_ll_child_apply (const struct rt_ll_policy *p, struct cm_err **err);

/* Pins (runtime/landlock-pin.c) ------------------------------------- */

/* Parent, create, before clone(): a memfd the child writes the pins to. */
int rt_ll_pins_record (struct rt_ll_policy *p, struct cm_err **err);

/* Parent, create, after the child restricted itself: the record (header +
 * pins), malloc'd into *out. */
int rt_ll_pins_take (struct rt_ll_policy *p, char **out, size_t *len,
                     struct cm_err **err);

/* Parent, exec: validates a record against |p|'s rules (same config, so
 * the same list) and makes rt_ll_child_apply() add only pinned rules, and
 * each only when its path still opens to the pinned inode. */
int rt_ll_pins_use (struct rt_ll_policy *p, const char *rec, size_t len,
                    struct cm_err **err);

/* Child, create: writes the pins of the rules it added; closes pin_fd. */
int rt_ll_pins_write (const struct rt_ll_policy *p,
                      const struct rt_ll_pin *pins, size_t n,
                      struct cm_err **err);

/* The pin of rule |index|, NULL when there is none. */
const struct rt_ll_pin *rt_ll_pins_find (const struct rt_ll_policy *p,
                                         size_t index);

/* One line per protection: "landlock.fs: available (ABI 1)". */
char *rt_ll_describe_host (void);

/* Parses a "80,443,8000-8010" port list (for tests and net_allow_*). */
int rt_ll_parse_ports (const char *annotation, const char *value,
                       uint16_t **out, size_t *len, struct cm_err **err);

#endif
