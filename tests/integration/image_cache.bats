#!/usr/bin/env bats
# The image cache under concurrency, per-platform records, and what killed
# pulls leave behind (docs/image.md, "Cache layout").  Local OCI layouts
# only: no registry, no network.

load ../lib/common

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup_file() {
  export D=$BATS_FILE_TMPDIR
  local l1=$D/l1 l2=$D/l2
  mkdir -p "$l1"/{bin,etc} "$l2/data"
  cp "$BUSYBOX" "$l1/bin/busybox"
  for a in sh cat echo; do ln -s busybox "$l1/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\n' > "$l1/etc/passwd"
  echo arm > "$l2/data/arch"
  $MK image "$D/lay" "$l1" --tag bb --cmd '["echo","hi"]' >/dev/null
  $MK image "$D/lay" "$l2" --tag small >/dev/null
  $MK image "$D/lay" "$l2" --tag armonly --arch arm64 >/dev/null
  $MK image "$D/lay" "$l1" --arch amd64 >/dev/null
  $MK image "$D/lay" "$l1" "$l2" --arch arm64 --variant v8 >/dev/null
  $MK index "$D/lay" --tag multiarch >/dev/null
}

setup() {
  C=$BATS_TEST_TMPDIR/cache
}

img() { "$SANDLOCK_OCI" "$1" --cache-dir "$C" "${@:2}"; }

# Every record names a manifest blob, a config blob and a rootfs that
# exist, and inspect / pull --offline of it work.
records_sound() {
  local f m cf ref plat
  for f in "$C"/refs/*.json; do
    [ -e "$f" ] || continue
    m=$(jq -r .manifest "$f"); cf=$(jq -r .config "$f")
    ref=$(jq -r .ref "$f"); plat=$(jq -r .platform "$f")
    [ -f "$C/blobs/sha256/${cf#sha256:}" ] || { echo "record $f: config $cf missing"; return 1; }
    [ -f "$C/blobs/sha256/${m#sha256:}" ] || { echo "record $f: manifest $m missing"; return 1; }
    [ -d "$C/rootfs/${m#sha256:}" ] || { echo "record $f: rootfs $m missing"; return 1; }
    img inspect "$ref" >/dev/null || { echo "inspect $ref failed"; return 1; }
    img pull -q --offline --platform "$plat" "$ref" >/dev/null || { echo "offline $ref failed"; return 1; }
  done
}

@test "pull, rmi, prune, images and inspect at once never leave a dangling record" {
  # 15 s and at least 15 rounds (a loaded machine runs fewer), at most 40 s.
  local ref="oci:$D/lay:bb" ref2="oci:$D/lay:small" end=$((SECONDS + 15)) cap=$((SECONDS + 40)) round=0
  img pull -q "$ref"
  while { [ $SECONDS -lt $end ] || [ $round -lt 15 ]; } && [ $SECONDS -lt $cap ]; do
    round=$((round + 1))
    pids=()
    img pull -q "$ref" >/dev/null 2>&1 & pids+=($!)
    img pull -q "$ref2" >/dev/null 2>&1 & pids+=($!)
    img rmi "$ref" >/dev/null 2>&1 & pids+=($!)
    img prune -q >/dev/null 2>&1 & pids+=($!)
    img pull -q "$ref" >/dev/null 2>&1 & pids+=($!)
    img images -q >/dev/null 2>&1 & pids+=($!)
    img inspect "$ref" >/dev/null 2>&1 & pids+=($!)
    img rmi "$ref2" >/dev/null 2>&1 & pids+=($!)
    for p in "${pids[@]}"; do wait "$p" || true; done
    run records_sound
    [ "$status" -eq 0 ] || { echo "round $round: $output"; false; }
  done
  echo "# $round rounds" >&3
  # Quiet again: one pull, one prune: everything is either referenced or gone.
  img pull -q "$ref"
  img prune -q
  [ -z "$(ls "$C/tmp")" ]
  [ "$(ls "$C/locks")" = cache.lock ]
  records_sound
}

@test "records are per platform: arm64 after amd64 keeps both, --offline honours --platform" {
  local ref="oci:$D/lay:multiarch"
  img pull -q --platform linux/amd64 "$ref"
  img pull -q --platform linux/arm64 "$ref"
  run img images --format json
  [ "$(echo "$output" | jq length)" = 2 ]
  [ "$(echo "$output" | jq -r '[.[].platform] | sort | join(",")')" = linux/amd64,linux/arm64/v8 ]
  run img images
  [[ "${lines[0]}" == *PLATFORM* ]]
  [[ "$output" == *linux/amd64* && "$output" == *linux/arm64/v8* ]]
  [ "$(ls "$C/rootfs" | wc -l)" = 2 ]
  run img pull --offline --platform linux/arm64 --format json "$ref"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .platform)" = linux/arm64/v8 ]
  [ "$(cat "$(echo "$output" | jq -r .rootfs)/data/arch")" = arm ]
  run img pull --offline --platform linux/amd64 --format json "$ref"
  [ "$(echo "$output" | jq -r .platform)" = linux/amd64 ]
  [ ! -e "$(echo "$output" | jq -r .rootfs)/data/arch" ]
  if [ "$(uname -m)" = x86_64 ]; then
    # No --platform: the host's, as an online pull would choose.
    run img pull --offline --format json "$ref"
    [ "$(echo "$output" | jq -r .platform)" = linux/amd64 ]
  fi
  # bundle / run --image take the same path: the arm64 tree for arm64.
  img bundle -q --offline --platform linux/arm64 "$ref" "$BATS_TEST_TMPDIR/b"
  [ "$(cat "$BATS_TEST_TMPDIR/b/rootfs/data/arch")" = arm ]
  run img pull --offline --platform linux/s390x "$ref"
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux/s390x"*"linux/amd64"* ]]
  # rmi with --platform removes that record only; prune keeps the other.
  img rmi --platform linux/arm64 "$ref"
  [ "$(img images --format json | jq -r '.[].platform')" = linux/amd64 ]
  img prune -q
  [ "$(ls "$C/rootfs" | wc -l)" = 1 ]
}

@test "--offline without --platform never takes another platform chosen from an index" {
  [ "$(uname -m)" = x86_64 ] || skip "the host platform is assumed to be linux/amd64"
  local ref="oci:$D/lay:multiarch"
  img pull -q --platform linux/arm64 "$ref"
  run img pull --offline "$ref"
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux/amd64"*"linux/arm64/v8"*"--platform"* ]]
  run img bundle -q --offline "$ref" "$BATS_TEST_TMPDIR/b"
  [ "$status" -ne 0 ]
  [ ! -e "$BATS_TEST_TMPDIR/b/rootfs/data/arch" ]
  # A digest names one image, whatever its platform.
  d=$(img images --format json | jq -r '.[0].digest')
  img inspect "${d:7:12}" | jq -e '.architecture == "arm64"'
  # A single-platform image is its own choice, online and offline.
  img pull -q "oci:$D/lay:armonly"
  run img pull --offline --format json "oci:$D/lay:armonly"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .platform)" = linux/arm64 ]
}

@test "a --platform that a single-platform image does not match is refused" {
  run img pull --platform linux/arm64 "oci:$D/lay:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--platform linux/arm64"*"linux/amd64"* ]]
  [ -z "$(ls "$C/refs")" ]
  [ -z "$(ls "$C/rootfs")" ]
  img pull -q --platform linux/arm64 "oci:$D/lay:armonly"
  img pull -q "oci:$D/lay:armonly"       # no --platform: the image's own
  [ "$(img images --format json | jq length)" = 1 ]
}

@test "records written by earlier versions (keyed by reference alone) are read and migrated" {
  local ref="oci:$D/lay:multiarch" f key canon
  img pull -q --platform linux/arm64 "$ref"
  f=$(ls "$C"/refs/*.json)
  canon=$(jq -r .ref "$f")
  key=$(printf %s "$canon" | sha256sum | cut -c1-32)
  mv "$f" "$BATS_TEST_TMPDIR/rec"
  jq -c '{ref, manifest, config, created, platform, size}' "$BATS_TEST_TMPDIR/rec" > "$C/refs/$key.json"
  [ "$(img images --format json | jq -r '.[].platform')" = linux/arm64/v8 ]
  img pull -q --offline --platform linux/arm64 "$ref"
  img inspect "$ref" | jq -e '.architecture == "arm64"'
  # The legacy record is the arm64 one: an amd64 pull adds a record and
  # keeps it; an arm64 pull replaces it.
  img pull -q --platform linux/amd64 "$ref"
  [ "$(img images --format json | jq length)" = 2 ]
  [ -e "$C/refs/$key.json" ]
  img pull -q --platform linux/arm64 "$ref"
  [ "$(img images --format json | jq length)" = 2 ]
  [ ! -e "$C/refs/$key.json" ]
}

@test "a killed oci-archive pull: its copy goes at the next pull, prune leaves no lock files" {
  tar -C "$D/lay" -cf "$BATS_TEST_TMPDIR/arch.tar" .
  mkfifo "$BATS_TEST_TMPDIR/fifo"
  # The archive is a FIFO nobody writes: the pull waits with its tmp/
  # copy made; then it is killed.
  "$SANDLOCK_OCI" pull --cache-dir "$C" -q "oci-archive:$BATS_TEST_TMPDIR/fifo:bb" & pid=$!
  for _ in $(seq 100); do [ -n "$(ls "$C/tmp" 2>/dev/null)" ] && break; sleep 0.05; done
  [ -n "$(ls "$C/tmp")" ]
  kill -9 $pid; wait $pid || true
  mkdir "$C/tmp/$(printf %064d 5).abcdef"   # a killed unpack of another image
  img pull -q "oci:$D/lay:small"
  [ -z "$(ls "$C/tmp")" ]
  [ ! -e "$C/locks/$(printf %064d 5).lock" ]
  # A pull that is alive keeps its copy, whatever prune and other pulls do.
  "$SANDLOCK_OCI" pull --cache-dir "$C" -q "oci-archive:$BATS_TEST_TMPDIR/fifo:bb" & pid=$!
  for _ in $(seq 100); do [ -n "$(ls "$C/tmp" 2>/dev/null)" ] && break; sleep 0.05; done
  live=$(ls "$C/tmp")
  [ -n "$live" ]
  img pull -q "oci:$D/lay:small"
  img prune -q
  [ "$(ls "$C/tmp")" = "$live" ]
  cat "$BATS_TEST_TMPDIR/arch.tar" > "$BATS_TEST_TMPDIR/fifo"
  wait $pid
  [ -z "$(ls "$C/tmp")" ]
  [ "$(img images --format json | jq length)" = 2 ]
  img rmi "oci-archive:$BATS_TEST_TMPDIR/fifo:bb"
  img rmi "oci:$D/lay:small"
  img prune -q
  [ "$(ls "$C/locks")" = cache.lock ]
  [ -z "$(ls "$C/rootfs")" ]
}

@test "prune removes a killed unpack's tree and the lock files it and older versions left" {
  img pull -q "oci:$D/lay:bb"
  hex=$(ls "$C/rootfs")
  mkdir "$C/tmp/$hex.dead01" "$C/tmp/archive.999999.abcdef"
  : > "$C/locks/archive.999999.abcdef.lock"
  : > "$C/locks/$(printf %064d 7).lock"
  img prune -q
  [ -z "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/locks" | grep -v '^cache.lock$')" ]
  [ -d "$C/rootfs/$hex" ]
  img inspect "oci:$D/lay:bb" >/dev/null
}
