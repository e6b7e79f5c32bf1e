/* The device cgroup: which device nodes a container may open (read, write)
 * and mknod.  Every container starts from deny-all, then the config's
 * linux.resources.devices rules in order, then the runtime-spec default
 * devices (runc's AllowedDevices), so the last matching rule wins.
 *
 * v1 (and hybrid hosts, whose devices controller is v1): devices.deny and
 * devices.allow.  v2 has no devices files: a BPF_PROG_TYPE_CGROUP_DEVICE
 * program built here from the same rule list (raw instructions, no libbpf)
 * is attached to the container's v2 directory with BPF_F_ALLOW_MULTI, as
 * runc and crun do.  docs/cgroups.md, docs/security.md. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "common/util.h"
#include "runtime.h"

/* The runtime-spec "Default Devices" plus /dev/pts/N (136:*) and mknod of
 * any node (which the runtime itself needs for linux.devices; Landlock
 * refuses it to the container unless the config allows "m").  No tun
 * (10:200): runc dropped it from its defaults in 1.2. */
static const struct cg_dev_rule default_rules[] = {
  { true, 'c', -1, -1, CG_DEV_M }, { true, 'b', -1, -1, CG_DEV_M },
  { true, 'c', 1, 3, CG_DEV_RWM },  /* null */
  { true, 'c', 1, 5, CG_DEV_RWM },  /* zero */
  { true, 'c', 1, 7, CG_DEV_RWM },  /* full */
  { true, 'c', 1, 8, CG_DEV_RWM },  /* random */
  { true, 'c', 1, 9, CG_DEV_RWM },  /* urandom */
  { true, 'c', 5, 0, CG_DEV_RWM },  /* tty */
  { true, 'c', 5, 1, CG_DEV_RWM },  /* console */
  { true, 'c', 5, 2, CG_DEV_RWM },  /* ptmx */
  { true, 'c', 136, -1, CG_DEV_RWM },       /* pts */
};

static int
parse_access (const char *s, size_t i, unsigned *out, struct cm_err **err)
{
  unsigned a = 0;
  if (s == NULL)
    s = "rwm";
  if (*s == '\0')
    return cm_err_set (err, EINVAL, "linux.resources.devices[%zu].access: "
                       "empty (expected letters of \"rwm\")", i);
  for (const char *p = s; *p; p++)
    switch (*p)
      {
      case 'r':
        a |= CG_DEV_R;
        break;
      case 'w':
        a |= CG_DEV_W;
        break;
      case 'm':
        a |= CG_DEV_M;
        break;
      default:
        return cm_err_set (err, EINVAL, "linux.resources.devices[%zu]."
                           "access: \"%s\" has '%c' (expected letters of "
                           "\"rwm\")", i, s, *p);
      }
  *out = a;
  return 0;
}

static int
parse_rule (const struct rt_device_rule *d, size_t i, struct cg_dev_rule *o,
            struct cm_err **err)
{
  const char *t = d->type ? d->type : "a";
  if (strcmp (t, "a") != 0 && strcmp (t, "b") != 0 && strcmp (t, "c") != 0)
    return cm_err_set (err, EINVAL, "linux.resources.devices[%zu].type: "
                       "\"%s\" is not one of \"a\", \"b\", \"c\"", i, t);
  /* The BPF program compares with a sign-extended 32-bit immediate; real
   * majors have 12 bits and minors 20. */
  if (d->major > INT32_MAX || d->minor > INT32_MAX)
    return cm_err_set (err, ERANGE, "linux.resources.devices[%zu].%s: %lld "
                       "is out of range", i,
                       d->major > INT32_MAX ? "major" : "minor",
                       (long long) (d->major > INT32_MAX ? d->major
                                                         : d->minor));
  o->allow = d->allow;
  o->type = *t;
  o->major = d->major;
  o->minor = d->minor;
  return parse_access (d->access, i, &o->access, err);
}

int
cg_dev_rules (const struct rt_resources *r, struct cg_dev_rule **out,
              size_t *n, struct cm_err **err)
{
  size_t m = r ? r->devices_len : 0;
  _cleanup_free_ struct cg_dev_rule *v
      = xcalloc (m + ARRAY_SIZE (default_rules), sizeof *v);
  for (size_t i = 0; i < m; i++)
    if (parse_rule (&r->devices[i], i, &v[i], err) < 0)
      return -1;
  memcpy (v + m, default_rules, sizeof default_rules);
  *n = m + ARRAY_SIZE (default_rules);
  *out = cm_steal_ptr (&v);
  return 0;
}

bool
cg_dev_match (const struct cg_dev_rule *rules, size_t n, char type,
              uint32_t major, uint32_t minor, unsigned access)
{
  for (size_t i = n; i-- > 0;)
    {
      const struct cg_dev_rule *x = &rules[i];
      if ((x->type != 'a' && x->type != type)
          || (x->major >= 0 && (uint32_t) x->major != major)
          || (x->minor >= 0 && (uint32_t) x->minor != minor))
        continue;
      /* An allow rule must cover every requested right (open O_RDWR asks
       * for r and w at once); a deny rule stops any right it names. */
      if (x->allow ? (access & ~x->access) == 0 : (access & x->access) != 0)
        return x->allow;
    }
  return false;
}

/* ---- BPF program ------------------------------------------------------- */

#define INSN(c, d, s, o, i)                                             \
  ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s),      \
                      .off = (int16_t) (o), .imm = (int32_t) (i) })
#define LDX_W(d, s, o) INSN (BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define ALU32_K(op, d, i) INSN (BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define MOV32_R(d, s) INSN (BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_K(d, i) INSN (BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define JMP_K(op, d, i, o) INSN (BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define EXIT() INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The per-rule test, as pairs of (jump-if-not-matching) instructions. */
static size_t
rule_tests (const struct cg_dev_rule *x, struct bpf_insn *t)
{
  size_t k = 0;
  int bt = x->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
  if (x->type != 'a')
    t[k++] = JMP_K (BPF_JNE, BPF_REG_2, bt, 0);
  if (x->allow && x->access != CG_DEV_RWM)
    {
      t[k++] = MOV32_R (BPF_REG_1, BPF_REG_3);
      t[k++] = ALU32_K (BPF_AND, BPF_REG_1, ~x->access & CG_DEV_RWM);
      t[k++] = JMP_K (BPF_JNE, BPF_REG_1, 0, 0);
    }
  else if (!x->allow && x->access != CG_DEV_RWM)
    {
      t[k++] = MOV32_R (BPF_REG_1, BPF_REG_3);
      t[k++] = ALU32_K (BPF_AND, BPF_REG_1, x->access);
      t[k++] = JMP_K (BPF_JEQ, BPF_REG_1, 0, 0);
    }
  if (x->major >= 0)
    t[k++] = JMP_K (BPF_JNE, BPF_REG_4, x->major, 0);
  if (x->minor >= 0)
    t[k++] = JMP_K (BPF_JNE, BPF_REG_5, x->minor, 0);
  return k;
}

/* CG_DEV_R/W/M are the kernel's BPF_DEVCG_ACC_READ/WRITE/MKNOD. */
_Static_assert (CG_DEV_M == BPF_DEVCG_ACC_MKNOD && CG_DEV_R == BPF_DEVCG_ACC_READ
                    && CG_DEV_W == BPF_DEVCG_ACC_WRITE,
                "device access bits differ from the kernel's");

size_t
cg_dev_prog (const struct cg_dev_rule *rules, size_t n, struct bpf_insn **out)
{
  /* Per rule at most 6 tests, a verdict and an exit. */
  struct bpf_insn *p = xcalloc (6 + n * 8 + 2, sizeof *p);
  size_t k = 0;

  /* r2 = device type, r3 = requested access, r4 = major, r5 = minor
   * (struct bpf_cgroup_dev_ctx). */
  p[k++] = LDX_W (BPF_REG_2, BPF_REG_1, 0);
  p[k++] = ALU32_K (BPF_AND, BPF_REG_2, 0xffff);
  p[k++] = LDX_W (BPF_REG_3, BPF_REG_1, 0);
  p[k++] = ALU32_K (BPF_RSH, BPF_REG_3, 16);
  p[k++] = LDX_W (BPF_REG_4, BPF_REG_1, 4);
  p[k++] = LDX_W (BPF_REG_5, BPF_REG_1, 8);
  /* Last rule first: the first block that matches decides. */
  for (size_t i = n; i-- > 0;)
    {
      struct bpf_insn t[6];
      size_t nt = rule_tests (&rules[i], t);
      for (size_t j = 0; j < nt; j++)
        {
          if (BPF_CLASS (t[j].code) == BPF_JMP)
            t[j].off = (int16_t) (nt - j - 1 + 2);  /* past the block */
          p[k++] = t[j];
        }
      p[k++] = MOV64_K (BPF_REG_0, rules[i].allow ? 1 : 0);
      p[k++] = EXIT ();
      /* A rule that matches everything shadows the ones before it (and
       * the verifier refuses unreachable instructions). */
      if (nt == 0)
        {
          *out = p;
          return k;
        }
    }
  p[k++] = MOV64_K (BPF_REG_0, 0);      /* the implicit "deny all" */
  p[k++] = EXIT ();
  *out = p;
  return k;
}

static long
sys_bpf (int cmd, union bpf_attr *a)
{
  return syscall (SYS_bpf, cmd, a, sizeof *a);
}

/* Loads the program and attaches it to |dir|.  Returns -errno (with *err
 * set) so the caller can tell "not permitted" from a real failure. */
static int
v2_attach (const char *dir, const struct cg_dev_rule *rules, size_t n,
           struct cm_err **err)
{
  _cleanup_free_ struct bpf_insn *insns = NULL;
  _cleanup_fd_ int prog = -1, dfd = -1;
  union bpf_attr a;
  size_t len = cg_dev_prog (rules, n, &insns);

  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t) (uintptr_t) insns;
  a.insn_cnt = (uint32_t) len;
  a.license = (uint64_t) (uintptr_t) "GPL";
  prog = (int) sys_bpf (BPF_PROG_LOAD, &a);
  if (prog < 0)
    {
      int en = errno;
      cm_err_set (err, en, "cgroup: bpf(BPF_PROG_LOAD) of the device "
                  "program (needs CAP_SYS_ADMIN or CAP_BPF in the initial "
                  "user namespace)");
      return -en;
    }
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    {
      int en = errno;
      cm_err_set (err, en, "cgroup: open `%s`", dir);
      return -en;
    }
  memset (&a, 0, sizeof a);
  a.target_fd = (uint32_t) dfd;
  a.attach_bpf_fd = (uint32_t) prog;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &a) < 0)
    {
      int en = errno;
      cm_err_set (err, en, "cgroup: attach the device program to `%s`", dir);
      return -en;
    }
  return 0;     /* the cgroup holds the program now */
}

/* v1 rules in order after "deny a" (whitelist mode).  On update only the
 * given rules and the defaults are added: a reset would deny /dev/null for
 * a moment to a running container. */
static int
v1_write (const char *dir, const struct cg_dev_rule *v, size_t n, bool update,
          struct cm_err **err)
{
  size_t m = n - ARRAY_SIZE (default_rules);
  if (!update && cg_write (dir, "devices.deny", "a", err) < 0)
    return cm_err_wrap (err, "devices: deny all");
  for (size_t i = 0; i < n; i++)
    {
      char maj[24] = "*", min[24] = "*", acc[4];
      size_t k = 0;
      if (v[i].major >= 0)
        snprintf (maj, sizeof maj, "%lld", (long long) v[i].major);
      if (v[i].minor >= 0)
        snprintf (min, sizeof min, "%lld", (long long) v[i].minor);
      if (v[i].access & CG_DEV_R)
        acc[k++] = 'r';
      if (v[i].access & CG_DEV_W)
        acc[k++] = 'w';
      if (v[i].access & CG_DEV_M)
        acc[k++] = 'm';
      acc[k] = '\0';
      if (cg_writef (dir, v[i].allow ? "devices.allow" : "devices.deny", err,
                     "%c %s:%s %s", v[i].type, maj, min, acc) < 0)
        return i < m ? cm_err_wrap (err, "linux.resources.devices[%zu]", i)
                     : cm_err_wrap (err, "default device rule");
    }
  return 0;
}

int
cg_dev_apply (struct rt_cgroup *cg, const struct rt_resources *r,
              bool required, bool update, struct cm_err **err)
{
  _cleanup_free_ struct cg_dev_rule *v = NULL;
  _cleanup_free_ char *v1 = cg_v1_dir (cg, "devices"), *v2 = NULL;
  struct cm_err *e = NULL;
  size_t n = 0;
  int ret;

  if (cg_dev_rules (r, &v, &n, err) < 0)
    return -1;
  if (v1)
    return update && !(r && r->devices_len) ? 0
                                            : v1_write (v1, v, n, update, err);
  /* v2: the program attached at create stays; update never widens it
   * (docs/cgroups.md). */
  if (update)
    return 0;
  if (!cg->v2_on)
    return required ? cm_err_set (err, ENOENT, "devices: the container may "
                                  "mknod (CAP_MKNOD, no user namespace) and "
                                  "there is no devices controller and no "
                                  "cgroup v2 to restrict device access in")
                    : 0;
  v2 = cg_v2_dir (cg);
  ret = v2_attach (v2, v, n, &e);
  if (ret == 0)
    return 0;
  /* Not permitted (a user namespace, no CAP_BPF) and nothing the container
   * could abuse: it cannot mknod a device, see rt_devices_required. */
  if (!required && (ret == -EPERM || ret == -EACCES))
    {
      cm_err_free (&e);
      return 0;
    }
  *err = cm_steal_ptr (&e);
  return required ? cm_err_wrap (err, "devices: the container may mknod "
                                 "(CAP_MKNOD, no user namespace) and device "
                                 "access cannot be restricted")
                  : -1;
}

static bool
strv_has (char *const *v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] && strcmp (v[i], s) == 0)
      return true;
  return false;
}

/* Do we hold CAP_MKNOD (permitted)?  Without it no child of ours can mknod
 * a device: the caps we give come from our own sets. */
static bool
self_has_mknod (void)
{
  cap_t caps = cap_get_proc ();
  cap_flag_value_t v = CAP_CLEAR;
  if (caps == NULL)
    return true;                /* cannot tell: assume it can */
  if (cap_get_flag (caps, CAP_MKNOD, CAP_PERMITTED, &v) < 0)
    v = CAP_SET;
  cap_free (caps);
  return v == CAP_SET;
}

bool
rt_devices_required (const struct rt_config *c)
{
  if (!self_has_mknod ())
    return false;
  for (size_t i = 0; i < c->namespaces_len; i++)
    if (c->namespaces[i].type && strcmp (c->namespaces[i].type, "user") == 0)
      return false;
  if (c->process == NULL || c->process->capabilities == NULL)
    return false;               /* no capability at all */
  return strv_has (c->process->capabilities->bounding,
                   c->process->capabilities->bounding_len, "CAP_MKNOD");
}

int
cg_dev_bpf_probe (void)
{
  _cleanup_free_ struct cg_dev_rule *v = NULL;
  _cleanup_free_ struct bpf_insn *insns = NULL;
  union bpf_attr a;
  size_t n = 0;
  int fd;
  if (cg_dev_rules (NULL, &v, &n, NULL) < 0)
    return EINVAL;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insn_cnt = (uint32_t) cg_dev_prog (v, n, &insns);
  a.insns = (uint64_t) (uintptr_t) insns;
  a.license = (uint64_t) (uintptr_t) "GPL";
  fd = (int) sys_bpf (BPF_PROG_LOAD, &a);
  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}
