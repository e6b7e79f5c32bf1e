#!/usr/bin/env bats
# The pull's memory bound (queued layer bytes share one budget), against a local
# docker-registry on 127.0.0.1 with images generated here.

load ../lib/common
load ../lib/registry

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup_file() {
  export D=$BATS_FILE_TMPDIR
  command -v skopeo >/dev/null || skip "skopeo missing"
  [ -x /usr/bin/docker-registry ] || skip "docker-registry missing"
  local l
  # Three 40 MiB layers that do not compress.
  for l in 1 2 3; do
    mkdir -p "$D/big$l" && head -c 40M /dev/urandom > "$D/big$l/blob$l"
  done
  $MK image "$D/lay" "$D/big1" "$D/big2" "$D/big3" --tag big3 --level 1 >/dev/null
  rm -rf "$D"/big[123]
  reg_start P "$D/reg"
  echo "REG_P_PORT=$REG_P_PORT" > "$D/ports"
  for t in big3; do push "$D/lay:$t" "$REG_P_PORT" "p/img:$t"; done
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
