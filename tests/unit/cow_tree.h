/* Helpers for the cow/ unit tests: build trees, settle the coarse clock,
 * list a tree as text for comparison. */
#ifndef SANDLOCK_TESTS_COW_TREE_H
#define SANDLOCK_TESTS_COW_TREE_H
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "cow/internal.h"

static inline void
put (const char *dir, const char *rel, const char *content, mode_t mode)
{
  char p[4096];
  snprintf (p, sizeof p, "%s/%s", dir, rel);
  int fd = open (p, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0)
    {
      perror (p);
      exit (2);
    }
  if (write (fd, content, strlen (content)) < 0)
    exit (2);
  fchmod (fd, mode);
  /* fixed times, so trees built at different moments compare equal */
  struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };
  futimens (fd, ts);
  close (fd);
}

static inline void
mkd (const char *dir, const char *rel)
{
  char p[4096];
  snprintf (p, sizeof p, "%s/%s", dir, rel);
  if (mkdir (p, 0755) < 0)
    {
      perror (p);
      exit (2);
    }
}

static inline char *
slurp (const char *dir, const char *rel)
{
  char p[4096], *s = NULL;
  snprintf (p, sizeof p, "%s/%s", dir, rel);
  if (cm_read_file_at (AT_FDCWD, p, 1 << 20, &s, NULL, NULL) < 0)
    return NULL;
  return s;
}

static inline bool
exists (const char *dir, const char *rel)
{
  char p[4096];
  struct stat st;
  snprintf (p, sizeof p, "%s/%s", dir, rel);
  return lstat (p, &st) == 0;
}

/* Waits (a few ms at most) until the coarse clock has moved past every
 * timestamp already given, so that the next branch's creation time is
 * newer than the tree just built. */
static inline void
settle (void)
{
  struct timespec a, b;
  clock_gettime (CLOCK_REALTIME_COARSE, &a);
  for (int ticks = 0; ticks < 2;)
    {
      clock_gettime (CLOCK_REALTIME_COARSE, &b);
      if (b.tv_sec != a.tv_sec || b.tv_nsec != a.tv_nsec)
        ticks++, a = b;
    }
}

static inline void
list_into (int dfd, const char *rel, char **out, size_t *len, FILE *f)
{
  DIR *d = fdopendir (dup (dfd));
  struct dirent *de;
  char **names = NULL;
  size_t n = 0;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
      {
        names = realloc (names, (n + 1) * sizeof *names);
        names[n++] = strdup (de->d_name);
      }
  closedir (d);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (strcmp (names[i], names[j]) > 0)
        {
          char *t = names[i];
          names[i] = names[j];
          names[j] = t;
        }
  for (size_t i = 0; i < n; i++)
    {
      struct stat st;
      char p[4096], extra[4200] = "";
      snprintf (p, sizeof p, "%s%s%s", rel, *rel ? "/" : "", names[i]);
      fstatat (dfd, names[i], &st, AT_SYMLINK_NOFOLLOW);
      if (S_ISREG (st.st_mode))
        {
          int fd = openat (dfd, names[i], O_RDONLY);
          char hex[65];
          cow_sha256_fd (fd, hex);
          close (fd);
          snprintf (extra, sizeof extra, "sha=%.12s nlink=%lu mtime=%ld", hex,
                    (unsigned long) st.st_nlink, (long) st.st_mtime);
        }
      else if (S_ISLNK (st.st_mode))
        {
          char t[4097];
          ssize_t k = readlinkat (dfd, names[i], t, sizeof t - 1);
          t[k < 0 ? 0 : k] = '\0';
          snprintf (extra, sizeof extra, "-> %s", t);
        }
      fprintf (f, "%s %o %u:%u %s\n", p, st.st_mode, st.st_uid, st.st_gid,
               extra);
      if (S_ISDIR (st.st_mode))
        {
          int sub
              = openat (dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          list_into (sub, p, out, len, f);
          close (sub);
        }
      free (names[i]);
    }
  free (names);
}

/* The tree under |dir| as sorted lines of path, mode, owner, content. */
static inline char *
tree_text (const char *dir)
{
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&out, &len);
  int fd = open (dir, O_RDONLY | O_DIRECTORY);
  list_into (fd, "", &out, &len, f);
  close (fd);
  fclose (f);
  return out;
}

static inline const struct cow_change *
find_change (const struct cow_changes *c, const char *path)
{
  for (size_t i = 0; i < c->n; i++)
    if (strcmp (c->v[i].path, path) == 0)
      return &c->v[i];
  return NULL;
}
#endif
