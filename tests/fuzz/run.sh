#!/bin/bash
# Runs the fuzz targets (tests/fuzz/fuzz_*.c) and prints TAP, two lines per
# target: its seeds through the gcc ASan driver (build/fuzz-seeds/NAME), then
# libFuzzer (build/fuzz/NAME) from a temporary corpus seeded with copies of
# the fixtures (the repository is never written).  Build first with
# `make fuzzers`.
#   FUZZ_SECONDS=60 tests/fuzz/run.sh           # fuzz each for 60 s (make fuzz)
#   FUZZ_RUNS=2000 tests/fuzz/run.sh fuzz_spec  # 2000 inputs, fixed seed (make check)
# A crash is copied to build/fuzz-artifacts/ with the command that replays it;
# once fixed it belongs in tests/fixtures/fuzz/NAME/ as a regression seed.
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
names=("$@")
if [ ${#names[@]} = 0 ]; then
  for s in tests/fuzz/fuzz_*.c; do names+=("$(basename "$s" .c)"); done
fi
FUZZ_CC=${FUZZ_CC:-clang}
n=0
echo "1..$((2 * ${#names[@]}))"

seed_dirs() { # name -> the fixture directories that seed it
  local d dirs=("tests/fixtures/fuzz/$1")
  # Targets whose input is a plain file the project already has fixtures of.
  case $1 in
    fuzz_spec) dirs+=(tests/fixtures/spec tests/fixtures/samples) ;;
    fuzz_state) dirs+=(tests/fixtures/state) ;;
  esac
  for d in "${dirs[@]}"; do [ -d "$d" ] && echo "$d"; done
}

why_no_libfuzzer() {
  if ! command -v "$FUZZ_CC" >/dev/null; then
    echo "$FUZZ_CC not installed (Debian: clang)"
  elif ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' \
      | "$FUZZ_CC" -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
    echo "$FUZZ_CC cannot link libFuzzer (Debian: libclang-rt-14-dev)"
  else
    echo "not built (make fuzzers)"
  fi
}

report() { # ok|not-ok description logfile
  n=$((n + 1))
  if [ "$1" = ok ]; then echo "ok $n - $2"; return; fi
  echo "not ok $n - $2"
  grep -E 'ERROR|SUMMARY|==[0-9]+==|#[0-9] |abort|Test unit written|artifact' "$3" \
    | head -40 | sed 's/^/#   /'
}

run_seeds() { # name
  local drv=build/fuzz-seeds/$1 log=$tmp/$1.seeds.log files
  if [ ! -x "$drv" ]; then
    n=$((n + 1)); echo "ok $n # skip $1 seeds: $drv not built (make fuzzers)"; return
  fi
  mapfile -t files < <(for d in $(seed_dirs "$1"); do find "$d" -type f; done | sort)
  if [ ${#files[@]} = 0 ]; then
    n=$((n + 1)); echo "ok $n # skip $1 seeds: none in tests/fixtures/fuzz/$1"; return
  fi
  if (cd "$tmp" && TMPDIR=$tmp "$root/$drv" "${files[@]/#/$root/}") >"$log" 2>&1; then
    report ok "$1: ${#files[@]} seeds through the ASan driver"
  else
    report not-ok "$1: seeds through the ASan driver ($drv FILE replays one)" "$log"
  fi
}

run_libfuzzer() { # name
  local bin=build/fuzz/$1 log=$tmp/$1.log corpus=$tmp/$1.corpus art=$tmp/$1.art
  local limit what
  if [ ! -x "$bin" ]; then
    n=$((n + 1)); echo "ok $n # skip $1 libFuzzer: $(why_no_libfuzzer)"; return
  fi
  mkdir -p "$corpus" "$art"
  for d in $(seed_dirs "$1"); do find "$d" -type f -exec cp -t "$corpus" {} +; done
  if [ -n "${FUZZ_SECONDS:-}" ]; then
    limit=(-max_total_time="$FUZZ_SECONDS"); what="fuzzed for ${FUZZ_SECONDS}s"
  else
    limit=(-runs="${FUZZ_RUNS:-2000}" -seed="${FUZZ_SEED:-1}")
    what="${FUZZ_RUNS:-2000} libFuzzer runs"
  fi
  if (cd "$tmp" && TMPDIR=$tmp "$root/$bin" "${limit[@]}" -max_len=65536 -timeout=20 \
        -artifact_prefix="$art/" "$corpus") >"$log" 2>&1; then
    report ok "$1: $what ($(grep -oE 'corp: [0-9]+' "$log" | tail -1 | cut -d' ' -f2) inputs in corpus)"
    return
  fi
  mkdir -p build/fuzz-artifacts
  for a in "$art"/*; do
    [ -f "$a" ] || continue
    cp "$a" "build/fuzz-artifacts/$1-$(basename "$a")"
    echo "# replay: $bin build/fuzz-artifacts/$1-$(basename "$a")" >>"$log"
  done
  report not-ok "$1: $what" "$log"
}

tmp=$(mktemp -d /tmp/sandlock-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for name in "${names[@]}"; do
  run_seeds "$name"
  run_libfuzzer "$name"
done | tee "$tmp/tap"
! grep -q '^not ok' "$tmp/tap"
