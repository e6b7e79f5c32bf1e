/* libFuzzer entry for oci/spec.c: config.json and process.json parsing.
 * Not built by `make`.  Build and run from the repo root:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_spec.c oci/spec.c runtime/config.c common/err.c \
 *     common/util.c -lyajl -o build/fuzz_spec
 *   mkdir -p build/fuzz-corpus
 *   ./build/fuzz_spec -max_len=65536 -max_total_time=300 build/fuzz-corpus \
 *     tests/fixtures/samples tests/fixtures/spec
 *
 * (the first directory receives new inputs; the fixtures seed it)
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
