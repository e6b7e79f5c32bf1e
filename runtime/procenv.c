/* What a process finds when it starts, beyond process.env as written:
 * HOME when the config has none, and a process.cwd that the image lacks.
 * Both follow runc, which runtime-tools and engines expect. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"

/* /etc/passwd larger than this is not read (the fallback "/" applies). */
#define PASSWD_MAX_BYTES (4u << 20)

static bool
env_has (const struct rt_process *pr, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; i < pr->env_len; i++)
    if (strncmp (pr->env[i], name, n) == 0 && pr->env[i][n] == '=')
      return true;
  return false;
}

/* The home field of |uid|'s line in |buf| (a passwd file), or NULL. */
static char *
passwd_home (char *buf, uint32_t uid)
{
  for (char *line = strtok (buf, "\n"); line; line = strtok (NULL, "\n"))
    {
      char *f[7];
      size_t n = 0;
      for (char *s = line; n < 7; n++)
        {
          f[n] = s;
          s = strchr (s, ':');
          if (s == NULL)
            {
              n++;
              break;
            }
          *s++ = '\0';
        }
      if (n < 6 || *f[2] == '\0')
        continue;
      char *end;
      errno = 0;
      unsigned long v = strtoul (f[2], &end, 10);
      if (errno == 0 && *end == '\0' && v == uid && f[5][0] == '/')
        return xstrdup (f[5]);
    }
  return NULL;
}

char **
rt_proc_envp (const struct rt_process *pr)
{
  if (env_has (pr, "HOME"))
    return rt_proc_envp_fd (pr, -1);
  /* Inside the container's root: a FIFO or a huge file planted at
   * /etc/passwd must not stall or bloat the setup. */
  _cleanup_fd_ int fd = open ("/etc/passwd", O_RDONLY | O_CLOEXEC
                                                 | O_NONBLOCK);
  return rt_proc_envp_fd (pr, fd);
}

char **
rt_proc_envp_fd (const struct rt_process *pr, int fd)
{
  char **envp = xcalloc (pr->env_len + 2, sizeof *envp);
  _cleanup_free_ char *buf = NULL, *home = NULL;
  struct stat st;
  size_t len = 0;

  memcpy (envp, pr->env, pr->env_len * sizeof *envp);
  if (env_has (pr, "HOME"))
    return envp;
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode)
      && (size_t) st.st_size <= PASSWD_MAX_BYTES)
    {
      ssize_t r;
      buf = xmalloc ((size_t) st.st_size + 1);
      while (len < (size_t) st.st_size
             && ((r = read (fd, buf + len, (size_t) st.st_size - len)) > 0
                 || (r < 0 && errno == EINTR)))
        len += r > 0 ? (size_t) r : 0;
      buf[len] = '\0';
    }
  if (buf)
    home = passwd_home (buf, pr->user.uid);
  envp[pr->env_len] = xasprintf ("HOME=%s", home ? home : "/");
  return envp;
}

int
rt_proc_make_cwd (const char *cwd, struct cm_err **err)
{
  _cleanup_free_ char *path = xstrdup (cwd);
  for (char *s = path + 1;; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      char c = *s;
      *s = '\0';
      if (s > path + 1 && mkdir (path, 0755) < 0 && errno != EEXIST)
        return cm_err_set (err, errno, "process.cwd: create `%s`", path);
      if (c == '\0')
        return 0;
      *s = '/';
    }
}
