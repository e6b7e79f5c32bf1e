#!/usr/bin/env bats
# The pull's TTY progress display (unpacking shown per layer, the
# reference as a header, lines cut to the terminal's width) and its memory
# bound (queued layer bytes share one budget), against a local
# docker-registry on 127.0.0.1 with images generated here.

load ../lib/common
load ../lib/registry

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup_file() {
  export D=$BATS_FILE_TMPDIR
  command -v skopeo >/dev/null || skip "skopeo missing"
  [ -x /usr/bin/docker-registry ] || skip "docker-registry missing"
  # Two layers of 1500 small files each: their unpacking is the slow part.
  local l i
  for l in 1 2; do
    mkdir -p "$D/many$l/d$l"
    for i in $(seq 1500); do echo "$l $i" > "$D/many$l/d$l/f$i"; done
  done
  $MK image "$D/lay" "$D/many1" "$D/many2" --tag many >/dev/null
  # Three 40 MiB layers that do not compress.
  for l in 1 2 3; do
    mkdir -p "$D/big$l" && head -c 40M /dev/urandom > "$D/big$l/blob$l"
  done
  $MK image "$D/lay" "$D/big1" "$D/big2" "$D/big3" --tag big3 --level 1 >/dev/null
  rm -rf "$D"/big[123]
  reg_start P "$D/reg"
  echo "REG_P_PORT=$REG_P_PORT" > "$D/ports"
  for t in many big3; do push "$D/lay:$t" "$REG_P_PORT" "p/img:$t"; done
  rm -rf "$D/lay"
}

teardown_file() {
  reg_stop_all "$BATS_FILE_TMPDIR"
}

setup() {
  . "$BATS_FILE_TMPDIR/ports"
  D=$BATS_FILE_TMPDIR
  C=$BATS_TEST_TMPDIR/cache
  P="127.0.0.1:$REG_P_PORT/p/img"
}

# The lines a terminal shows of raw output $1: escapes and CRs dropped.
visible() {
  sed -e 's/\x1b\[[0-9]*[AK]//g' -e 's/\r//g' "$1"
}

@test "progress on a 40-column TTY: the reference first, unpacking per layer, no line wider" {
  ref="docker://$P:many"
  python3 "$SANDLOCK_TESTS_DIR/lib/ptyrun.py" 40 "$BATS_TEST_TMPDIR/raw" \
    "$SANDLOCK_OCI" pull --cache-dir "$C" "$ref" > "$BATS_TEST_TMPDIR/out"
  [[ "$(cat "$BATS_TEST_TMPDIR/out")" =~ ^$ref\ sha256:[0-9a-f]{64}$ ]]
  visible "$BATS_TEST_TMPDIR/raw" > "$BATS_TEST_TMPDIR/tty"
  # No line wider than the terminal (a wrapped line breaks the redraw).
  awk 'length($0) > 40 { print "too wide: " $0; bad = 1 } END { exit bad }' "$BATS_TEST_TMPDIR/tty"
  # Every redraw starts with the reference.
  [ "$(head -1 "$BATS_TEST_TMPDIR/tty")" = "$ref" ]
  [ "$(grep -c "^$ref\$" "$BATS_TEST_TMPDIR/tty")" = "$(grep -c '^total ' "$BATS_TEST_TMPDIR/tty")" ]
  # Each layer: unpacking (with entries counted part-way) before done.
  m=$(skopeo inspect --raw --tls-verify=false "$ref")
  for h in $(jq -r '.layers[].digest[7:19]' <<< "$m"); do
    unp=$(grep -n "^$h unpacking " "$BATS_TEST_TMPDIR/tty" | head -1 | cut -d: -f1)
    part=$(grep -n "^$h unpacking [1-9][0-9]* entries" "$BATS_TEST_TMPDIR/tty" | head -1 | cut -d: -f1)
    done_at=$(grep -n "^$h .* done\$" "$BATS_TEST_TMPDIR/tty" | head -1 | cut -d: -f1)
    [ -n "$unp" ]
    [ -n "$part" ]
    [ -n "$done_at" ]
    [ "$unp" -lt "$done_at" ]
    [ "$part" -lt "$done_at" ]
  done
  # The last redraw: every layer done.
  [ "$(tail -4 "$BATS_TEST_TMPDIR/tty" | grep -c ' done$')" = 2 ]
}

# Peak RSS in KiB of `sandlock-oci pull "$@"` (wait4's ru_maxrss).
pull_rss() {
  python3 "$SANDLOCK_TESTS_DIR/lib/maxrss.py" "$SANDLOCK_OCI" pull -q --cache-dir "$C" "$@" \
    3>"$BATS_TEST_TMPDIR/rss" >/dev/null
  cat "$BATS_TEST_TMPDIR/rss"
}

@test "a pull of 3 x 40 MiB incompressible layers stays under 64 MB of RSS, with 3 jobs or 16" {
  for jobs in 3 16; do
    rm -rf "$C"
    kb=$(pull_rss --jobs "$jobs" "docker://$P:big3")
    echo "--jobs $jobs: peak RSS $kb KiB"
    [ "$kb" -lt $((64 * 1000)) ]
    [ "$(find "$C/rootfs" -name 'blob[123]' -size 40M | wc -l)" = 3 ]
  done
}
