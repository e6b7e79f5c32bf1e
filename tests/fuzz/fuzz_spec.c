/* libFuzzer entry for oci/spec.c: config.json and process.json parsing.
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

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct rt_config *cfg = NULL;
  struct rt_process *proc = NULL;
  struct rt_err *err = NULL;

  if (oci_spec_parse ((const char *) data, size, &cfg, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || cfg != NULL)
        abort ();
      rt_err_free (&err);
    }
  else if (err != NULL || cfg == NULL)
    abort ();
  rt_config_free (cfg);

  if (oci_process_parse ((const char *) data, size, &proc, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || proc != NULL)
        abort ();
      rt_err_free (&err);
    }
  else if (err != NULL || proc == NULL)
    abort ();
  rt_process_free (proc);
  return 0;
}
