/* The layer unpacker under ASan: tars built in memory with libarchive,
 * applied to a temp dir; escapes refused with the entry named, symlinks
 * resolved inside the root, whiteouts, opaque dirs, hardlinks, the bomb
 * bound. */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"
#include "tests/unit/tap.h"

struct mem
{
  char buf[1 << 16];
  size_t len;
  bool done;
};

static ssize_t
mem_read (void *data, const void **buf)
{
  struct mem *m = data;
  if (m->done)
    return 0;
  m->done = true;
  *buf = m->buf;
  return (ssize_t) m->len;
}

/* A large layer in the heap, handed out in 64 KiB reads. */
struct big
{
  char *buf;
  size_t len, off;
};

static ssize_t
big_read (void *data, const void **buf)
{
  struct big *b = data;
  size_t n = b->len - b->off < 65536 ? b->len - b->off : 65536;
  *buf = b->buf + b->off;
  b->off += n;
  return (ssize_t) n;
}

/* A tar of one file of |size| bytes, through |filter|. */
static void
build_big (struct big *b, size_t size, int filter)
{
  struct archive *a = archive_write_new ();
  struct archive_entry *e = archive_entry_new ();
  char *data = xmalloc (size);
  size_t used = 0, cap = size + (1 << 20);
  for (size_t i = 0; i < size; i++)
    data[i] = (char) ((i * 2654435761u) >> 13);
  b->buf = xmalloc (cap);
  archive_write_set_format_pax_restricted (a);
  if (filter != ARCHIVE_FILTER_NONE)
    archive_write_add_filter (a, filter);
  archive_write_open_memory (a, b->buf, cap, &used);
  archive_entry_set_pathname (e, "big");
  archive_entry_set_filetype (e, AE_IFREG);
  archive_entry_set_perm (e, 0644);
  archive_entry_set_size (e, (la_int64_t) size);
  archive_write_header (a, e);
  archive_write_data (a, data, size);
  archive_entry_free (e);
  archive_write_close (a);
  archive_write_free (a);
  free (data);
  b->len = used;
  b->off = 0;
}

/* Entries: "f:NAME:DATA", "d:NAME", "l:NAME:TARGET" (symlink),
 * "h:NAME:TARGET" (hardlink). */
static int build_filter = ARCHIVE_FILTER_NONE;

static void
build (struct mem *m, const char *const *ents)
{
  struct archive *a = archive_write_new ();
  size_t used = 0;
  archive_write_set_format_pax_restricted (a);
  if (build_filter != ARCHIVE_FILTER_NONE)
    archive_write_add_filter (a, build_filter);
  archive_write_open_memory (a, m->buf, sizeof m->buf, &used);
  for (; *ents; ents++)
    {
      _cleanup_free_ char *s = xstrdup (*ents);
      char *name = s + 2, *arg = strchr (name, ':');
      struct archive_entry *e = archive_entry_new ();
      if (arg)
        *arg++ = '\0';
      archive_entry_set_pathname (e, name);
      archive_entry_set_perm (e, 0644);
      switch (s[0])
        {
        case 'f':
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_set_size (e, (la_int64_t) strlen (arg));
          break;
        case 'd':
          archive_entry_set_filetype (e, AE_IFDIR);
          archive_entry_set_perm (e, 0755);
          break;
        case 'l':
          archive_entry_set_filetype (e, AE_IFLNK);
          archive_entry_set_symlink (e, arg);
          break;
        case 'm':               /* m:NAME:MODE:UID:GID (octal mode, 'd' suffix: directory) */
          {
            char *end;
            unsigned long mode = strtoul (arg, &end, 8);
            unsigned long uid, gid;
            bool isdir = *end == 'd';
            uid = strtoul (end + (isdir ? 2 : 1), &end, 10);
            gid = strtoul (end + 1, NULL, 10);
            archive_entry_set_filetype (e, isdir ? AE_IFDIR : AE_IFREG);
            archive_entry_set_perm (e, (mode_t) mode);
            archive_entry_set_uid (e, (la_int64_t) uid);
            archive_entry_set_gid (e, (la_int64_t) gid);
            if (!isdir)
              archive_entry_set_size (e, 1);
          }
          break;
        default:
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_set_hardlink (e, arg);
          break;
        }
      archive_write_header (a, e);
      if (s[0] == 'f')
        archive_write_data (a, arg, strlen (arg));
      else if (s[0] == 'm' && archive_entry_filetype (e) == AE_IFREG)
        archive_write_data (a, "m", 1);
      archive_entry_free (e);
    }
  archive_write_close (a);
  archive_write_free (a);
  m->len = used;
  m->done = false;
}

static int
apply (int root, const char *const *ents, uint64_t limit, struct cm_err **err)
{
  static struct mem m;
  struct img_unpack_stats st = { 0 };
  build (&m, ents);
  return img_unpack_layer (root, mem_read, &m, 0, limit, 0, "layer", NULL, &st, err);
}

static bool
file_is (int root, const char *path, const char *want)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  struct cm_err *e = NULL;
  if (cm_read_file_at (root, path, 4096, &buf, &len, &e) < 0)
    {
      cm_err_free (&e);
      return false;
    }
  return strcmp (buf, want) == 0;
}

static void
refused (int root, const char *const *ents, const char *entry, const char *what)
{
  struct cm_err *e = NULL;
  int r = apply (root, ents, 1 << 20, &e);
  ok (r < 0 && e && strstr (e->msg, entry), "%s refused naming %s (%s)", what, entry,
      e ? e->msg : "accepted");
  cm_err_free (&e);
}

int
main (void)
{
  char tmpl[] = "/tmp/test_image_unpack.XXXXXX";
  char *dir = mkdtemp (tmpl);
  _cleanup_free_ char *outside = NULL;
  int root;
  struct cm_err *e = NULL;
  struct stat a, b;

  if (dir == NULL)
    return 77;
  outside = xasprintf ("%s.outside", dir);
  mkdir (outside, 0755);
  {
    _cleanup_free_ char *r = xasprintf ("%s/root", dir);
    mkdir (r, 0755);
    root = open (r, O_RDONLY | O_DIRECTORY);
  }

  {
    const char *l1[] = { "d:etc", "f:etc/passwd:root\n", "f:data/victim:v", "f:opq/old:o",
                         "f:a/b/c/deep:x", "l:etc/sh:/bin/busybox", NULL };
    ok (apply (root, l1, 1 << 20, &e) == 0, "layer 1 %s", e ? e->msg : "");
    ok (file_is (root, "a/b/c/deep", "x"), "missing parents created");
  }
  {
    const char *l2[] = { "f:opq/-mine:m", "f:opq/.wh..wh..opq:", "f:opq/new:n",
                         "f:data/.wh.victim:", "h:data/hl:etc/passwd",
                         "l:up:/", "f:up/upfile:u", NULL };
    ok (apply (root, l2, 1 << 20, &e) == 0, "layer 2 %s", e ? e->msg : "");
    ok (faccessat (root, "data/victim", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "whiteout removed the file");
    ok (faccessat (root, "opq/old", F_OK, 0) < 0 && file_is (root, "opq/new", "n")
        && file_is (root, "opq/-mine", "m"), "opaque dir: lower entries gone, this layer's kept");
    ok (fstatat (root, "data/hl", &a, 0) == 0 && fstatat (root, "etc/passwd", &b, 0) == 0
        && a.st_ino == b.st_ino, "hardlink shares the inode");
    ok (file_is (root, "upfile", "u"), "write through a symlink to / lands at the rootfs top");
  }
  {
    _cleanup_free_ char *t = xasprintf ("l:esc:%s", outside);
    const char *l[] = { t, "f:esc/pwned:p", NULL };
    refused (root, l, "esc/pwned", "symlink to a host dir the rootfs lacks");
    _cleanup_free_ char *p = xasprintf ("%s/pwned", outside);
    ok (access (p, F_OK) < 0, "nothing written outside");
  }
  {
    const char *l[] = { "f:../evil:x", NULL };
    refused (root, l, "../evil", "..");
  }
  {
    const char *l[] = { "f:/abs:x", NULL };
    refused (root, l, "/abs", "absolute");
  }
  {
    const char *l[] = { "h:hl2:../../../etc/passwd", NULL };
    refused (root, l, "hl2", "hardlink outside");
  }
  {
    const char *l[] = { "f:a/../../.wh.x:", NULL };
    refused (root, l, "a/../../.wh.x", "whiteout outside");
  }
  {
    const char *l[] = { "f:big:0123456789012345678901234567890123456789", NULL };
    struct img_unpack_stats st = { 0 };
    static struct mem m;
    build (&m, l);
    ok (img_unpack_layer (root, mem_read, &m, 0, 540, 0, "layer", NULL, &st, &e) < 0 && strstr (e->msg, "bomb"),
        "over the byte bound refused");
    cm_err_free (&e);
    (void) l;
  }
  {
    const char *l[] = { "f:etc/sh:replaced", NULL };
    ok (apply (root, l, 1 << 20, &e) == 0 && file_is (root, "etc/sh", "replaced"),
        "a file replaces a symlink without following it");
  }
  {
    /* The diff_id: sha256 of the uncompressed stream, the tar's trailing
     * blocks included, whatever the compression. */
    const char *l[] = { "d:dd", "f:dd/x:diff id content", NULL };
    const int filters[] = { ARCHIVE_FILTER_NONE, ARCHIVE_FILTER_GZIP, ARCHIVE_FILTER_ZSTD };
    const char *names[] = { "plain", "gzip", "zstd" };
    char want[72];
    struct img_diff_id got;
    static struct mem m;
    build_filter = ARCHIVE_FILTER_NONE;
    build (&m, l);
    img_sha256_str (m.buf, m.len, want);
    for (int i = 0; i < 3; i++)
      {
        struct img_unpack_stats st = { 0 };
        build_filter = filters[i];
        build (&m, l);
        memset (&got, 0, sizeof got);
        ok (img_unpack_layer (root, mem_read, &m, 0, 1 << 20, 0, "layer", &got, &st, &e) == 0
            && strcmp (got.exact, want) == 0 && file_is (root, "dd/x", "diff id content"),
            "%s layer: diff_id %s is the raw tar's %s %s", names[i], got.exact, want,
            e ? e->msg : "");
        cm_err_free (&e);
      }
    build_filter = ARCHIVE_FILTER_NONE;
    m.len = 0;
    m.done = false;
    {
      struct img_unpack_stats st = { 0 };
      img_sha256_str ("", 0, want);
      ok (img_unpack_layer (root, mem_read, &m, 0, 1 << 20, 0, "layer", &got, &st, &e) == 0
          && strcmp (got.exact, want) == 0, "empty layer: diff_id of nothing %s", e ? e->msg : "");
      cm_err_free (&e);
    }
  }
  {
    /* zstd:chunked of older containers/storage: the tar stops after the
     * last entry's data; the config hashes it with its end-of-archive
     * padding (a full 10 KiB record, or Go's 1024 bytes). */
    const char *l[] = { "f:chunked:abc", NULL };
    static struct mem m;
    struct img_unpack_stats st = { 0 };
    struct img_diff_id got;
    char go[72], rec[72], other[72];
    size_t end = 1024;          /* one header, one data block */
    _cleanup_free_ char *padded = xcalloc (1, 10240);
    build_filter = ARCHIVE_FILTER_NONE;
    build (&m, l);
    ok (m.len == end + 1024 && memcmp (m.buf + end, padded, 1024) == 0,
        "the tar ends with two zero blocks (%zu bytes)", m.len);
    img_sha256_str (m.buf, m.len, go);
    memcpy (padded, m.buf, end);
    img_sha256_str (padded, 10240, rec);
    img_sha256_str ("other", 5, other);
    m.len = end;
    m.done = false;
    ok (img_unpack_layer (root, mem_read, &m, 0, 1 << 20, 0, "layer", &got, &st, &e) == 0
        && file_is (root, "chunked", "abc") && strcmp (got.exact, go) != 0
        && img_diff_id_matches (&got, rec) && img_diff_id_matches (&got, go)
        && !img_diff_id_matches (&got, other),
        "a tar without its padding matches the padded diff_id, not any other %s",
        e ? e->msg : "");
    cm_err_free (&e);
    m.len = end - 100;          /* cut inside the data: no padding can help */
    m.done = false;
    ok (img_unpack_layer (root, mem_read, &m, 0, 1 << 20, 0, "layer", &got, &st, &e) < 0,
        "a tar cut inside an entry fails");
    cm_err_free (&e);
  }
  {
    /* A layer of many decompressed blocks: the diff_id spans them all. */
    struct big bl = { 0 };
    struct img_unpack_stats st = { 0 };
    char want[72];
    struct img_diff_id got;
    struct stat bs;
    build_big (&bl, 20u << 20, ARCHIVE_FILTER_NONE);
    img_sha256_str (bl.buf, bl.len, want);
    free (bl.buf);
    build_big (&bl, 20u << 20, ARCHIVE_FILTER_GZIP);
    /* size hint 0: decompressed inline; huge: on the decompression thread */
    for (int threaded = 0; threaded < 2; threaded++)
      {
        bl.off = 0;
        memset (&got, 0, sizeof got);
        ok (img_unpack_layer (root, big_read, &bl, threaded ? UINT64_MAX : 0, 1u << 30,
                              0, "layer", &got, &st, &e) == 0
            && strcmp (got.exact, want) == 0 && fstatat (root, "big", &bs, 0) == 0
            && bs.st_size == (20 << 20), "20 MiB gzip layer%s: diff_id %s is %s %s",
            threaded ? " (threaded)" : "", got.exact, want, e ? e->msg : "");
        cm_err_free (&e);
        unlinkat (root, "big", 0);
      }
    {
      /* Cut short: the decompression thread's error reaches the reader. */
      size_t full = bl.len;
      bl.off = 0;
      bl.len = full / 2;
      ok (img_unpack_layer (root, big_read, &bl, UINT64_MAX, 1u << 30, 0, "layer", &got, &st, &e) < 0
          && e && strstr (e->msg, "truncated"), "threaded: a truncated layer fails: %s",
          e ? e->msg : "accepted");
      cm_err_free (&e);
      bl.len = full;
      /* Stopped by the reader (the bomb bound) while the thread runs. */
      bl.off = 0;
      ok (img_unpack_layer (root, big_read, &bl, UINT64_MAX, 1u << 20, 0, "layer", &got, &st, &e) < 0
          && e && strstr (e->msg, "bomb"), "threaded: the reader's error stops the thread: %s",
          e ? e->msg : "accepted");
      cm_err_free (&e);
      unlinkat (root, "big", 0);
    }
    free (bl.buf);
  }
  {
    /* A small tar followed by 65 MiB of zeros, gzipped to ~65 KiB: the
     * diff_id hashing of what follows the tar's end is bounded. */
    const char *l[] = { "f:tiny:t", NULL };
    static struct mem m;
    struct big bl = { 0 };
    struct img_unpack_stats st = { 0 };
    struct archive *w = archive_write_new ();
    struct archive_entry *ae = archive_entry_new ();
    size_t used = 0, cap = 8u << 20;
    struct img_diff_id got;
    _cleanup_free_ char *zeros = xcalloc (1, 1u << 20);
    build_filter = ARCHIVE_FILTER_NONE;
    build (&m, l);
    bl.buf = xmalloc (cap);
    archive_write_set_format_raw (w);
    archive_write_add_filter (w, ARCHIVE_FILTER_GZIP);
    archive_write_open_memory (w, bl.buf, cap, &used);
    archive_entry_set_pathname (ae, "x");
    archive_entry_set_filetype (ae, AE_IFREG);
    archive_write_header (w, ae);
    archive_write_data (w, m.buf, m.len);
    for (int i = 0; i < 65; i++)
      archive_write_data (w, zeros, 1u << 20);
    archive_entry_free (ae);
    archive_write_close (w);
    archive_write_free (w);
    bl.len = used;
    for (int threaded = 0; threaded < 2; threaded++)
      {
        bl.off = 0;
        ok (img_unpack_layer (root, big_read, &bl, threaded ? UINT64_MAX : 0, 1u << 30,
                              0, "layer", &got, &st, &e) < 0
            && strstr (e->msg, "after the end of the tar"), "65 MiB after the tar refused%s: %s",
            threaded ? " (threaded)" : "", e ? e->msg : "accepted");
        cm_err_free (&e);
        unlinkat (root, "tiny", 0);
      }
    free (bl.buf);
  }
  {
    /* Whiteouts act on the layers below only: one in the same layer as
     * the file it names leaves that file (image-spec layer.md). */
    const char *l1[] = { "f:wo/lower:l", "f:wo2/lower:l", NULL };
    const char *l2[] = { "f:wo/mine:m", "f:wo/.wh.mine:", "f:wo/.wh.lower:",
                         "f:wo2/.wh..wh..opq:", "f:wo2/after:a", NULL };
    ok (apply (root, l1, 1 << 20, &e) == 0 && apply (root, l2, 1 << 20, &e) == 0,
        "layers with same-layer whiteouts %s", e ? e->msg : "");
    ok (file_is (root, "wo/mine", "m") && faccessat (root, "wo/lower", F_OK, 0) < 0,
        "a whiteout removes the lower file, not this layer's own");
    ok (file_is (root, "wo2/after", "a") && faccessat (root, "wo2/lower", F_OK, 0) < 0,
        "an opaque marker before this layer's file keeps the file");
  }
  {
    /* A first layer: its whiteouts have nothing below them. */
    _cleanup_free_ char *r2 = xasprintf ("%s/root2", dir);
    int root2;
    const char *l[] = { "f:x/file:1", "f:x/.wh.file:", "f:y/a:1", "f:y/.wh..wh..opq:", NULL };
    mkdir (r2, 0755);
    root2 = open (r2, O_RDONLY | O_DIRECTORY);
    ok (apply (root2, l, 1 << 20, &e) == 0 && file_is (root2, "x/file", "1")
        && file_is (root2, "y/a", "1"), "first layer: whiteouts hide nothing of its own %s",
        e ? e->msg : "");
    cm_err_free (&e);
    {
      struct cm_err *e2 = NULL;
      cm_rm_rf_at (AT_FDCWD, r2, &e2);
      cm_err_free (&e2);
    }
    close (root2);
  }
  {
    /* Modes and owners come out exactly, whatever the umask and the
     * parent's set-group-ID bit; the chown/chmod calls skipped when
     * creation already got them right must not change the result. */
    const char *l[] = { "m:modes/r640:0640:0:0", "m:modes/suid:04755:0:0",
                        "m:modes/own:0600:1234:5678", "m:modes/d700:0700d:0:0",
                        "m:modes/sg:02775d:0:4321", "m:modes/sg/f:0644:0:0",
                        "m:modes/sg/sub:0755d:0:0", NULL };
    const char *l2[] = { "m:modes/d700:0711d:0:0", "m:modes/r640:0604:0:0", NULL };
    mode_t old = umask (077);
    struct stat st;
    bool root_user = geteuid () == 0;
    ok (apply (root, l, 1 << 20, &e) == 0, "modes layer %s", e ? e->msg : "");
    umask (old);
    ok (fstatat (root, "modes/r640", &st, 0) == 0 && (st.st_mode & 07777) == 0640,
        "0640 under umask 077: %o", st.st_mode & 07777);
    ok (fstatat (root, "modes/d700", &st, 0) == 0 && (st.st_mode & 07777) == 0700,
        "directory 0700: %o", st.st_mode & 07777);
    ok (apply (root, l2, 1 << 20, &e) == 0 && fstatat (root, "modes/d700", &st, 0) == 0
        && (st.st_mode & 07777) == 0711, "an upper layer's directory entry re-modes it: %o %s",
        st.st_mode & 07777, e ? e->msg : "");
    ok (fstatat (root, "modes/r640", &st, 0) == 0 && (st.st_mode & 07777) == 0604,
        "an upper layer's file replaces the lower one's mode: %o", st.st_mode & 07777);
    if (root_user)
      {
        ok (fstatat (root, "modes/suid", &st, 0) == 0 && (st.st_mode & 07777) == 04755,
            "set-user-ID kept: %o", st.st_mode & 07777);
        ok (fstatat (root, "modes/own", &st, 0) == 0 && st.st_uid == 1234 && st.st_gid == 5678,
            "owner 1234:5678: %u:%u", st.st_uid, st.st_gid);
        ok (fstatat (root, "modes/sg", &st, 0) == 0 && st.st_gid == 4321
            && (st.st_mode & 07777) == 02775, "set-group-ID directory %o gid %u",
            st.st_mode & 07777, st.st_gid);
        ok (fstatat (root, "modes/sg/f", &st, 0) == 0 && st.st_gid == 0,
            "a file in it keeps its own group 0, not the inherited 4321: %u", st.st_gid);
        ok (fstatat (root, "modes/sg/sub", &st, 0) == 0 && st.st_gid == 0
            && (st.st_mode & 07777) == 0755, "a directory in it: gid %u mode %o (no inherited set-group-ID)",
            st.st_gid, st.st_mode & 07777);
      }
    else
      skip ("owner checks need root");
    cm_err_free (&e);
  }
  {
    /* What is in the way is replaced, never followed. */
    _cleanup_free_ char *lnk = xasprintf ("l:rep/l:%s", outside);
    const char *l1[] = { "f:rep/d/inner:i", "f:rep/f:f", lnk, "f:rep/h:old", NULL };
    const char *l2[] = { "f:rep/d:now a file", "d:rep/f", "d:rep/l", "h:rep/h:etc/passwd", NULL };
    struct stat st, pw;
    ok (apply (root, l1, 1 << 20, &e) == 0 && apply (root, l2, 1 << 20, &e) == 0,
        "replacing layer %s", e ? e->msg : "");
    ok (file_is (root, "rep/d", "now a file"), "a file replaces a directory");
    ok (fstatat (root, "rep/f", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode),
        "a directory replaces a file");
    ok (fstatat (root, "rep/l", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode)
        && fstatat (AT_FDCWD, outside, &pw, 0) == 0 && st.st_ino != pw.st_ino,
        "a directory replaces a symlink to the host, not following it");
    ok (fstatat (root, "rep/h", &st, 0) == 0 && fstatat (root, "etc/passwd", &pw, 0) == 0
        && st.st_ino == pw.st_ino, "a hardlink replaces a file");
    cm_err_free (&e);
  }
  {
    struct cm_err *e2 = NULL;
    _cleanup_free_ char *r = xasprintf ("%s/root", dir);
    cm_rm_rf_at (AT_FDCWD, r, &e2);
    rmdir (dir);
    rmdir (outside);
    cm_err_free (&e2);
  }
  close (root);
  return tap_done ();
}
