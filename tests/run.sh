#!/bin/bash
# Runs every unit test and every bats file, all TAP, and ends with the line
# "N passed, M failed, K skipped".  Tests needing root skip when not root.
#   TESTS="integration/lifecycle.bats unit/test_spec fuzz/fuzz_spec" tests/run.sh   # subset
#   SUITES="unit root" tests/run.sh   # by set: unit (C unit tests and fuzz
#   seeds, no root needed), root (the runtime's bats files), engines (the
#   bats files that drive podman, containerd and docker); default all three
cd "$(dirname "$0")/.." || exit 2
export SANDLOCK_OCI="${SANDLOCK_OCI:-$PWD/sandlock-oci}"
export SANDLOCK_TESTS_DIR="$PWD/tests"
export SANDLOCK_HELPERS="$PWD/build/helpers"
# A hung test fails on its own instead of stalling the suite.
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}
out=$(mktemp -d /tmp/sandlock-tests.XXXXXX)
trap 'rm -rf "$out"' EXIT
pass=0 fail=0 skipn=0
failed_names=()

tally() { # name tapfile
  local p f s
  p=$(grep -cE '^ok ' "$2" || true)
  s=$(grep -cE '^ok .*# ?[Ss][Kk][Ii][Pp]' "$2" || true)
  f=$(grep -cE '^not ok ' "$2" || true)
  pass=$((pass + p - s)); skipn=$((skipn + s)); fail=$((fail + f))
  [ "$f" -gt 0 ] && failed_names+=("$1")
}

sel="${TESTS:-}"
suites=" ${SUITES:-unit root engines} "
engines=" podman containerd docker "
# Whether set $1 was asked for.
want() { [[ "$suites" == *" $1 "* ]]; }
for s in $suites; do
  case $s in unit|root|engines) ;; *) echo "tests/run.sh: SUITES: unknown set \"$s\" (unit, root, engines)" >&2; exit 2 ;; esac
done
units=() bats_files=()
for t in build/unit/test_*; do
  [ -x "$t" ] || continue
  want unit || continue
  [ -n "$sel" ] && [[ " $sel " != *" unit/$(basename "$t") "* ]] && continue
  units+=("$t")
done
for b in tests/integration/*.bats; do
  [ -f "$b" ] || continue
  if [[ "$engines" == *" $(basename "$b" .bats) "* ]]; then want engines || continue
  else want root || continue; fi
  [ -n "$sel" ] && [[ " $sel " != *" integration/$(basename "$b") "* ]] && continue
  bats_files+=("$b")
done

# Fuzz targets: seeds through the ASan driver, then a short fixed number
# of libFuzzer runs each (tests/fuzz/run.sh; `make fuzz` fuzzes longer).
fuzz=()
for f in tests/fuzz/fuzz_*.c; do
  [ -f "$f" ] || continue
  want unit || continue
  [ -n "$sel" ] && [[ " $sel " != *" fuzz/$(basename "$f" .c) "* ]] && continue
  fuzz+=("$(basename "$f" .c)")
done

for t in "${units[@]}"; do
  n=$(basename "$t")
  echo "# unit: $n"
  "$t" > "$out/$n.tap" 2>"$out/$n.err"; rc=$?
  cat "$out/$n.tap"
  if [ $rc = 77 ]; then echo "ok 1 # skip $n"; skipn=$((skipn+1)); continue; fi
  if [ $rc != 0 ] && ! grep -q '^not ok' "$out/$n.tap"; then
    echo "not ok - $n exited $rc"; sed 's/^/#   /' "$out/$n.err"; echo "not ok - $n" >> "$out/$n.tap"
  fi
  tally "$n" "$out/$n.tap"
done

for b in "${bats_files[@]}"; do
  n=$(basename "$b" .bats)
  echo "# bats: $n"
  timeout 900 bats --tap "$b" > "$out/$n.tap" 2>&1; rc=$?
  cat "$out/$n.tap"
  if [ $rc != 0 ] && ! grep -q '^not ok' "$out/$n.tap"; then
    echo "not ok - $n (bats exited $rc)" | tee -a "$out/$n.tap"
  fi
  tally "$n" "$out/$n.tap"
done

if [ ${#fuzz[@]} -gt 0 ]; then
  echo "# fuzz: ${fuzz[*]}"
  env -u FUZZ_SECONDS FUZZ_RUNS="${FUZZ_RUNS:-2000}" tests/fuzz/run.sh "${fuzz[@]}" \
    > "$out/fuzz.tap" 2>&1
  cat "$out/fuzz.tap"
  tally fuzz "$out/fuzz.tap"
fi

[ ${#failed_names[@]} -gt 0 ] && echo "# failing: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skipn skipped"
[ "$fail" = 0 ]
