/* Landlock pins: which inode each of the init's rules went to, so `exec`
 * gets exactly the init's rules (runtime/landlock.h, docs/security.md
 * "exec and the init's rules").
 *
 * The container controls every path a rule names.  Re-resolving the paths
 * at exec would hand whatever the container put there since (a symlink
 * /dev/full -> /, a renamed directory) the rule's rights.  So at create the
 * child records (dev, ino, type) of each inode it added a rule on; exec
 * adds a rule only when its path opens to that same inode.  The init's
 * Landlock domain holds a reference to each of those inodes, so while the
 * container runs no other file can take their (dev, ino).
 *
 * Record: struct pin_header, then pins_len struct rt_ll_pin, host byte
 * order (it never leaves the host's state directory). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "landlock.h"

#define PIN_MAGIC "SLLPIN01"

struct pin_header
{
  char magic[8];
  uint64_t rules_len;
  uint64_t pins_len;
};

int
rt_ll_pins_record (struct rt_ll_policy *p, struct cm_err **err)
{
  int fd = memfd_create ("landlock-pins", MFD_CLOEXEC);
  if (fd < 0)
    return cm_err_set (err, errno, "landlock: memfd_create");
  p->pin_record = true;
  p->pin_fd = fd;
  return 0;
}

int
rt_ll_pins_write (const struct rt_ll_policy *p, const struct rt_ll_pin *pins,
                  size_t n, struct cm_err **err)
{
  struct pin_header h = { .rules_len = p->rules_len, .pins_len = n };
  memcpy (h.magic, PIN_MAGIC, sizeof h.magic);
  int r = 0;
  if (cm_write_all (p->pin_fd, &h, sizeof h) < 0
      || cm_write_all (p->pin_fd, pins, n * sizeof *pins) < 0)
    r = cm_err_set (err, errno, "landlock: record the rules for exec");
  close (p->pin_fd);            /* the child's copy; the parent reads its own */
  return r;
}

int
rt_ll_pins_take (struct rt_ll_policy *p, char **out, size_t *len,
                 struct cm_err **err)
{
  struct stat st;
  if (!p->pin_record)
    return cm_err_set (err, EINVAL, "landlock: no rule record was made");
  if (fstat (p->pin_fd, &st) < 0)
    return cm_err_set (err, errno, "landlock: stat the rule record");
  _cleanup_free_ char *buf = xmalloc ((size_t) st.st_size + 1);
  if (pread (p->pin_fd, buf, (size_t) st.st_size, 0) != st.st_size)
    return cm_err_set (err, errno ? errno : EIO,
                       "landlock: read the rule record");
  *len = (size_t) st.st_size;
  *out = cm_steal_ptr (&buf);
  return 0;
}

int
rt_ll_pins_use (struct rt_ll_policy *p, const char *rec, size_t len,
                struct cm_err **err)
{
  struct pin_header h;
  /* No path rules to give (fs disabled): nothing to check.  The init then
   * makes no Landlock ruleset at all when every protection is off, and its
   * record is empty. */
  if (p->rules_len == 0)
    return 0;
  if (rec == NULL)
    return cm_err_set (err, 0, "the container has no record of the inodes "
                       "its Landlock rules are on (landlock.pins; created by "
                       "an older sandlock-oci?): recreate it to exec");
  if (len < sizeof h)
    return cm_err_set (err, 0, "landlock.pins: not a Landlock rule record");
  memcpy (&h, rec, sizeof h);
  if (memcmp (h.magic, PIN_MAGIC, sizeof h.magic) != 0
      || (len - sizeof h) % sizeof (struct rt_ll_pin) != 0
      || h.pins_len != (len - sizeof h) / sizeof (struct rt_ll_pin))
    return cm_err_set (err, 0, "landlock.pins: not a Landlock rule record");
  if (h.rules_len != p->rules_len)
    return cm_err_set (err, 0, "landlock.pins: recorded for %llu rules, the "
                       "config gives %zu", (unsigned long long) h.rules_len,
                       p->rules_len);
  struct rt_ll_pin *pins = xcalloc (h.pins_len + 1, sizeof *pins);
  memcpy (pins, rec + sizeof h, h.pins_len * sizeof *pins);
  for (size_t i = 0; i < h.pins_len; i++)
    if (pins[i].index >= p->rules_len
        || (i && pins[i].index <= pins[i - 1].index)
        || pins[i].access != p->rules[pins[i].index].access)
      {
        free (pins);
        return cm_err_set (err, 0, "landlock.pins: entry %zu does not match "
                           "the config's rules", i);
      }
  free (p->pins);
  p->pins = pins;
  p->pins_len = h.pins_len;
  p->pin_check = true;
  return 0;
}

const struct rt_ll_pin *
rt_ll_pins_find (const struct rt_ll_policy *p, size_t index)
{
  size_t lo = 0, hi = p->pins_len;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (p->pins[mid].index < index)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < p->pins_len && p->pins[lo].index == index ? &p->pins[lo] : NULL;
}
