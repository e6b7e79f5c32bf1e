/* The image cache's platform matching (image/platform.c) and its lock
 * protocol (image/lock.c): what prune may remove while someone holds it. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"
#include "tests/unit/tap.h"

static void
platforms (void)
{
  struct cm_err *e = NULL;
  ok (img_platform_matches ("linux/amd64", "linux/amd64"), "same platform");
  ok (!img_platform_matches ("linux/arm64", "linux/amd64"), "other arch");
  ok (!img_platform_matches ("windows/amd64", "linux/amd64"), "other os");
  ok (img_platform_matches ("linux/arm64", "linux/arm64/v8"), "no variant asked: any");
  ok (img_platform_matches ("linux/arm64/v8", "linux/arm64"), "arm64 v8 implied");
  ok (!img_platform_matches ("linux/arm/v7", "linux/arm/v6"), "other variant");
  ok (!img_platform_matches ("linux/arm/v7", "linux/arm"), "arm v7 not implied");
  ok (img_platform_matches ("linux/amd64", "?/?"), "unknown platform matches");
  ok (img_platform_matches ("linux/amd64", NULL), "no platform matches");
  ok (img_platform_check ("linux/amd64", &e) == 0, "linux/amd64 valid");
  ok (img_platform_check ("amd64", &e) < 0 && strstr (e->msg, "--platform `amd64`"),
      "amd64 refused, naming --platform");
  cm_err_free (&e);
  ok (img_platform_check ("linux/", &e) < 0, "linux/ refused");
  cm_err_free (&e);
}

struct locker
{
  struct img_cache *c;
  int fd;
};

static void *
take_lock (void *arg)
{
  struct locker *l = arg;
  struct cm_err *e = NULL;
  l->fd = img_cache_lock (l->c, "abc", true, &e);
  cm_err_free (&e);
  return NULL;
}

static void
locks (void)
{
  char dir[] = "/tmp/test-image-cache.XXXXXX";
  struct img_opts o = { 0 };
  struct img_cache c = { .dirfd = -1 };
  struct cm_err *e = NULL;
  struct stat st;
  int a, b, all;
  if (mkdtemp (dir) == NULL)
    abort ();
  o.cache_dir = dir;
  ok (img_cache_open (&o, &c, &e) == 0, "cache opened");
  a = img_cache_lock (&c, "abc", true, &e);
  ok (a >= 0, "image lock taken");
  ok (img_cache_trylock (&c, "locks/abc.lock", false) < 0, "a held lock is busy");
  ok (img_cache_sweep_locks (&c) == 0, "a held lock file is not removed");
  close (a);
  ok (img_cache_sweep_locks (&c) == 1, "a free lock file is removed");
  ok (fstatat (c.dirfd, "locks/abc.lock", &st, 0) < 0, "and is gone");
  /* A locker waiting on a file that the holder (a sweep) unlinks gets the
   * lock of an orphan inode: it must start over on the new file, or two
   * processes would hold "the" lock at once. */
  {
    struct locker l = { &c, -1 };
    struct stat fs;
    pthread_t th;
    a = img_cache_trylock (&c, "locks/abc.lock", false);
    ok (a >= 0, "sweep holds the lock");
    if (pthread_create (&th, NULL, take_lock, &l) != 0)
      abort ();
    usleep (200 * 1000);        /* the locker is now waiting in flock */
    unlinkat (c.dirfd, "locks/abc.lock", 0);
    close (a);
    pthread_join (th, NULL);
    ok (l.fd >= 0 && fstat (l.fd, &fs) == 0 && fstatat (c.dirfd, "locks/abc.lock", &st, 0) == 0
        && fs.st_ino == st.st_ino, "the waiter holds the linked lock file, not the orphan");
    b = img_cache_trylock (&c, "locks/abc.lock", false);
    ok (b < 0, "and nobody else can take it");
    if (b >= 0)
      close (b);
    close (l.fd);
  }
  all = img_cache_lock_all (&c, true, &e);
  ok (all >= 0, "cache lock exclusive");
  ok (img_cache_sweep_locks (&c) >= 0 && fstatat (c.dirfd, "locks/cache.lock", &st, 0) == 0,
      "the cache lock is never swept");
  close (all);
  /* An archive copy is kept while its pull holds it, removed after. */
  {
    char *p = NULL, *name;
    int fd = img_cache_archive_dir (&c, &p, &e);
    ok (fd >= 0, "archive dir made and locked");
    name = strrchr (p, '/') + 1;
    img_cache_clean_tmp (&c);
    ok (stat (p, &st) == 0, "a held archive copy stays");
    close (fd);
    img_cache_clean_tmp (&c);
    ok (stat (p, &st) < 0, "an abandoned archive copy (%s) goes", name);
    free (p);
  }
  img_cache_close (&c);
  cm_rm_rf_at (AT_FDCWD, dir, &e);
  cm_err_free (&e);
}

int
main (void)
{
  platforms ();
  locks ();
  return tap_done ();
}
