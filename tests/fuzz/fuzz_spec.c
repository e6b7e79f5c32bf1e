/* libFuzzer entry for oci/spec.c: config.json and process.json parsing,
 * then, for a config that parses, rt_confine_prepare: the validation of
 * linux.seccomp and the run.oci.sandlock.* annotations, the Landlock
 * policy and the seccomp program (the listener path is dropped first, so
 * that no input makes the fuzzer connect to a socket of the host).
 * Built by `make fuzzers`, run by `make fuzz` (docs/architecture.md,
 * Tests); seeded from tests/fixtures/spec, tests/fixtures/samples and
 * tests/fixtures/fuzz/fuzz_spec.
 *
 * Invariants checked: a parse either fails with exactly one error message
 * or succeeds without one, and everything is freed (LSan). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "oci/spec.h"
#include "runtime/confine.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
prepare (struct rt_config *cfg)
{
  struct rt_confine *cf = NULL;
  struct cm_err *err = NULL;
  if (cfg->seccomp)
    {
      free (cfg->seccomp->listener_path);
      cfg->seccomp->listener_path = NULL;
    }
  if (rt_confine_prepare (cfg, &cf, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || cf != NULL)
        abort ();
      cm_err_free (&err);
    }
  else if (err != NULL || cf == NULL)
    abort ();
  rt_confine_free (cf);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct rt_config *cfg = NULL;
  struct rt_process *proc = NULL;
  struct cm_err *err = NULL;

  if (oci_spec_parse ((const char *) data, size, &cfg, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || cfg != NULL)
        abort ();
      cm_err_free (&err);
    }
  else if (err != NULL || cfg == NULL)
    abort ();
  else
    prepare (cfg);
  rt_config_free (cfg);

  if (oci_process_parse ((const char *) data, size, &proc, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || proc != NULL)
        abort ();
      cm_err_free (&err);
    }
  else if (err != NULL || proc == NULL)
    abort ();
  rt_process_free (proc);
  return 0;
}
