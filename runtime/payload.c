/* What the init becomes once confined and started: RT_PAYLOAD_EXEC
 * execve()s process.args; RT_PAYLOAD_FN calls a function of the caller
 * (a test) in the same state an execve would start in — every
 * namespace, mount, Landlock rule, capability and the seccomp filter in
 * place — and exits with its return value.  RT_PAYLOAD_FN_SEAL calls one
 * before the capability drop and the filter, handing it the calls that
 * apply them (runtime/seal.c): for a restored process tree.
 *
 * `start` learns of success from the start-status fifo: its write end is
 * O_CLOEXEC, so execve closes it; the function payload closes it itself
 * before it is called.  A failure writes its message there instead. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "internal.h"
#include "seal.h"
#include "vroot-run.h"

int
rt_payload_prepare (struct rt_child *ch, struct cm_err **err)
{
  const struct rt_process *pr = ch->p->c->process;
  if (ch->p->o->payload.kind == RT_PAYLOAD_FN_SEAL)
    {
      if (rt_vroot_mode (ch->p))
        return cm_err_set (err, 0, "the namespace-less mode cannot run a "
                           "sealed payload (a restore): its supervisor's "
                           "filter must be in place first");
      return rt_seal_build (ch->p, &ch->seal, err);
    }
  if (ch->p->o->payload.kind != RT_PAYLOAD_EXEC)
    return 0;
  if (rt_vroot_mode (ch->p))
    return rt_vroot_payload_prepare (ch, err);
  if (rt_proc_resolve_exec (pr, &ch->exec_path, err) < 0)
    return -1;
  ch->envp = rt_proc_envp (pr);
  ch->argv = xcalloc (pr->args_len + 1, sizeof *ch->argv);
  memcpy (ch->argv, pr->args, pr->args_len * sizeof *ch->argv);
  return 0;
}

void
rt_payload_fail (struct rt_child *ch, const char *msg)
{
  size_t n = strlen (msg);
  int fd = ch->pp->status_fd;
  if (fd < 0 || write (fd, msg, n) != (ssize_t) n)
    fprintf (stderr, "sandlock-oci: %s\n", msg);
  _exit (127);
}

void
rt_payload_run (struct rt_child *ch)
{
  const struct rt_payload *pl = &ch->p->o->payload;
  char msg[512];

  if (pl->kind == RT_PAYLOAD_FN)
    {
      if (ch->pp->status_fd >= 0)
        close (ch->pp->status_fd);
      ch->pp->status_fd = -1;
      _exit (pl->fn (pl->arg) & 0xff);
    }
  if (pl->kind == RT_PAYLOAD_FN_SEAL)
    {
      if (ch->pp->status_fd >= 0)
        close (ch->pp->status_fd);
      ch->pp->status_fd = -1;
      _exit (pl->fn_seal (pl->arg, ch->seal) & 0xff);
    }
  execve (ch->exec_path, ch->argv, ch->envp);
  snprintf (msg, sizeof msg, "exec: \"%s\": %s", ch->p->c->process->args[0],
            strerror (errno));
  rt_payload_fail (ch, msg);
}
