/* Unit tests: criu-lite end to end, standalone (no container): a running
 * static program (tests/helpers/cl_counter) is checkpointed, then a forked
 * child of this test becomes it again through criu_restore.  The counter
 * must go on from where it stopped, the 100 MiB pattern be intact, file
 * offsets and O_APPEND survive, every thread run again with its own mask;
 * a truncated or corrupted image is refused naming what is wrong. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "criu-lite/criu.h"
#include "criu-lite/internal.h"
#include "tap.h"

struct proc
{
  pid_t pid;
  int in, out;
  char buf[1 << 16];
  size_t len;
};

static char helper[4096];
static long long last_count, last_kid;   /* the last ones line() saw */
static long long first_kid = -1;          /* the first since set to -1 */

/* One line (without '\n') within |ms|; false on timeout or EOF. */
static bool
line (struct proc *p, char *out, size_t n, int ms)
{
  for (;;)
    {
      char *nl = memchr (p->buf, '\n', p->len);
      struct pollfd pf = { p->out, POLLIN, 0 };
      ssize_t got;
      if (nl)
        {
          size_t l = (size_t) (nl - p->buf);
          snprintf (out, n, "%.*s", (int) l, p->buf);
          if (cm_startswith (out, "count "))
            last_count = atoll (out + 6);
          else if (cm_startswith (out, "kid count "))
            {
              last_kid = atoll (out + 10);
              if (first_kid < 0)
                first_kid = last_kid;
            }
          memmove (p->buf, nl + 1, p->len - l - 1);
          p->len -= l + 1;
          return true;
        }
      if (poll (&pf, 1, ms) <= 0)
        return false;
      got = read (p->out, p->buf + p->len, sizeof p->buf - p->len - 1);
      if (got <= 0)
        return false;
      p->len += (size_t) got;
    }
}

/* The next line starting with |prefix| (count lines skipped). */
static bool
expect (struct proc *p, const char *prefix, char *out, size_t n)
{
  char l[256];
  while (line (p, l, sizeof l, 5000))
    if (getenv ("CL_DEBUG") && printf ("#  < %s\n", l) < 0)
      ;
    else if (cm_startswith (l, prefix))
      {
        snprintf (out, n, "%s", l);
        return true;
      }
  return false;
}

static long long
next_count (struct proc *p)
{
  char l[256];
  return expect (p, "count ", l, sizeof l) ? atoll (l + 6) : -1;
}

static void
ask (struct proc *p, char c)
{
  if (write (p->in, &c, 1) != 1)
    perror ("ask");
}

static bool
spawn (struct proc *p, char *const argv[])
{
  int in[2], out[2];
  char l[256];
  memset (p, 0, sizeof *p);
  last_count = last_kid = 0;    /* none printed yet */
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (out, O_CLOEXEC) < 0)
    return false;
  p->pid = fork ();
  if (p->pid == 0)
    {
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      close_range (3, ~0u, 0);  /* only stdio: the image carries no pipe */
      execv (helper, argv);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  p->in = in[1];
  p->out = out[0];
  return expect (p, "ready", l, sizeof l);
}

static void
finish (struct proc *p)
{
  if (p->pid > 0)
    {
      kill (p->pid, SIGKILL);
      waitpid (p->pid, NULL, 0);
    }
  close (p->in);
  close (p->out);
  p->pid = -1;
}

/* The last count the checkpointed (and killed) process printed. */
static long long
drain (struct proc *p)
{
  char l[256];
  while (line (p, l, sizeof l, 5000))
    ;
  waitpid (p->pid, NULL, 0);
  p->pid = -1;
  close (p->in);
  close (p->out);
  return last_count;
}

/* A forked child becomes the image; |msg| gets criu_restore's error. */
static bool
restore (const char *dir, struct proc *p, char *msg, size_t n)
{
  int in[2], out[2], rep[2];
  int32_t code = -2;
  ssize_t got;
  memset (p, 0, sizeof *p);
  msg[0] = '\0';
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (out, O_CLOEXEC) < 0
      || pipe2 (rep, O_CLOEXEC) < 0)
    return false;
  p->pid = fork ();
  if (p->pid == 0)
    {
      struct cm_err *err = NULL;
      struct criu_restore_opts o = { .image_dir = dir, .report_fd = rep[1] };
      int32_t fail = -1;
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      criu_restore (&o, &err);
      if (write (rep[1], &fail, 4) == 4 && err)
        fail = (int32_t) write (rep[1], err->msg, strlen (err->msg));
      _exit (1);
    }
  close (in[0]);
  close (out[1]);
  close (rep[1]);
  p->in = in[1];
  p->out = out[0];
  got = read (rep[0], &code, 4);
  if (got == 4 && code == -1)
    {
      got = read (rep[0], msg, n - 1);
      msg[got > 0 ? got : 0] = '\0';
    }
  else if (got == 4 && code != 0)
    snprintf (msg, n, "stub failed: phase %d errno %d", code >> 16, code & 0xffff);
  else if (got != 4)
    snprintf (msg, n, "no report (child died)");
  close (rep[0]);
  if (code != 0)
    {
      waitpid (p->pid, NULL, 0);
      p->pid = -1;
    }
  return code == 0;
}

static int
dump (pid_t pid, const char *dir, bool leave, char *msg, size_t n)
{
  struct cm_err *err = NULL;
  struct criu_dump_opts o = { .pid = pid, .image_dir = dir, .leave_running = leave };
  int r = criu_dump (&o, &err);
  snprintf (msg, n, "%s", err ? err->msg : "");
  cm_err_free (&err);
  return r;
}

static pid_t
test_counter (const char *dir, const char *tmp)
{
  struct proc p, q;
  char f1[4096], f2[4096], msg[1024], l[256];
  long long before, after;
  char *argv[] = { (char *) "cl_counter", (char *) "-m", (char *) "100",
                   (char *) "-f", f1, (char *) "-a", f2, NULL };
  struct timespec t0, t1, t2;

  snprintf (f1, sizeof f1, "%s/plain", tmp);
  snprintf (f2, sizeof f2, "%s/append", tmp);
  pid_t pid;
  if (!spawn (&p, argv))
    {
      ok (0, "cl_counter starts");
      return -1;
    }
  pid = p.pid;
  next_count (&p);
  ask (&p, 'f');
  expect (&p, "file", l, sizeof l);
  is_str (l, "file off=6 append=0 size=6", "before: the plain file's offset");
  expect (&p, "file", l, sizeof l);
  is_str (l, "file off=6 append=1 size=6", "before: the O_APPEND file");
  ask (&p, 's');
  expect (&p, "signal", l, sizeof l);
  is_str (l, "signal n=1 alt=1", "before: SIGUSR1's handler runs on the altstack");
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (dump (p.pid, dir, false, msg, sizeof msg) < 0)
    {
      ok (0, "checkpoint a 100 MiB process: %s", msg);
      finish (&p);
      return -1;
    }
  ok (1, "checkpoint a 100 MiB process");
  clock_gettime (CLOCK_MONOTONIC, &t1);
  before = drain (&p);
  ok (before > 0, "the checkpointed process is gone (last count %lld)", before);
  /* someone else writes to the plain file meanwhile: the offset stays */
  if (!restore (dir, &q, msg, sizeof msg))
    {
      ok (0, "restore: %s", msg);
      return pid;
    }
  clock_gettime (CLOCK_MONOTONIC, &t2);
  ok (1, "restore reports the saved context resumed");
  printf ("# checkpoint %.1f ms, restore %.1f ms (100 MiB)\n",
          (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6,
          (double) (t2.tv_sec - t1.tv_sec) * 1e3 + (double) (t2.tv_nsec - t1.tv_nsec) / 1e6);
  after = next_count (&q);
  ok (after == before + 1, "the counter goes on from %lld: next is %lld",
      before, after);
  ask (&q, 'v');
  expect (&q, "verify", l, sizeof l);
  is_str (l, "verify ok", "the 100 MiB pattern is intact");
  ask (&q, 's');
  expect (&q, "signal", l, sizeof l);
  is_str (l, "signal n=2 alt=1", "the signal handler and the altstack are restored");
  ask (&q, 'f');
  expect (&q, "file", l, sizeof l);
  is_str (l, "file off=7 append=0 size=7", "the plain file's offset is restored");
  expect (&q, "file", l, sizeof l);
  is_str (l, "file off=7 append=1 size=7", "O_APPEND is restored");
  ask (&q, 'q');
  {
    int st = -1;
    waitpid (q.pid, &st, 0);
    ok (WIFEXITED (st) && WEXITSTATUS (st) == 0, "the restored process exits "
        "normally (status %#x)", st);
    q.pid = -1;
    finish (&q);
  }
  return pid;
}

static void
test_tree (const char *dir)
{
  struct proc p, q;
  char msg[1024], l[256];
  long long before, kid_before, n;
  char *argv[] = { (char *) "cl_counter", (char *) "-c", NULL };

  if (!spawn (&p, argv))
    {
      ok (0, "cl_counter -c starts");
      return;
    }
  expect (&p, "kid count", l, sizeof l);
  if (dump (p.pid, dir, false, msg, sizeof msg) < 0)
    {
      ok (0, "checkpoint a parent and its child: %s", msg);
      finish (&p);
      return;
    }
  ok (1, "checkpoint a parent and its child");
  before = drain (&p);
  kid_before = last_kid;
  if (!restore (dir, &q, msg, sizeof msg))
    {
      ok (0, "restore the tree: %s", msg);
      return;
    }
  ok (1, "restore the tree");
  first_kid = -1;
  n = next_count (&q);
  ok (n == before + 1, "the parent goes on from %lld: %lld", before, n);
  expect (&q, "kid count", l, sizeof l);
  ok (first_kid == kid_before + 1, "the child goes on from %lld: %lld",
      kid_before, first_kid);
  ask (&q, 'k');
  expect (&q, "kid exited", l, sizeof l);
  is_str (l, "kid exited 7", "the child is the restored parent's own child, "
          "in its process group");
  finish (&q);
}

static void
test_threads (const char *dir)
{
  struct proc p, q, r;
  char msg[1024], l[256];
  char *argv[] = { (char *) "cl_counter", (char *) "-t", (char *) "4",
                   (char *) "-j", NULL };

  if (!spawn (&p, argv))
    {
      ok (0, "cl_counter -t 4 starts");
      return;
    }
  ask (&p, 't');
  expect (&p, "threads", l, sizeof l);
  usleep (20000);
  ask (&p, 't');
  expect (&p, "threads", l, sizeof l);
  is_str (l, "threads ok 4", "before: 4 threads run, each with its mask");
  if (dump (p.pid, dir, true, msg, sizeof msg) < 0)
    {
      ok (0, "checkpoint 5 threads, leaving them running: %s", msg);
      finish (&p);
      return;
    }
  ok (1, "checkpoint 5 threads, leaving them running");
  usleep (20000);
  ask (&p, 't');
  expect (&p, "threads", l, sizeof l);
  is_str (l, "threads ok 4", "the original runs on after the checkpoint");
  ask (&p, 'v');
  expect (&p, "verify", l, sizeof l);
  is_str (l, "verify ok", "the original's memory is untouched");
  ask (&p, 's');
  expect (&p, "signal", l, sizeof l);
  is_str (l, "signal n=1 alt=1", "the original's signal handling is untouched");
  for (int copy = 0; copy < 2; copy++)
    {
      struct proc *c = copy ? &r : &q;
      if (!restore (dir, c, msg, sizeof msg))
        {
          ok (0, "restore copy %d: %s", copy + 1, msg);
          continue;
        }
      ask (c, 't');
      expect (c, "threads", l, sizeof l);
      usleep (20000);
      ask (c, 't');
      expect (c, "threads", l, sizeof l);
      is_str (l, "threads ok 4", "copy %d: every thread runs again with its own "
              "signal mask", copy + 1);
      ask (c, 'j');
      expect (c, "joined", l, sizeof l);
      is_str (l, "joined", "copy %d: pthread_join returns (clear_child_tid "
              "restored)", copy + 1);
    }
  finish (&q);
  finish (&r);
  finish (&p);
}

static pid_t bad_pid;

static void
refused (const char *dir, const char *want, const char *what)
{
  struct cm_err *err = NULL;
  struct proc q;
  char msg[1024];
  char sub[4200];
  int r;
  snprintf (sub, sizeof sub, "%s/%d", dir, (int) bad_pid);
  r = strstr (want, "tree") ? -1 : criu_image_check (sub, &err);
  if (!strstr (want, "tree"))
    ok (r < 0 && err && strstr (err->msg, want), "%s: refused (%s)", what,
        err ? err->msg : "accepted");
  cm_err_free (&err);
  ok (!restore (dir, &q, msg, sizeof msg) && strstr (msg, want),
      "%s: criu_restore returns the error to a live caller (%s)", what, msg);
}

static void
copy_file (const char *from, const char *to)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  struct cm_err *err = NULL;
  int fd;
  if (cm_read_file_at (AT_FDCWD, from, 1u << 30, &buf, &len, &err) < 0)
    return;
  fd = open (to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0 && cm_write_all (fd, buf, len) < 0)
    perror ("copy");
  close (fd);
}

static void
test_bad_images (const char *dir, pid_t pid, const char *tmp)
{
  char top[4096], bad[4200], a[8400], b[8400];
  struct cl_header h;
  int fd;

  bad_pid = pid;
  snprintf (top, sizeof top, "%s/bad", tmp);
  snprintf (bad, sizeof bad, "%s/%d", top, (int) pid);
  cm_mkdir_p (bad, 0700, &(struct cm_err *) { NULL });
  snprintf (a, sizeof a, "%s/tree.img", dir);
  snprintf (b, sizeof b, "%s/tree.img", top);
  copy_file (a, b);
  snprintf (a, sizeof a, "%s/tmpfs.img", dir);
  snprintf (b, sizeof b, "%s/tmpfs.img", top);
  copy_file (a, b);
  snprintf (a, sizeof a, "%s/%d/core.img", dir, (int) pid);
  snprintf (b, sizeof b, "%s/core.img", bad);
  copy_file (a, b);
  snprintf (a, sizeof a, "%s/%d/pages.img", dir, (int) pid);
  snprintf (b, sizeof b, "%s/pages.img", bad);
  copy_file (a, b);
  ok (criu_image_check (bad, &(struct cm_err *) { NULL }) == 0, "a copied image "
      "checks");
  {
    struct proc q;
    char msg[1024];
    ok (restore (top, &q, msg, sizeof msg), "the copy restores: %s", msg);
    finish (&q);
  }

  /* a flipped byte inside the vmas section */
  snprintf (b, sizeof b, "%s/core.img", bad);
  fd = open (b, O_RDWR);
  if (pread (fd, &h, sizeof h, 0) == sizeof h)
    {
      char c;
      off_t at = (off_t) h.sect[CL_S_VMAS - 1].offset + 9;
      if (pread (fd, &c, 1, at) == 1)
        {
          c ^= 0x40;
          if (pwrite (fd, &c, 1, at) != 1)
            perror ("pwrite");
        }
    }
  close (fd);
  refused (top, "section vmas checksum mismatch", "a corrupted vmas section");

  snprintf (a, sizeof a, "%s/%d/core.img", dir, (int) pid);
  copy_file (a, b);
  if (truncate (b, (off_t) h.sect[CL_S_FDS - 1].offset + 8) < 0)
    perror ("truncate");
  refused (top, "section fds truncated", "a truncated core.img");

  copy_file (a, b);
  snprintf (b, sizeof b, "%s/pages.img", bad);
  {
    struct stat st;
    if (stat (b, &st) == 0 && truncate (b, st.st_size - 4096) < 0)
      perror ("truncate");
  }
  refused (top, "pages.img: truncated", "a truncated pages.img");

  /* one flipped bit in the page data, the length unchanged */
  snprintf (a, sizeof a, "%s/%d/pages.img", dir, (int) pid);
  copy_file (a, b);
  {
    struct stat st;
    char c = 0;
    fd = open (b, O_RDWR);
    if (fd < 0 || fstat (fd, &st) < 0 || pread (fd, &c, 1, st.st_size / 2) != 1)
      perror ("pages.img");
    c ^= 0x01;
    if (pwrite (fd, &c, 1, st.st_size / 2) != 1)
      perror ("pwrite");
    close (fd);
  }
  refused (top, "pages.img: checksum mismatch", "a corrupted pages.img");

  snprintf (b, sizeof b, "%s/core.img", bad);
  fd = open (b, O_RDWR);
  if (pwrite (fd, "NOTCRIU!", 8, 0) != 8)
    perror ("pwrite");
  close (fd);
  refused (top, "bad magic", "a file that is no image");

  snprintf (b, sizeof b, "%s/tree.img", top);
  if (truncate (b, 50) < 0)
    perror ("truncate");
  refused (top, "tree.img: truncated", "a truncated tree.img");
}

/* Sets the number of the last record of section fds of |core| to |fd|,
 * every checksum made to match: an image the loader accepts (its fd
 * numbers are in range and increasing) that names an fd this process
 * cannot have. */
static bool
forge_last_fd (const char *core, int32_t fd)
{
  _cleanup_free_ char *buf = NULL;
  struct cm_err *e = NULL;
  struct cl_header h;
  struct cl_sect_desc *s;
  size_t len;
  bool done = false;
  if (cm_read_file_at (AT_FDCWD, core, 1u << 30, &buf, &len, &e) < 0
      || len < sizeof h)
    {
      cm_err_free (&e);
      return false;
    }
  memcpy (&h, buf, sizeof h);
  s = &h.sect[0];
  for (int i = 0; i < CL_S_COUNT; i++)
    if (h.sect[i].type == CL_S_FDS)
      s = &h.sect[i];
  if (s->type == CL_S_FDS && s->length >= sizeof (struct cl_fd)
      && s->offset + s->length <= len)
    {
      struct cl_fd f;
      size_t at = s->offset + s->length - sizeof f;
      memcpy (&f, buf + at, sizeof f);
      f.fd = fd;
      memcpy (buf + at, &f, sizeof f);
      done = cm_sha256 (buf + s->offset, s->length, s->sha256, &e) == 0
             && cm_sha256 (&h, offsetof (struct cl_header, header_sha256),
                           h.header_sha256, &e) == 0;
      memcpy (buf, &h, sizeof h);
    }
  if (done)
    {
      int out = open (core, O_WRONLY | O_TRUNC | O_CLOEXEC);
      done = out >= 0 && cm_write_all (out, buf, len) == (ssize_t) len;
      if (out >= 0)
        close (out);
    }
  cm_err_free (&e);
  return done;
}

/* A forged fd number the loader cannot know is bad (within its range,
 * above this process's open-file limit): restore fails naming it, before
 * anything of the caller is gone, instead of losing the fd silently at
 * its number or blaming another file. */
static void
test_bad_fd_number (const char *dir, pid_t pid, const char *tmp)
{
  char top[4096], bad[4200], a[8400], b[8400], msg[1024];
  const char *files[] = { "tree.img", "tmpfs.img" };
  struct proc q;
  snprintf (top, sizeof top, "%s/badfd", tmp);
  snprintf (bad, sizeof bad, "%s/%d", top, (int) pid);
  cm_mkdir_p (bad, 0700, &(struct cm_err *) { NULL });
  for (size_t i = 0; i < 2; i++)
    {
      snprintf (a, sizeof a, "%s/%s", dir, files[i]);
      snprintf (b, sizeof b, "%s/%s", top, files[i]);
      copy_file (a, b);
    }
  snprintf (a, sizeof a, "%s/%d/pages.img", dir, (int) pid);
  snprintf (b, sizeof b, "%s/pages.img", bad);
  copy_file (a, b);
  snprintf (a, sizeof a, "%s/%d/core.img", dir, (int) pid);
  snprintf (b, sizeof b, "%s/core.img", bad);
  copy_file (a, b);
  if (!forge_last_fd (b, 60000))
    {
      ok (0, "forge the fds section");
      return;
    }
  ok (criu_image_check (bad, &(struct cm_err *) { NULL }) == 0,
      "an fd number within the format's range loads");
  if (restore (top, &q, msg, sizeof msg))
    {
      finish (&q);
      ok (0, "restore of fd 60000 fails: it was restored");
      return;
    }
  ok (strstr (msg, "fd 60000: ") && strstr (msg, "open-file limit"),
      "restore of fd 60000 fails naming it (%s)", msg);
}

/* pages.img's check is XXH64 from libxxhash0 (dlopen): the reference
 * vectors, and streamed in page-sized pieces as the dump writes it equals
 * one pass over the file. */
static uint64_t
xxh (const void *p, size_t n)
{
  struct cm_err *e = NULL;
  uint64_t h = 0;
  if (cl_xxh64 (p, n, &h, &e) < 0)
    printf ("# %s\n", e->msg);
  cm_err_free (&e);
  return h;
}

static void
test_xxh64 (void)
{
  static const char spam[] = "Nobody inspects the spammish repetition";
  static char buf[3 * 4096];
  struct cl_xxh64 s;
  struct cm_err *e = NULL;

  ok (xxh ("", 0) == 0xEF46DB3751D8E999ull, "XXH64 of nothing");
  ok (xxh ("abc", 3) == 0x44BC2CF5AD770999ull, "XXH64 of abc");
  ok (xxh (spam, sizeof spam - 1) == 0xFBCEA83C8A378BF1ull,
      "XXH64 of 39 bytes (stripes and every tail)");
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (char) (i * 7 + (i >> 9));
  if (cl_xxh64_init (&s, &e) < 0)
    {
      ok (0, "XXH64 state: %s", e->msg);
      cm_err_free (&e);
      return;
    }
  for (size_t i = 0; i < sizeof buf; i += 4096)
    cl_xxh64_update (&s, buf + i, 4096);
  ok (cl_xxh64_digest (&s) == xxh (buf, sizeof buf),
      "XXH64 streamed by pages equals one pass");
  cl_xxh64_fini (&s);
}

/* A binary replaced (here: touched) after the checkpoint is refused. */
static void
test_changed_binary (const char *tmp)
{
  char bin[4096], dir[4200], msg[1024], saved[4096];
  struct proc p, q;
  char *argv[] = { (char *) "cl_counter", NULL };
  struct timespec later[2] = { { 0, UTIME_OMIT }, { 2000000000, 0 } };

  if (geteuid () != 0)
    {
      /* /proc/PID/map_files, where the mapped file is stat'ed, is root's */
      skip ("needs root: /proc/PID/map_files");
      return;
    }
  snprintf (bin, sizeof bin, "%s/cl_counter.copy", tmp);
  snprintf (dir, sizeof dir, "%s/img-changed", tmp);
  copy_file (helper, bin);
  chmod (bin, 0755);
  snprintf (saved, sizeof saved, "%s", helper);
  snprintf (helper, sizeof helper, "%s", bin);
  if (!spawn (&p, argv))
    {
      ok (0, "the copied cl_counter starts");
      snprintf (helper, sizeof helper, "%s", saved);
      return;
    }
  snprintf (helper, sizeof helper, "%s", saved);
  next_count (&p);
  if (dump (p.pid, dir, false, msg, sizeof msg) < 0)
    {
      ok (0, "checkpoint: %s", msg);
      finish (&p);
      return;
    }
  drain (&p);
  utimensat (AT_FDCWD, bin, later, 0);
  ok (!restore (dir, &q, msg, sizeof msg) && strstr (msg, "changed since the "
      "checkpoint"), "a binary touched since the checkpoint is refused (%s)",
      msg);
}

static void
test_stub_is_self_contained (void)
{
  FILE *f = popen ("objdump -r -j cl_stub build/asan/criu-lite/stub.o "
                   "build/obj/criu-lite/stub.o 2>&1", "r");
  char l[512];
  int relocs = 0, files = 0;
  if (f == NULL)
    {
      skip ("objdump not available");
      return;
    }
  while (fgets (l, sizeof l, f))
    {
      if (strstr (l, "file format elf64"))
        files++;
      else if (strstr (l, "R_X86_64"))
        relocs++;
    }
  if (pclose (f) != 0 || files != 2)
    {
      skip ("objdump could not read the stub objects");
      return;
    }
  ok (relocs == 0, "the restore stub refers to nothing outside itself "
      "(%d relocations)", relocs);
}

int
main (void)
{
  char tmp[] = "/tmp/test_criu.XXXXXX", dir[256], dir2[256], dir3[256];
  pid_t pid;
  const char *h = getenv ("SANDLOCK_HELPERS");
  struct cm_err *err = NULL;

  setvbuf (stdout, NULL, _IOLBF, 0);
  snprintf (helper, sizeof helper, "%s/cl_counter", h ? h : "build/helpers");
  if (access (helper, X_OK) != 0)
    {
      printf ("# %s missing: make helpers\n", helper);
      return 77;
    }
  if (mkdtemp (tmp) == NULL)
    return 1;
  snprintf (dir, sizeof dir, "%s/img", tmp);
  snprintf (dir2, sizeof dir2, "%s/img2", tmp);
  snprintf (dir3, sizeof dir3, "%s/img3", tmp);
  test_stub_is_self_contained ();
  test_xxh64 ();
  pid = test_counter (dir, tmp);
  test_threads (dir2);
  test_tree (dir3);
  if (pid > 0)
    test_bad_fd_number (dir, pid, tmp);
  if (pid > 0)
    test_bad_images (dir, pid, tmp);
  test_changed_binary (tmp);
  cm_rm_rf_at (AT_FDCWD, tmp, &err);
  cm_err_free (&err);
  return tap_done ();
}
