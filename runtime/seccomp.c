/* seccomp: compile in the parent (libseccomp), load raw in the child.
 * See runtime/seccomp.h, docs/security.md and style §6.6. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/json.h"
#include "common/fdpass.h"
#include "common/util.h"
#include "runtime.h"
#include "seccomp.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define E_PRIV "needs privileges a container does not get by default"

/* What a container never needs.  Each entry is documented (with this
 * reason) in docs/security.md; keep the two in step. */
const struct rt_sc_block rt_sc_default_blocklist[] = {
  { "init_module", EPERM, false, "loads kernel code" },
  { "finit_module", EPERM, false, "loads kernel code" },
  { "delete_module", EPERM, false, "unloads kernel code" },
  { "kexec_load", EPERM, false, "replaces the running kernel" },
  { "kexec_file_load", EPERM, false, "replaces the running kernel" },
  { "bpf", EPERM, false, "kernel-wide programs and maps; large attack "
    "surface" },
  { "perf_event_open", EPERM, false, "observes other processes and the "
    "kernel; side channels" },
  { "userfaultfd", EPERM, false, "stalls kernel accesses at will; a "
    "standard exploit primitive" },
  { "keyctl", EPERM, false, "the kernel keyring is not namespaced" },
  { "add_key", EPERM, false, "the kernel keyring is not namespaced" },
  { "request_key", EPERM, false, "the kernel keyring is not namespaced" },
  { "reboot", EPERM, false, "reboots the host (outside a pid namespace)" },
  { "swapon", EPERM, false, "host-wide swap configuration" },
  { "swapoff", EPERM, false, "host-wide swap configuration" },
  { "open_by_handle_at", EPERM, false, "opens any inode of a filesystem, "
    "bypassing the mount view (the 'shocker' escape)" },
  { "name_to_handle_at", EPERM, false, "companion of open_by_handle_at" },
  { "clock_settime", EPERM, false, "the clock is host-wide" },
  { "clock_adjtime", EPERM, false, "the clock is host-wide" },
  { "settimeofday", EPERM, false, "the clock is host-wide" },
  { "adjtimex", EPERM, false, "the clock is host-wide" },
  { "iopl", EPERM, false, "raw I/O port access" },
  { "ioperm", EPERM, false, "raw I/O port access" },
  { "acct", EPERM, false, "host-wide process accounting" },
  { "quotactl", EPERM, false, "host filesystem quotas" },
  { "quotactl_fd", EPERM, false, "host filesystem quotas" },
  { "lookup_dcookie", EPERM, false, "kernel profiling interface" },
  { "nfsservctl", EPERM, false, "obsolete kernel NFS server control" },
  { "uselib", EPERM, false, "obsolete; loads a library into memory" },
  { "_sysctl", EPERM, false, "obsolete sysctl interface" },
  { "syslog", EPERM, false, "reads and clears the host kernel log" },
  { "io_uring_setup", EPERM, false, "io_uring performs operations that "
    "seccomp never sees" },
  { "io_uring_enter", EPERM, false, "io_uring performs operations that "
    "seccomp never sees" },
  { "io_uring_register", EPERM, false, "io_uring performs operations "
    "that seccomp never sees" },
  { "mount", EPERM, true, E_PRIV " (mount topology; Landlock forbids it "
    "too)" },
  { "umount2", EPERM, true, E_PRIV " (mount topology)" },
  { "pivot_root", EPERM, true, E_PRIV " (mount topology)" },
  { "fsopen", EPERM, true, E_PRIV " (new mount API)" },
  { "fsconfig", EPERM, true, E_PRIV " (new mount API)" },
  { "fsmount", EPERM, true, E_PRIV " (new mount API)" },
  { "fspick", EPERM, true, E_PRIV " (new mount API)" },
  { "move_mount", EPERM, true, E_PRIV " (new mount API)" },
  { "open_tree", EPERM, true, E_PRIV " (new mount API)" },
  { "mount_setattr", EPERM, true, E_PRIV " (new mount API)" },
  { "setns", EPERM, true, E_PRIV " (joins other namespaces)" },
  { "clone3", ENOSYS, false, "its flags live in memory BPF cannot read; "
    "ENOSYS makes libc fall back to clone, whose flags are filtered" },
  { NULL, 0, false, NULL },
};

static const unsigned long ns_flags[]
    = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
        CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET };

static bool
strv_has (char **v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

/* personality(2): only the standard personas (PER_LINUX, PER_LINUX32,
 * their UNAME26 variants) and the 0xffffffff query.  One comparison per
 * argument per rule (libseccomp), so the complement is spelled as masked
 * compares that can never match 0xffffffff: "bit b set and bit 31 clear"
 * for every non-standard bit, "bit 31 set and bit c clear" for c < 31. */
static int
add_personality_rules (scmp_filter_ctx ctx)
{
  int nr = seccomp_syscall_resolve_name ("personality");
  uint32_t act = SCMP_ACT_ERRNO (EPERM);
  for (int b = 0; b < 31; b++)
    {
      uint64_t bit = 1ULL << b;
      int r;
      if (b != 3 && b != 17)
        {
          r = seccomp_rule_add (ctx, act, nr, 1,
                                SCMP_A0 (SCMP_CMP_MASKED_EQ,
                                         0x80000000ULL | bit, bit));
          if (r < 0)
            return r;
        }
      r = seccomp_rule_add (ctx, act, nr, 1,
                            SCMP_A0 (SCMP_CMP_MASKED_EQ, 0x80000000ULL | bit,
                                     0x80000000ULL));
      if (r < 0)
        return r;
    }
  return 0;
}

static int
build_default (const struct rt_config *c, scmp_filter_ctx ctx,
               struct cm_err **err)
{
  const struct rt_capabilities *caps
      = c->process ? c->process->capabilities : NULL;
  bool privileged = caps && strv_has (caps->bounding, caps->bounding_len,
                                      "CAP_SYS_ADMIN");
  int r;

  /* Foreign architectures and x32 numbers: the filter holds the native
   * arch only, so anything else takes the bad-arch action. */
  r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (r < 0)
    return cm_err_set (err, -r, "seccomp: bad-arch action");
  for (const struct rt_sc_block *b = rt_sc_default_blocklist; b->name; b++)
    {
      if (b->unless_privileged && privileged)
        continue;
      int nr = seccomp_syscall_resolve_name (b->name);
      if (nr == __NR_SCMP_ERROR)
        continue;
      r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (b->errno_), nr, 0);
      if (r < 0)
        return cm_err_set (err, -r, "seccomp: default rule for %s", b->name);
    }
  if (!privileged)
    for (size_t i = 0; i < ARRAY_SIZE (ns_flags) + 1; i++)
      {
        uint64_t f = i < ARRAY_SIZE (ns_flags) ? ns_flags[i] : CLONE_NEWTIME;
        /* CLONE_NEWTIME shares its bit with the exit signal in clone(2). */
        if (f != CLONE_NEWTIME)
          r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone),
                                1, SCMP_A0 (SCMP_CMP_MASKED_EQ, f, f));
        if (r >= 0)
          r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM),
                                SCMP_SYS (unshare), 1,
                                SCMP_A0 (SCMP_CMP_MASKED_EQ, f, f));
        if (r < 0)
          return cm_err_set (err, -r, "seccomp: namespace-flag rule");
      }
  /* Terminal input injection into the host's tty. */
  static const unsigned long bad_ioctls[] = { TIOCSTI, TIOCLINUX };
  for (size_t i = 0; i < ARRAY_SIZE (bad_ioctls); i++)
    {
      r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (ioctl), 1,
                            SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffULL,
                                     bad_ioctls[i]));
      if (r < 0)
        return cm_err_set (err, -r, "seccomp: ioctl rule");
    }
  if ((r = add_personality_rules (ctx)) < 0)
    return cm_err_set (err, -r, "seccomp: personality rules");
  return 0;
}

/* ---- linux.seccomp ----------------------------------------------------- */

static const struct
{
  const char *name;
  uint32_t act;
} simple_actions[] = {
  /* OCI SCMP_ACT_KILL is kill-thread, as in libseccomp (style §6.6). */
  { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG },
  { "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY },
};

static int
parse_action (const char *name, bool errno_present, uint32_t errno_ret,
              uint32_t *out)
{
  uint32_t e = errno_present ? errno_ret : EPERM;
  if (name == NULL)
    return -1;
  if (strcmp (name, "SCMP_ACT_ERRNO") == 0)
    return *out = SCMP_ACT_ERRNO (e), 0;
  if (strcmp (name, "SCMP_ACT_TRACE") == 0)
    return *out = SCMP_ACT_TRACE (e), 0;
  for (size_t i = 0; i < ARRAY_SIZE (simple_actions); i++)
    if (strcmp (name, simple_actions[i].name) == 0)
      return *out = simple_actions[i].act, 0;
  return -1;
}

static const struct
{
  const char *name;
  enum scmp_compare op;
} ops[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static int
parse_op (const char *s, enum scmp_compare *out)
{
  for (size_t i = 0; s && i < ARRAY_SIZE (ops); i++)
    if (strcmp (s, ops[i].name) == 0)
      return *out = ops[i].op, 0;
  return -1;
}

static int
add_arches (const struct rt_seccomp *s, scmp_filter_ctx ctx,
            struct cm_err **err)
{
  for (size_t i = 0; i < s->architectures_len; i++)
    {
      const char *a = s->architectures[i];
      char name[32];
      size_t k = 0;
      if (cm_startswith (a, "SCMP_ARCH_"))
        for (const char *p = a + 10; *p && k < sizeof name - 1; p++)
          name[k++] = (char) tolower ((unsigned char) *p);
      name[k] = '\0';
      uint32_t arch = k ? seccomp_arch_resolve_name (name) : 0;
      if (arch == 0)
        return cm_err_set (err, 0, "linux.seccomp.architectures[%zu]: "
                           "unknown architecture \"%s\"", i, a);
      int r = seccomp_arch_add (ctx, arch);
      if (r < 0 && r != -EEXIST)
        return cm_err_set (err, -r, "linux.seccomp.architectures[%zu]: "
                           "add \"%s\"", i, a);
    }
  return 0;
}

static const struct
{
  const char *name;
  unsigned flag;
} filter_flags[] = {
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

static int
parse_flags (const struct rt_seccomp *s, unsigned *flags, struct cm_err **err)
{
  for (size_t i = 0; i < s->flags_len; i++)
    {
      const char *f = s->flags[i];
      size_t k = 0;
      while (k < ARRAY_SIZE (filter_flags)
             && strcmp (f, filter_flags[k].name) != 0)
        k++;
      if (k == ARRAY_SIZE (filter_flags))
        return cm_err_set (err, 0, "linux.seccomp.flags[%zu]: unknown flag "
                           "\"%s\"", i, f);
      *flags |= filter_flags[k].flag;
    }
  return 0;
}

/* Validates syscalls[i].args into |cmp| (args_len entries) and tells
 * whether every comparison is on the same argument.  Done for every rule,
 * even one that is then skipped, so a bad profile never passes silently. */
static int
parse_args (const struct rt_seccomp_syscall *sc, size_t i,
            struct scmp_arg_cmp *cmp, bool *same_index, struct cm_err **err)
{
  *same_index = sc->args_len > 1;
  for (size_t a = 0; a < sc->args_len; a++)
    {
      enum scmp_compare op;
      if (sc->args[a].index > 5)
        return cm_err_set (err, 0, "linux.seccomp.syscalls[%zu].args[%zu]."
                           "index: %u is not 0-5", i, a, sc->args[a].index);
      if (parse_op (sc->args[a].op, &op) < 0)
        return cm_err_set (err, 0, "linux.seccomp.syscalls[%zu].args[%zu].op:"
                           " unknown operator \"%s\"", i, a,
                           sc->args[a].op ? sc->args[a].op : "");
      cmp[a] = (struct scmp_arg_cmp) { .arg = sc->args[a].index, .op = op,
                                       .datum_a = sc->args[a].value,
                                       .datum_b = sc->args[a].value_two };
      if (sc->args[a].index != sc->args[0].index)
        *same_index = false;
    }
  if (sc->args_len > 6 && !*same_index)
    return cm_err_set (err, 0, "linux.seccomp.syscalls[%zu].args: more than "
                       "6 comparisons on different arguments", i);
  return 0;
}

static int
add_one_rule (scmp_filter_ctx ctx, size_t i, const char *name, uint32_t act,
              const struct scmp_arg_cmp *cmp, size_t ncmp, bool same_index,
              struct cm_err **err)
{
  int nr = seccomp_syscall_resolve_name (name);
  if (nr == __NR_SCMP_ERROR)
    return 0;   /* not a syscall on this arch: skipped, as runc and crun */
  int r = 0;
  /* Several comparisons of one argument mean "any of" (runc, crun);
   * libseccomp allows one comparison per argument per rule. */
  if (same_index)
    for (size_t a = 0; a < ncmp && r >= 0; a++)
      r = seccomp_rule_add_array (ctx, act, nr, 1, &cmp[a]);
  else
    r = seccomp_rule_add_array (ctx, act, nr, (unsigned) ncmp, cmp);
  if (r < 0)
    return cm_err_set (err, -r, "linux.seccomp.syscalls[%zu]: rule for %s",
                       i, name);
  return 0;
}

static int
build_profile (const struct rt_seccomp *s, scmp_filter_ctx *pctx,
               struct rt_sc_prog *out, struct cm_err **err)
{
  uint32_t def;
  if (parse_action (s->default_action, s->default_errno_ret_present,
                    s->default_errno_ret, &def) < 0)
    return cm_err_set (err, 0, "linux.seccomp.defaultAction: unknown action "
                       "\"%s\"", s->default_action ? s->default_action : "");
  if (def == SCMP_ACT_NOTIFY)
    return cm_err_set (err, 0, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY "
                       "would notify every syscall, including the runtime's "
                       "own; not supported");
  scmp_filter_ctx ctx = *pctx = seccomp_init (def);
  if (ctx == NULL)
    return cm_err_set (err, EINVAL, "linux.seccomp.defaultAction: "
                       "seccomp_init");
  if (add_arches (s, ctx, err) < 0 || parse_flags (s, &out->flags, err) < 0)
    return -1;
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const struct rt_seccomp_syscall *sc = &s->syscalls[i];
      uint32_t act;
      if (parse_action (sc->action, sc->errno_ret_present, sc->errno_ret,
                        &act) < 0)
        return cm_err_set (err, 0, "linux.seccomp.syscalls[%zu].action: "
                           "unknown action \"%s\"", i,
                           sc->action ? sc->action : "");
      _cleanup_free_ struct scmp_arg_cmp *cmp
          = xcalloc (sc->args_len + 1, sizeof *cmp);
      bool same_index;
      if (parse_args (sc, i, cmp, &same_index, err) < 0)
        return -1;
      if (act == SCMP_ACT_NOTIFY)
        out->notify = true;
      if (act == def)
        continue;   /* libseccomp refuses it; it changes nothing */
      for (size_t n = 0; n < sc->names_len; n++)
        if (add_one_rule (ctx, i, sc->names[n], act, cmp, sc->args_len,
                          same_index, err) < 0)
          return -1;
    }
  if (out->notify && (s->listener_path == NULL || !*s->listener_path))
    return cm_err_set (err, 0, "linux.seccomp.listenerPath: required when a "
                       "rule uses SCMP_ACT_NOTIFY");
  if (out->notify)
    out->flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  else
    /* The kernel refuses WAIT_KILLABLE_RECV without a listener, and it
     * means nothing there. */
    out->flags &= ~(unsigned) SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  return 0;
}

/* The BPF leaves libseccomp through a memfd (seccomp_export_bpf writes to
 * an fd); the child gets plain memory and never calls the library. */
static int
export_bpf (scmp_filter_ctx ctx, struct rt_sc_prog *out, struct cm_err **err)
{
  _cleanup_fd_ int fd = memfd_create ("seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "seccomp: memfd_create");
  int r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return cm_err_set (err, -r, "seccomp: export BPF");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return cm_err_set (err, errno, "seccomp: stat BPF memfd");
  size_t n = (size_t) st.st_size;
  if (n == 0 || n % sizeof (struct sock_filter) != 0
      || n / sizeof (struct sock_filter) > BPF_MAXINSNS)
    return cm_err_set (err, E2BIG, "seccomp: BPF program of %zu bytes", n);
  out->insns = xmalloc (n);
  if (pread (fd, out->insns, n, 0) != (ssize_t) n)
    return cm_err_set (err, errno ? errno : EIO, "seccomp: read BPF memfd");
  out->len = n / sizeof (struct sock_filter);
  return 0;
}

static void save_state_parts (struct rt_sc_prog *p, const struct rt_config *c);

static int
connect_listener (const char *path, int *out, struct cm_err **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  if (len >= sizeof sa.sun_path)
    return cm_err_set (err, ENAMETOOLONG, "linux.seccomp.listenerPath `%s`",
                       path);
  memcpy (sa.sun_path, path, len + 1);
  _cleanup_fd_ int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return cm_err_set (err, errno, "linux.seccomp.listenerPath: socket");
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    return cm_err_set (err, errno, "linux.seccomp.listenerPath: connect to "
                       "`%s`", path);
  *out = cm_steal_fd (&fd);
  return 0;
}

/* errnoRet is the 16-bit SECCOMP_RET_DATA: SCMP_ACT_ERRNO(v) keeps
 * v & 0xffff, so 65536 turned into errno 0, a fake success for a syscall
 * that never ran.  An errno is below MAX_ERRNO (4095): the kernel clamps
 * larger data to 4095 and libseccomp refuses 4095 and up with a bare
 * EINVAL, so 4094 is the largest errno.  For SCMP_ACT_TRACE it is the
 * tracer's 16-bit message. */
static int
check_ret_data (const char *action, bool present, uint32_t v,
                const char *path, struct cm_err **err)
{
  uint32_t max;
  if (!present || action == NULL)
    return 0;
  if (strcmp (action, "SCMP_ACT_ERRNO") == 0)
    max = 4094;
  else if (strcmp (action, "SCMP_ACT_TRACE") == 0)
    max = 0xffff;
  else
    return 0;
  if (v > max)
    return cm_err_set (err, 0, "%s: %u is out of range for %s (0..%u)", path,
                       v, action, max);
  return 0;
}

static int
check_ret_datas (const struct rt_seccomp *s, struct cm_err **err)
{
  char path[64];
  if (check_ret_data (s->default_action, s->default_errno_ret_present,
                      s->default_errno_ret, "linux.seccomp.defaultErrnoRet",
                      err) < 0)
    return -1;
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const struct rt_seccomp_syscall *sc = &s->syscalls[i];
      snprintf (path, sizeof path, "linux.seccomp.syscalls[%zu].errnoRet", i);
      if (check_ret_data (sc->action, sc->errno_ret_present, sc->errno_ret,
                          path, err) < 0)
        return -1;
    }
  return 0;
}

int
rt_sc_compile (const struct rt_config *c, bool default_disabled,
               struct rt_sc_prog *out, struct cm_err **err)
{
  struct rt_sc_prog p = { .listener_sock = -1 };
  scmp_filter_ctx ctx = NULL;
  int r;
  const struct rt_process *proc = c->process;

  p.nnp = proc && proc->no_new_privileges;
  p.keeps_sys_admin = proc && proc->capabilities
                      && strv_has (proc->capabilities->effective,
                                   proc->capabilities->effective_len,
                                   "CAP_SYS_ADMIN");
  if (c->seccomp && check_ret_datas (c->seccomp, err) < 0)
    return -1;
  if (c->seccomp && rt_sc_cache_load (c->seccomp, &p) == 1)
    r = 0;                      /* the same profile compiled before */
  else if (c->seccomp)
    {
      r = build_profile (c->seccomp, &ctx, &p, err);
      if (r >= 0)
        r = export_bpf (ctx, &p, err);
      if (r >= 0)
        rt_sc_cache_store (c->seccomp, &p);
    }
  else if (default_disabled)
    {
      *out = p;
      return 0;
    }
  else
    {
      p.is_default = true;
      ctx = seccomp_init (SCMP_ACT_ALLOW);
      r = ctx ? build_default (c, ctx, err)
              : cm_err_set (err, ENOMEM, "seccomp: seccomp_init");
    }
  if (r >= 0 && p.insns == NULL && ctx)
    r = export_bpf (ctx, &p, err);
  if (ctx)
    seccomp_release (ctx);
  /* Only the config's profile (built or cached) can ask for notify. */
  if (r >= 0 && c->seccomp && p.notify)
    r = connect_listener (c->seccomp->listener_path, &p.listener_sock, err);
  if (r < 0)
    {
      rt_sc_prog_clear (&p);
      return -1;
    }
  if (p.notify)
    {
      save_state_parts (&p, c);
      rt_sc_set_state (&p, "", "");
    }
  *out = p;
  return 0;
}

bool
rt_sc_needs_early_load (const struct rt_sc_prog *p)
{
  return p->insns && !p->nnp && !p->keeps_sys_admin;
}

/* ---- listener state ---------------------------------------------------- */

/* The parts of the state that come from config.json, kept so that
 * rt_sc_set_state() can rebuild the message once id and bundle are known. */
static void
save_state_parts (struct rt_sc_prog *p, const struct rt_config *c)
{
  const struct rt_seccomp *s = c->seccomp;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    abort ();
  cm_json_write_str (f, c->oci_version ? c->oci_version : "1.0.2");
  fputc ('\0', f);
  cm_json_write_str (f, s && s->listener_metadata ? s->listener_metadata : "");
  fputc ('\0', f);
  fputc ('{', f);
  for (size_t i = 0; i < c->annotations_len; i++)
    {
      if (i)
        fputc (',', f);
      cm_json_write_str (f, c->annotations[i].key);
      fputc (':', f);
      cm_json_write_str (f, c->annotations[i].value);
    }
  fputc ('}', f);
  fclose (f);
  p->state_parts = buf;
}

void
rt_sc_set_state (struct rt_sc_prog *p, const char *id, const char *bundle)
{
  if (p->state_parts == NULL)
    return;
  const char *ver = p->state_parts;
  const char *meta = ver + strlen (ver) + 1;
  const char *ann = meta + strlen (meta) + 1;
  char *buf = NULL;
  size_t len = 0;
  FILE *f;

  free (p->state_head);
  free (p->state_mid);
  free (p->state_tail);
  p->state_head = xasprintf ("{\"ociVersion\":%s,\"fds\":[\"seccompFd\"],"
                             "\"pid\":", ver);
  f = open_memstream (&buf, &len);
  if (f == NULL)
    abort ();
  fprintf (f, ",\"metadata\":%s,\"state\":{\"ociVersion\":%s,\"id\":",
           meta, ver);
  cm_json_write_str (f, id);
  fputs (",\"status\":\"", f);
  fclose (f);
  p->state_mid = buf;
  buf = NULL;
  f = open_memstream (&buf, &len);
  if (f == NULL)
    abort ();
  fputs (",\"bundle\":", f);
  cm_json_write_str (f, bundle);
  fprintf (f, ",\"annotations\":%s}}", ann);
  fclose (f);
  p->state_tail = buf;
}

/* ---- child ------------------------------------------------------------- */

static bool child_loaded;

static int
send_listener (const struct rt_sc_prog *p, int lfd, const char *status,
               struct cm_err **err)
{
  char pid[24];
  int n = snprintf (pid, sizeof pid, "%d",
                    p->host_pid ? (int) p->host_pid : (int) getpid ());
  static char pid_key[] = "\",\"pid\":";
  struct iovec iov[7] = {
    { p->state_head, strlen (p->state_head) }, { pid, (size_t) n },
    { p->state_mid, strlen (p->state_mid) },
    { (char *) status, strlen (status) }, { pid_key, strlen (pid_key) },
    { pid, (size_t) n }, { p->state_tail, strlen (p->state_tail) },
  };
  if (cm_send_fd (p->listener_sock, lfd, iov, 7) < 0)
    return cm_err_set (err, errno, "seccomp: send listener fd to "
                       "listenerPath");
  return 0;
}

int
rt_sc_child_load (const struct rt_sc_prog *p, const char *status,
                  struct cm_err **err)
{
  if (child_loaded || p->insns == NULL)
    return 0;
  struct sock_fprog prog = { .len = (unsigned short) p->len,
                             .filter = p->insns };
  unsigned flags = p->flags;
  long fd = syscall (__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (fd < 0 && errno == EINVAL
      && (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
    {
      /* Kernels before 5.19: the flag is an optimisation for the agent. */
      flags &= ~(unsigned) SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
      fd = syscall (__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    }
  if (fd < 0)
    return cm_err_set (err, errno, "seccomp: load filter%s",
                       errno == EACCES ? " (needs no_new_privs or "
                       "CAP_SYS_ADMIN)" : "");
  child_loaded = true;
  if (!(flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    return 0;
  int rc = send_listener (p, (int) fd, status, err);
  close ((int) fd);
  close (p->listener_sock);
  return rc;
}

void
rt_sc_prog_clear (struct rt_sc_prog *p)
{
  free (p->insns);
  free (p->state_head);
  free (p->state_mid);
  free (p->state_tail);
  free (p->state_parts);
  if (p->listener_sock >= 0)
    close (p->listener_sock);
  memset (p, 0, sizeof *p);
  p->listener_sock = -1;
}

/* For `features`: the names linux.seccomp accepts, from the tables the
 * parser uses; NULL past the end.  *flag gets the SECCOMP_FILTER_FLAG_*
 * value so the caller can ask the kernel whether it supports it. */
const char *
rt_feature_seccomp_action (size_t i)
{
  static const char *const with_errno[] = { "SCMP_ACT_ERRNO",
                                            "SCMP_ACT_TRACE" };
  if (i < ARRAY_SIZE (with_errno))
    return with_errno[i];
  i -= ARRAY_SIZE (with_errno);
  return i < ARRAY_SIZE (simple_actions) ? simple_actions[i].name : NULL;
}

const char *
rt_feature_seccomp_operator (size_t i)
{
  return i < ARRAY_SIZE (ops) ? ops[i].name : NULL;
}

const char *
rt_feature_seccomp_flag (size_t i, unsigned *flag)
{
  if (i >= ARRAY_SIZE (filter_flags))
    return NULL;
  *flag = filter_flags[i].flag;
  return filter_flags[i].name;
}
