/* Device rules (runtime/cgroup-devices.c): validation with JSON paths, the
 * last-match-wins verdicts, and the BPF program, which a small interpreter
 * of the instructions it uses runs over a grid of requests and compares
 * with the reference verdict; as root, the kernel's verifier loads it. */
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/cgroup-internal.h"
#include "runtime/landlock.h"
#include "tap.h"

#define A (-1)
#define RULE(al, t, ma, mi, acc)                                        \
  { .allow = (al), .type = (char *) (t), .major = (ma), .minor = (mi),  \
    .access = (char *) (acc) }

static struct rt_resources
res (struct rt_device_rule *d, size_t n)
{
  struct rt_resources r;
  memset (&r, 0, sizeof r);
  r.devices = d;
  r.devices_len = n;
  return r;
}

/* Runs |p| on one request.  Returns r0, or -1 on an instruction it does
 * not know (which fails the comparison). */
static int
run (const struct bpf_insn *p, size_t n, int type, uint32_t maj,
     uint32_t min, unsigned acc)
{
  uint32_t ctx[3] = { (acc << 16) | (uint32_t) type, maj, min };
  uint64_t r[11] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct bpf_insn *i = &p[pc];
      switch (i->code)
        {
        case BPF_LDX | BPF_MEM | BPF_W:
          r[i->dst_reg] = ctx[i->off / 4];
          break;
        case BPF_ALU | BPF_AND | BPF_K:
          r[i->dst_reg] = (uint32_t) r[i->dst_reg] & (uint32_t) i->imm;
          break;
        case BPF_ALU | BPF_RSH | BPF_K:
          r[i->dst_reg] = (uint32_t) r[i->dst_reg] >> i->imm;
          break;
        case BPF_ALU | BPF_MOV | BPF_X:
          r[i->dst_reg] = (uint32_t) r[i->src_reg];
          break;
        case BPF_ALU64 | BPF_MOV | BPF_K:
          r[i->dst_reg] = (uint64_t) (int64_t) i->imm;
          break;
        case BPF_JMP | BPF_JNE | BPF_K:
          if (r[i->dst_reg] != (uint64_t) (int64_t) i->imm)
            pc += (size_t) i->off;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K:
          if (r[i->dst_reg] == (uint64_t) (int64_t) i->imm)
            pc += (size_t) i->off;
          break;
        case BPF_JMP | BPF_EXIT:
          return (int) r[0];
        default:
          return -1;
        }
    }
  return -1;                    /* fell off the end */
}

/* Program == reference over types x majors x minors x every access set. */
static bool
prog_agrees (const struct rt_resources *r, const char *what)
{
  static const uint32_t majs[] = { 1, 5, 7, 8, 136, 253, 254 };
  static const uint32_t mins[] = { 0, 1, 2, 3, 5, 9, 11 };
  struct cg_dev_rule *v = NULL;
  struct bpf_insn *p = NULL;
  struct cm_err *e = NULL;
  size_t n = 0, len;
  bool same = true;

  if (cg_dev_rules (r, &v, &n, &e) < 0)
    {
      printf ("# %s: %s\n", what, e->msg);
      cm_err_free (&e);
      return false;
    }
  len = cg_dev_prog (v, n, &p);
  for (int t = 0; t < 2; t++)
    for (size_t a = 0; a < ARRAY_SIZE (majs); a++)
      for (size_t b = 0; b < ARRAY_SIZE (mins); b++)
        for (unsigned acc = 1; acc <= CG_DEV_RWM; acc++)
          {
            int bt = t ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
            bool want = cg_dev_match (v, n, t ? 'b' : 'c', majs[a], mins[b],
                                      acc);
            int got = run (p, len, bt, majs[a], mins[b], acc);
            if (got != (int) want && same)
              {
                printf ("# %s: %c %u:%u acc %u: program %d, rules %d\n", what,
                        t ? 'b' : 'c', majs[a], mins[b], acc, got, want);
                same = false;
              }
          }
  free (p);
  free (v);
  return same;
}

static bool
verdict (const struct rt_resources *r, char t, uint32_t ma, uint32_t mi,
         unsigned acc)
{
  struct cg_dev_rule *v = NULL;
  struct cm_err *e = NULL;
  size_t n = 0;
  bool ok_;
  if (cg_dev_rules (r, &v, &n, &e) < 0)
    {
      cm_err_free (&e);
      return false;
    }
  ok_ = cg_dev_match (v, n, t, ma, mi, acc);
  free (v);
  return ok_;
}

static bool
err_names (struct rt_device_rule *d, size_t n, const char *needle)
{
  struct rt_resources r = res (d, n);
  struct cg_dev_rule *v = NULL;
  struct cm_err *e = NULL;
  size_t len = 0;
  bool found;
  if (cg_dev_rules (&r, &v, &len, &e) == 0)
    {
      free (v);
      return false;
    }
  found = strstr (e->msg, needle) != NULL;
  if (!found)
    printf ("# error: %s\n", e->msg);
  cm_err_free (&e);
  return found;
}

static void
test_validation (void)
{
  struct rt_device_rule bad_type[] = { RULE (false, NULL, A, A, "rwm"),
                                       RULE (true, "x", 1, 3, "r") };
  struct rt_device_rule bad_acc[] = { RULE (true, "c", 1, 3, "rwx") };
  struct rt_device_rule empty_acc[] = { RULE (true, "c", 1, 3, "") };
  struct rt_device_rule big[] = { RULE (true, "c", 1LL << 33, 3, "r") };
  ok (err_names (bad_type, 2, "linux.resources.devices[1].type"),
      "a bad type names linux.resources.devices[1].type");
  ok (err_names (bad_acc, 1, "linux.resources.devices[0].access"),
      "a bad access letter names the access");
  ok (err_names (empty_acc, 1, "linux.resources.devices[0].access"),
      "an empty access is refused");
  ok (err_names (big, 1, "linux.resources.devices[0].major"),
      "an out-of-range major is refused");
}

static void
test_verdicts (void)
{
  struct rt_resources none = res (NULL, 0);
  ok (!verdict (&none, 'b', 254, 0, CG_DEV_R), "no rules: host disk read "
      "denied");
  ok (!verdict (&none, 'c', 1, 11, CG_DEV_W), "no rules: /dev/kmsg write "
      "denied");
  ok (verdict (&none, 'c', 1, 3, CG_DEV_R | CG_DEV_W), "no rules: /dev/null "
      "rw allowed");
  ok (verdict (&none, 'c', 136, 7, CG_DEV_R | CG_DEV_W), "no rules: "
      "/dev/pts/7 allowed");
  ok (verdict (&none, 'b', 254, 0, CG_DEV_M), "no rules: mknod allowed "
      "(Landlock closes it to the container)");
  ok (!verdict (&none, 'c', 10, 200, CG_DEV_R), "no rules: tun not a "
      "default (runc >= 1.2)");

  struct rt_device_rule rd[] = { RULE (false, NULL, A, A, "rwm"),
                                 RULE (true, "b", 8, 0, "r") };
  struct rt_resources r = res (rd, 2);
  ok (verdict (&r, 'b', 8, 0, CG_DEV_R), "allow b 8:0 r: read");
  ok (!verdict (&r, 'b', 8, 0, CG_DEV_W), "allow b 8:0 r: no write");
  ok (!verdict (&r, 'b', 8, 0, CG_DEV_R | CG_DEV_W),
      "allow b 8:0 r: no read+write (every requested right must be "
      "covered)");

  struct rt_device_rule ord[] = { RULE (true, "b", 8, A, "rwm"),
                                  RULE (false, "b", 8, 0, "w") };
  r = res (ord, 2);
  ok (verdict (&r, 'b', 8, 0, CG_DEV_R), "deny after allow: read stays");
  ok (!verdict (&r, 'b', 8, 0, CG_DEV_R | CG_DEV_W),
      "deny after allow: a deny of any requested right wins");
  ok (verdict (&r, 'b', 8, 1, CG_DEV_W), "deny after allow: other minors "
      "untouched");

  struct rt_device_rule rev[] = { RULE (false, "b", 8, 0, "rwm"),
                                  RULE (true, "b", 8, A, "rw") };
  r = res (rev, 2);
  ok (verdict (&r, 'b', 8, 0, CG_DEV_R | CG_DEV_W),
      "allow after deny: the last match wins");

  struct rt_device_rule all[] = { RULE (true, "a", A, A, "rwm") };
  r = res (all, 1);
  ok (verdict (&r, 'b', 254, 0, CG_DEV_R | CG_DEV_W | CG_DEV_M)
          && verdict (&r, 'c', 1, 11, CG_DEV_W),
      "type a, no major/minor: every device");
}

static void
test_program (void)
{
  struct rt_resources none = res (NULL, 0);
  ok (prog_agrees (&none, "defaults"), "program = rules: defaults only");
  struct rt_device_rule cd[] = {
    RULE (false, NULL, A, A, "rwm"),   RULE (true, "c", 1, 3, "rwm"),
    RULE (true, "c", 1, 8, "rwm"),     RULE (true, "c", 136, A, "rwm"),
    RULE (true, "c", 5, 2, "rwm"),     RULE (true, "c", A, A, "m"),
    RULE (true, "b", A, A, "m"),
  };
  struct rt_resources r = res (cd, ARRAY_SIZE (cd));
  ok (prog_agrees (&r, "containerd"), "program = rules: containerd's list "
      "plus mknod");
  struct rt_device_rule mix[] = {
    RULE (true, "a", A, A, "rwm"),     RULE (false, "b", 254, A, "w"),
    RULE (true, "b", 254, 0, "r"),     RULE (false, "c", 1, 11, "rw"),
    RULE (true, "c", 1, 11, "m"),      RULE (false, "c", A, 3, "m"),
  };
  r = res (mix, ARRAY_SIZE (mix));
  ok (prog_agrees (&r, "mixed"), "program = rules: wildcards, partial "
      "access, deny/allow interleaved");
  struct rt_device_rule tail[] = { RULE (true, "c", 1, 3, "r"),
                                   RULE (true, NULL, A, A, NULL) };
  r = res (tail, 2);
  ok (prog_agrees (&r, "allow-all last"), "program = rules: an allow-all "
      "rule shadows the earlier ones");
}

static void
test_kernel_load (void)
{
  struct rt_device_rule mix[] = { RULE (false, NULL, A, A, "rwm"),
                                  RULE (true, "b", 254, A, "r"),
                                  RULE (false, "b", 254, 0, "w"),
                                  RULE (true, NULL, A, A, "rwm") };
  struct rt_resources rs[] = { res (NULL, 0), res (mix, 3), res (mix, 4) };
  if (geteuid () != 0)
    {
      skip ("loading the program needs root");
      return;
    }
  for (size_t k = 0; k < ARRAY_SIZE (rs); k++)
    {
      struct cg_dev_rule *v = NULL;
      struct bpf_insn *p = NULL;
      struct cm_err *e = NULL;
      size_t n = 0, len;
      union bpf_attr a;
      int fd;
      ok (cg_dev_rules (&rs[k], &v, &n, &e) == 0, "rules %zu", k);
      len = cg_dev_prog (v, n, &p);
      memset (&a, 0, sizeof a);
      a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
      a.insns = (uint64_t) (uintptr_t) p;
      a.insn_cnt = (uint32_t) len;
      a.license = (uint64_t) (uintptr_t) "GPL";
      fd = (int) syscall (SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
      ok (fd >= 0, "the verifier accepts program %zu (%zu insns): %s", k, len,
          fd < 0 ? strerror (errno) : "ok");
      if (fd >= 0)
        close (fd);
      free (p);
      free (v);
    }
}

/* The write grant on a writable rootfs, with |rules| as the device rules. */
static uint64_t
root_grant (struct rt_device_rule *rules, size_t n)
{
  struct rt_resources r = res (rules, n);
  struct rt_config c;
  struct rt_ll_policy p;
  struct cm_err *e = NULL;
  const struct rt_ll_rule *x;
  uint64_t a = 0;
  memset (&c, 0, sizeof c);
  c.root_readonly = false;
  c.resources = n ? &r : NULL;
  if (rt_ll_policy_build (&c, 7, &p, &e) < 0)
    {
      printf ("# %s\n", e->msg);
      cm_err_free (&e);
      return 0;
    }
  x = rt_ll_policy_find (&p, "/");
  a = x ? x->access : 0;
  rt_ll_policy_clear (&p);
  return a;
}

static void
test_landlock_mknod (void)
{
  const uint64_t mk = RT_LL_FS_MAKE_CHAR | RT_LL_FS_MAKE_BLOCK;
  struct rt_device_rule cd[] = { RULE (false, NULL, A, A, "rwm"),
                                 RULE (true, "c", 1, 3, "rw") };
  struct rt_device_rule cm[] = { RULE (true, "c", A, A, "m") };
  struct rt_device_rule am[] = { RULE (true, "a", A, A, NULL) };
  struct rt_device_rule deny_m[] = { RULE (false, "b", A, A, "m") };
  uint64_t a = root_grant (NULL, 0);
  ok ((a & RT_LL_FS_WRITE_FILE) && (a & RT_LL_FS_MAKE_FIFO) && !(a & mk),
      "no device rules: a writable / grants no MAKE_CHAR/MAKE_BLOCK");
  ok (!(root_grant (cd, 2) & mk), "rules without m: none either");
  a = root_grant (cm, 1);
  ok ((a & RT_LL_FS_MAKE_CHAR) && !(a & RT_LL_FS_MAKE_BLOCK),
      "allow c *:* m: MAKE_CHAR only");
  ok ((root_grant (am, 1) & mk) == mk, "allow a rwm: both");
  ok (!(root_grant (deny_m, 1) & mk), "a deny rule grants nothing");
}

int
main (void)
{
  test_landlock_mknod ();
  test_validation ();
  test_verdicts ();
  test_program ();
  test_kernel_load ();
  return tap_done ();
}
