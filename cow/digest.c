/* sha256 of a file's content, for the change list and rename pairing
 * (libcrypto through common/sha256.h, loaded by the commands that hash). */
#include "common/sha256.h"
#include "internal.h"

int
cow_sha256_fd (int fd, char hex[65])
{
  struct cm_err *e = NULL;
  int r = cm_sha256_fd_hex (fd, hex, &e);
  cm_err_free (&e);
  return r;
}
