/* libFuzzer entry for oci/state_json.c: the state.json loader (every
 * command but create reads it; a corrupt or hostile one must fail cleanly).
 * Not built by `make`.  Build and run from the repo root:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_state.c oci/state_json.c oci/spec.c runtime/config.c \
 *     common/err.c common/util.c -lyajl -o build/fuzz_state
 *   mkdir -p build/fuzz-state-corpus
 *   ./build/fuzz_state -max_len=65536 -max_total_time=300 \
 *     build/fuzz-state-corpus tests/fixtures/state
 *
 * Invariants checked: a parse either fails with exactly one error message
 * or succeeds without one and with the fields every command relies on
 * (status, bundle); what it parsed generates state.json again, and that
 * parses back to the same status, pid and annotation count; everything is
 * freed (LSan). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/state.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* oci_state_free frees the id too: this one is borrowed (a literal). */
static void
release (struct oci_state *st)
{
  st->id = NULL;
  oci_state_free (st);
}

static void
round_trip (const struct oci_state *st)
{
  struct oci_state back = { .id = st->id, .dirfd = -1 };
  struct cm_err *err = NULL;
  char *j = oci_state_gen (st, false, true);
  if (oci_state_parse (&back, j, strlen (j), &err) < 0
      || back.status != st->status || back.pid != st->pid
      || back.annotations_len != st->annotations_len)
    abort ();
  free (j);
  release (&back);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct oci_state st = { .id = (char *) "fuzz", .dirfd = -1 };
  struct cm_err *err = NULL;

  if (oci_state_parse (&st, (const char *) data, size, &err) < 0)
    {
      if (err == NULL || err->msg == NULL)
        abort ();
      cm_err_free (&err);
    }
  else
    {
      if (err != NULL || st.status == OCI_STATUS_NONE || st.bundle == NULL)
        abort ();
      round_trip (&st);
    }
  release (&st);
  return 0;
}
