/* `run --image REF ID [-- CMD...]`: pulls REF when needed and builds a
 * bundle for it under the state root, then run continues as usual with
 * that bundle. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "common/util.h"
#include "image_cli.h"
#include "image_run.h"

int
image_run_prepare (struct oci_globals *g, int *argc, char ***argv, char **bundle,
                   struct rt_err **err)
{
  struct image_cli c = { .o.tls_verify = -1, .quiet = true };
  const char *ref = NULL;
  char **av = *argv, **out;
  char *const *cmd = NULL;
  int ac = *argc, n = 0, ret;
  struct img_image *im = NULL;

  *bundle = NULL;
  out = xcalloc ((size_t) ac + 1, sizeof *out);
  for (int i = 0; i < ac; i++)
    {
      if (strcmp (av[i], "--image") == 0 && i + 1 < ac)
        ref = av[++i];
      else if (rt_startswith (av[i], "--image="))
        ref = av[i] + 8;
      else if (strcmp (av[i], "--cache-dir") == 0 && i + 1 < ac)
        c.o.cache_dir = av[++i];
      else if (rt_startswith (av[i], "--cache-dir="))
        c.o.cache_dir = av[i] + 12;
      else if (ref && strcmp (av[i], "--") == 0)
        {
          cmd = av + i + 1;
          break;
        }
      else
        out[n++] = av[i];
    }
  if (ref == NULL)
    {
      free (out);
      return 0;
    }
  if (n < 2 || out[n - 1][0] == '-')
    {
      free (out);
      return rt_err_set (err, 0, "run --image: expected REF ID [-- CMD...]");
    }
  if (img_pull (&c.o, ref, &im, err) < 0)
    {
      free (out);
      return -1;
    }
  *bundle = xasprintf ("%s/image-bundles/%s", g->root, out[n - 1]);
  {
    struct rt_err *e = NULL;
    rt_rm_rf_at (AT_FDCWD, *bundle, &e);   /* a bundle a crashed run left */
    rt_err_free (&e);
  }
  ret = image_cli_bundle (&c, im, *bundle, cmd && *cmd ? cmd : NULL, err);
  img_image_free (im);
  if (ret < 0)
    {
      free (out);
      free (*bundle);
      *bundle = NULL;
      return -1;
    }
  *argc = n;
  *argv = out;                  /* leaked until exit, like argv itself */
  return 1;
}
