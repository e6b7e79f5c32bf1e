#!/usr/bin/env bats
# What an image's content may make the puller do (docs/image.md): device
# nodes, media types, the unpack budget, zstd:chunked tars without their
# end-of-archive padding.  OCI layouts built here (mkimage.py, mkcontent.py)
# and, for Content-Type, a registry on 127.0.0.1 serving one (no internet).

load ../lib/common

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"
MC="python3 $SANDLOCK_TESTS_DIR/lib/mkcontent.py"
OCI_MAN=application/vnd.oci.image.manifest.v1+json
DOCKER_MAN=application/vnd.docker.distribution.manifest.v2+json

setup() {
  T=$BATS_TEST_TMPDIR
  C=$T/cache
  mkdir -p "$T/l1/bin"
  cp "$BUSYBOX" "$T/l1/bin/busybox"
  ln -s busybox "$T/l1/bin/sh"
}

teardown() {
  if [ -f "$T/serve.pid" ]; then kill "$(cat "$T/serve.pid")" 2>/dev/null || true; fi
}

img() { "$SANDLOCK_OCI" "$1" --cache-dir "$C" "${@:2}"; }
rootfs_of() { img pull --offline "$1" --format json | jq -r .rootfs; }

# serve LAYOUT [--ctype MT]: a registry for LAYOUT; sets PORT.
serve() {
  $MC serve "$@" "$T/port" & echo $! > "$T/serve.pid"
  for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
  PORT=$(cat "$T/port")
}

# ---- device nodes (issue 11 item 3) ----

@test "device nodes of layers are skipped by default, counted; FIFOs keep their mode" {
  require_root
  $MC nodes "$T/nodes.tar"
  $MK image "$T/lay" "$T/l1" "$T/nodes.tar" --tag n >/dev/null
  run img pull --format json "oci:$T/lay:n"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(echo "$output" | jq .devices_skipped)" = 2 ]
  r=$(rootfs_of "oci:$T/lay:n")
  [ ! -e "$r/dev/sda" ] && [ ! -e "$r/dev/mem" ]
  [ -p "$r/fifo" ]
  [ "$(stat -c %a "$r/fifo")" = 666 ]
  run img pull "oci:$T/lay:n"
  [[ "$output" == *"2 device nodes not created (--allow-devices"* ]]
}

@test "--allow-devices: nodes at most 0600 and root's, in the cache and in bundles" {
  require_root
  $MC nodes "$T/nodes.tar"
  $MK image "$T/lay" "$T/l1" "$T/nodes.tar" --tag n >/dev/null
  run img pull --allow-devices --format json "oci:$T/lay:n"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(echo "$output" | jq .devices_skipped)" = 0 ]
  r=$(rootfs_of "oci:$T/lay:n")
  [ "$(stat -c '%F %t:%T %a %u:%g' "$r/dev/sda")" = "block special file 8:0 600 0:0" ]
  [ "$(stat -c '%F %t:%T %a' "$r/dev/mem")" = "character special file 1:1 600" ]
  # A bundle gets them only when asked too.
  img bundle -q "oci:$T/lay:n" "$T/b1"
  [ ! -e "$T/b1/rootfs/dev/sda" ] && [ -p "$T/b1/rootfs/fifo" ]
  img bundle -q --allow-devices "oci:$T/lay:n" "$T/b2"
  [ "$(stat -c '%F %t:%T %a %u' "$T/b2/rootfs/dev/sda")" = "block special file 8:0 600 0" ]
  # A tree unpacked without them cannot serve --allow-devices.
  img rmi "oci:$T/lay:n"
  img pull -q "oci:$T/lay:n"
  run img bundle -q --allow-devices "oci:$T/lay:n" "$T/b3"
  [ "$status" -ne 0 ]
  [[ "$output" == *"without its 2 device nodes"*"rmi"* ]]
  [ ! -e "$T/b3" ]
}

@test "bundle keeps the mode, times and xattrs of FIFOs" {
  require_root
  $MC nodes "$T/nodes.tar"
  $MK image "$T/lay" "$T/l1" "$T/nodes.tar" --tag n >/dev/null
  img pull -q "oci:$T/lay:n"
  r=$(rootfs_of "oci:$T/lay:n")
  [ "$(stat -c %Y "$r/fifo")" = 1000000000 ]
  python3 -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.sandlock-test", b"kept", follow_symlinks=False)' "$r/fifo"
  (umask 077 && img bundle -q "oci:$T/lay:n" "$T/b")
  f=$T/b/rootfs/fifo
  [ "$(stat -c '%F %a %Y' "$f")" = "fifo 666 1000000000" ]
  [ "$(python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.sandlock-test", follow_symlinks=False).decode())' "$f")" = kept ]
}

# ---- the unpack budget (issue 11 item 5) ----

@test "the unpack budget is the whole image's: the slack once, not per layer" {
  # 16 layers of 5 MiB of zeros (~5 KB gzipped each): 80 MiB, each far
  # under 64 MiB, together over 100 x 80 KB + 64 MiB.
  $MC zeros "$T/z.tar" 5
  $MK image "$T/lay" $(for i in $(seq 16); do echo "$T/z.tar"; done) --tag z >/dev/null
  run img pull "oci:$T/lay:z"
  [ "$status" -ne 0 ]
  [[ "$output" == *"decompression bomb"*"--max-unpacked-size"* ]]
  [ -z "$(ls "$C/rootfs")" ] && [ -z "$(ls "$C/tmp")" ] && [ -z "$(ls "$C/refs")" ]
  # A legitimate, very compressible image: the flag the message names.
  run img pull --max-unpacked-size 100m "oci:$T/lay:z"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "--max-unpacked-size bounds the sum of the layers" {
  $MC zeros "$T/z.tar" 1
  $MK image "$T/lay" "$T/z.tar" "$T/z.tar" "$T/z.tar" --tag z >/dev/null
  run img pull --max-unpacked-size 2m "oci:$T/lay:z"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--max-unpacked-size"* ]]
  [ -z "$(ls "$C/rootfs")" ]
  run "$SANDLOCK_OCI" --root "$T/state" run --cache-dir "$C" --max-unpacked-size 2m \
    --image "oci:$T/lay:z" content-budget
  [ "$status" -ne 0 ]
  [[ "$output" == *"--max-unpacked-size"* ]]
  [ -z "$(ls "$C/rootfs")" ]
  run img pull --max-unpacked-size=4M -q "oci:$T/lay:z"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  for bad in 0 -1 12x 1.5g k 99999999999999999999g; do
    run img pull --max-unpacked-size "$bad" "oci:$T/lay:z"
    [ "$status" -ne 0 ]
    [[ "$output" == *"--max-unpacked-size: expected a size"*"\`$bad\`"* ]]
  done
}

# ---- zstd:chunked without the tar's end-of-archive padding (item 12) ----

# chunked TAG [--go]: a zstd layer cut after its last entry, the config's
# diff_id that of the whole tar (older containers/storage zstd:chunked).
chunked() {
  $MC nopad "$T/cut.tar" "$T/full.tar" ${2:-}
  $MK image "$T/lay" "$T/full.tar" --tag "$1" --compress zstd >/dev/null
  zstd -q -c "$T/cut.tar" > "$T/cut.tar.zst"
  $MC edit "$T/lay" "$1" --replace-layer "$T/cut.tar.zst" >/dev/null
}

@test "zstd:chunked layer without its tar padding: accepted against the padded diff_id" {
  chunked rec
  chunked go --go
  for t in rec go; do
    run img pull -q "oci:$T/lay:$t"
    [ "$status" -eq 0 ] || { echo "$t: $output"; false; }
    [ "$(cat "$(rootfs_of "oci:$T/lay:$t")/hello")" = "hello from a chunked layer" ]
  done
}

@test "a layer cut short is still refused by its diff_id" {
  chunked rec
  # Cut inside the last entry's data: no padding makes it the tar.
  head -c 1000 "$T/cut.tar" | zstd -q -c > "$T/short.zst"
  $MC edit "$T/lay" rec --replace-layer "$T/short.zst" >/dev/null
  run img pull "oci:$T/lay:rec"
  [ "$status" -ne 0 ]
  [ -z "$(ls "$C/rootfs")" ]
  # Whole entries, but a config naming other content.
  $MK image "$T/lay" "$T/l1" --tag other --compress zstd >/dev/null
  $MC edit "$T/lay" other --replace-layer "$T/cut.tar.zst" >/dev/null
  run img pull "oci:$T/lay:other"
  [ "$status" -ne 0 ]
  [[ "$output" == *"diff_id mismatch"* ]]
}
