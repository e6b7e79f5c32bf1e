/* A cache of compiled seccomp programs for config-supplied profiles.
 *
 * Engines send the same large profile for every container (podman's has
 * ~400 names over three architectures) and libseccomp needs ~30 ms to
 * compile it here: more than the rest of a container start.  The cache maps
 * the *exact* compile inputs to the BPF:
 *   key = profile (every field) + libseccomp version and API level +
 *         kernel release + this binary's GNU build-id
 * The file name is a hash of the key, but the file holds the whole key and
 * a hit needs a byte-for-byte match, so a collision can never hand out the
 * wrong filter.  Files live in a root-owned 0700 directory under the state
 * root, are read with O_NOFOLLOW and must be owned by us and not writable
 * by others; they are written atomically.  Any doubt is a miss.
 *
 * The cache is bounded (CACHE_MAX_ENTRIES): a hit touches its entry's
 * mtime, and a store that finds too many entries removes the least
 * recently used.  A reader holding an entry open keeps its whole content
 * after an unlink, and entries appear only by rename, so pruning never
 * hands anyone half a file. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "seccomp.h"

#define CACHE_MAGIC "sandlock-oci seccomp cache 1\n"
/* Engines use a handful of profiles; each entry is a few tens of KiB. */
#define CACHE_MAX_ENTRIES 64
/* A temp file this old lost its writer (cm_atomic_write_at renames within
 * microseconds). */
#define CACHE_STALE_TMP_SECS 600

static char *cache_dir;

void
rt_sc_cache_set_dir (const char *dir)
{
  free (cache_dir);
  cache_dir = dir ? xstrdup (dir) : NULL;
}

struct buildid
{
  char hex[2 * 64 + 1];
};

static int
find_build_id (struct dl_phdr_info *info, size_t size, void *data)
{
  struct buildid *b = data;
  (void) size;
  if (info->dlpi_name && info->dlpi_name[0])  /* the main program only */
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      const char *p, *end;
      if (ph->p_type != PT_NOTE)
        continue;
      p = (const char *) (info->dlpi_addr + ph->p_vaddr);
      end = p + ph->p_memsz;
      while (p + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *n = (const ElfW (Nhdr) *) (const void *) p;
          const unsigned char *desc
              = (const unsigned char *) p + sizeof *n + ((n->n_namesz + 3) & ~3u);
          if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= 64)
            {
              for (unsigned j = 0; j < n->n_descsz; j++)
                snprintf (b->hex + 2 * j, 3, "%02x", desc[j]);
              return 1;
            }
          p = (const char *) desc + ((n->n_descsz + 3) & ~3u);
        }
    }
  return 0;
}

static void
put_str (FILE *f, const char *s)
{
  /* length-prefixed, so no two different inputs serialise alike */
  size_t n = s ? strlen (s) : (size_t) -1;
  fwrite (&n, sizeof n, 1, f);
  if (s)
    fwrite (s, 1, strlen (s), f);
}

static void
put_u64 (FILE *f, uint64_t v)
{
  fwrite (&v, sizeof v, 1, f);
}

static void
put_strv (FILE *f, char **v, size_t n)
{
  put_u64 (f, n);
  for (size_t i = 0; i < n; i++)
    put_str (f, v[i]);
}

/* The whole compile input, or NULL when it cannot be pinned down. */
static char *
cache_key (const struct rt_seccomp *s, size_t *len)
{
  struct buildid b = { { 0 } };
  const struct scmp_version *v = seccomp_version ();
  struct utsname u;
  char *buf = NULL;
  FILE *f;

  if (dl_iterate_phdr (find_build_id, &b) == 0 || uname (&u) < 0 || v == NULL)
    return NULL;
  f = open_memstream (&buf, len);
  if (f == NULL)
    return NULL;
  fputs (CACHE_MAGIC, f);
  put_str (f, b.hex);
  put_str (f, u.release);
  put_u64 (f, v->major);
  put_u64 (f, v->minor);
  put_u64 (f, v->micro);
  put_u64 (f, seccomp_api_get ());
  put_str (f, s->default_action);
  put_u64 (f, s->default_errno_ret_present ? s->default_errno_ret : ~0ULL);
  put_strv (f, s->architectures, s->architectures_len);
  put_strv (f, s->flags, s->flags_len);
  put_str (f, s->listener_path);
  put_u64 (f, s->syscalls_len);
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const struct rt_seccomp_syscall *sc = &s->syscalls[i];
      put_strv (f, sc->names, sc->names_len);
      put_str (f, sc->action);
      put_u64 (f, sc->errno_ret_present ? sc->errno_ret : ~0ULL);
      put_u64 (f, sc->args_len);
      for (size_t j = 0; j < sc->args_len; j++)
        {
          put_u64 (f, sc->args[j].index);
          put_u64 (f, sc->args[j].value);
          put_u64 (f, sc->args[j].value_two);
          put_str (f, sc->args[j].op);
        }
    }
  if (fclose (f) != 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

static char *
cache_file (const char *key, size_t len)
{
  uint64_t h = 1469598103934665603ULL;  /* FNV-1a: a name, not a proof */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) key[i]) * 1099511628211ULL;
  return xasprintf ("%s/%016llx.bpf", cache_dir, (unsigned long long) h);
}

struct cache_hdr
{
  uint64_t key_len, insns, flags, notify;
};

int
rt_sc_cache_load (const struct rt_seccomp *s, struct rt_sc_prog *p)
{
  _cleanup_free_ char *key = NULL, *path = NULL, *buf = NULL;
  _cleanup_fd_ int fd = -1;
  struct cache_hdr h;
  struct stat st;
  size_t klen, need;

  if (cache_dir == NULL || (key = cache_key (s, &klen)) == NULL)
    return 0;
  path = cache_file (key, klen);
  fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || st.st_uid != geteuid () || (st.st_mode & 022))
    return 0;
  if (pread (fd, &h, sizeof h, 0) != (ssize_t) sizeof h || h.key_len != klen
      || h.insns == 0 || h.insns > BPF_MAXINSNS)
    return 0;
  need = sizeof h + klen + h.insns * sizeof (struct sock_filter);
  if ((size_t) st.st_size != need)
    return 0;
  buf = xmalloc (need);
  if (pread (fd, buf, need, 0) != (ssize_t) need
      || memcmp (buf + sizeof h, key, klen) != 0)
    return 0;
  p->insns = xmalloc (h.insns * sizeof (struct sock_filter));
  memcpy (p->insns, buf + sizeof h + klen, h.insns * sizeof (struct sock_filter));
  p->len = (size_t) h.insns;
  p->flags = (unsigned) h.flags;
  p->notify = h.notify != 0;
  /* Recently used: the last to be pruned.  One syscall on the hit path. */
  futimens (fd, NULL);
  return 1;
}

struct cache_ent
{
  char name[32];
  struct timespec mtime;
};

static int
ent_older (const void *a, const void *b)
{
  const struct timespec *x = &((const struct cache_ent *) a)->mtime;
  const struct timespec *y = &((const struct cache_ent *) b)->mtime;
  if (x->tv_sec != y->tv_sec)
    return x->tv_sec < y->tv_sec ? -1 : 1;
  return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* "%016llx.bpf", the only names the cache writes. */
static bool
is_entry_name (const char *n)
{
  if (strlen (n) != 20 || strcmp (n + 16, ".bpf") != 0)
    return false;
  for (int i = 0; i < 16; i++)
    if (!strchr ("0123456789abcdef", n[i]))
      return false;
  return true;
}

/* Keeps at most CACHE_MAX_ENTRIES entries, dropping the least recently
 * used, and removes temp files whose writer is long gone.  Runs only after
 * a miss (a compile costs far more than this scan). */
static void
cache_prune (int dfd)
{
  _cleanup_free_ struct cache_ent *v = NULL;
  size_t n = 0, cap = 0;
  time_t now = time (NULL);
  DIR *d = fdopendir (dup (dfd));
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      size_t len = strlen (de->d_name);
      bool tmp = de->d_name[0] == '.' && len > 4
                 && strcmp (de->d_name + len - 4, ".tmp") == 0;
      if ((!tmp && !is_entry_name (de->d_name))
          || fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (tmp)
        {
          if (now - st.st_mtime > CACHE_STALE_TMP_SECS)
            unlinkat (dfd, de->d_name, 0);
          continue;
        }
      if (n == cap)
        v = xrealloc (v, (cap = cap ? 2 * cap : 64) * sizeof *v);
      memcpy (v[n].name, de->d_name, 21);     /* is_entry_name: 20 + NUL */
      v[n++].mtime = st.st_mtim;
    }
  closedir (d);
  if (n <= CACHE_MAX_ENTRIES)
    return;
  qsort (v, n, sizeof *v, ent_older);
  for (size_t i = 0; i < n - CACHE_MAX_ENTRIES; i++)
    unlinkat (dfd, v[i].name, 0);   /* ENOENT: a concurrent pruner won */
}

void
rt_sc_cache_store (const struct rt_seccomp *s, const struct rt_sc_prog *p)
{
  _cleanup_free_ char *key = NULL, *path = NULL, *name = NULL;
  _cleanup_fd_ int dfd = -1;
  struct cm_err *err = NULL;
  struct cache_hdr h;
  size_t klen;
  FILE *f;
  char *buf = NULL;
  size_t len = 0;

  if (cache_dir == NULL || p->insns == NULL
      || (key = cache_key (s, &klen)) == NULL)
    return;
  if (mkdir (cache_dir, 0700) < 0 && errno != EEXIST)
    return;
  dfd = open (cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return;
  h = (struct cache_hdr){ klen, p->len, p->flags, p->notify };
  f = open_memstream (&buf, &len);
  if (f == NULL)
    return;
  fwrite (&h, sizeof h, 1, f);
  fwrite (key, 1, klen, f);
  fwrite (p->insns, sizeof (struct sock_filter), p->len, f);
  if (fclose (f) == 0)
    {
      path = cache_file (key, klen);
      name = xstrdup (strrchr (path, '/') + 1);
      /* A failed store only costs the next container a compile. */
      if (cm_atomic_write_at (dfd, name, buf, len, 0600, &err) < 0)
        cm_err_free (&err);
      cache_prune (dfd);
    }
  free (buf);
}
