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
  if [ -d "$T/state" ]; then ROOT=$T/state common_teardown; fi
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
  [ ! -e "$r/dev/sda" ]
  [ ! -e "$r/dev/mem" ]
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
  [ ! -e "$T/b1/rootfs/dev/sda" ]
  [ -p "$T/b1/rootfs/fifo" ]
  img bundle -q --allow-devices "oci:$T/lay:n" "$T/b2"
  [ "$(stat -c '%F %t:%T %a %u %Y' "$T/b2/rootfs/dev/sda")" = "block special file 8:0 600 0 1000000000" ]
  # A tree unpacked without them cannot serve --allow-devices.
  img rmi "oci:$T/lay:n"
  img pull -q "oci:$T/lay:n"
  run img bundle -q --allow-devices "oci:$T/lay:n" "$T/b3"
  [ "$status" -ne 0 ]
  [[ "$output" == *"without its 2 device nodes"*"rmi"* ]]
  [ ! -e "$T/b3" ]
}

@test "run --image: device nodes in the container's bundle only with --allow-devices" {
  require_root
  ROOT=$T/state
  $MC nodes "$T/nodes.tar"
  $MK image "$T/lay" "$T/l1" "$T/nodes.tar" --tag n >/dev/null
  a=$(cid dev) b=$(cid nodev)
  rt run -d --cache-dir "$C" --allow-devices --image "oci:$T/lay:n" "$a" -- /bin/busybox sleep 100
  [ "$(stat -c '%F %a %u' "$ROOT/image-bundles/$a/rootfs/dev/sda")" = "block special file 600 0" ]
  # Without it the root may be an overlay of the cached tree (docs/cow.md),
  # which now holds the node: mounted nodev, so that no node of it opens.
  run rt run --cache-dir "$C" --image "oci:$T/lay:n" "$b" -- \
    /bin/busybox sh -c '/bin/busybox test -x /bin/busybox && echo has-busybox; /bin/busybox grep " / / " /proc/self/mountinfo'
  echo "$output"
  [[ "$output" == *has-busybox* ]]
  # (a copy, where overlayfs cannot be used, has no node to open)
  if [[ "$output" == *" - overlay "* ]]; then
    [[ "$(echo "$output" | grep ' / / ' | cut -d' ' -f6)" == *nodev* ]]
  fi
  rt delete -f "$a"
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
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/refs")" ]
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

# ---- media types (issue 11 item 4) ----

@test "layers and configs of types no image runtime knows are refused, naming the type" {
  $MK image "$T/lay" "$T/l1" --tag evil >/dev/null
  $MC edit "$T/lay" evil --layer-mt application/x-evil >/dev/null
  run img pull "oci:$T/lay:evil"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not a container image: application/x-evil (layers[0])"* ]]
  # A helm chart: its config says what it is.
  $MK image "$T/lay" "$T/l1" --tag helm >/dev/null
  $MC edit "$T/lay" helm --config-mt application/vnd.cncf.helm.config.v1+json \
    --layer-mt application/vnd.cncf.helm.chart.content.v1.tar+gzip >/dev/null
  run img bundle "oci:$T/lay:helm" "$T/b"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not a container image: application/vnd.cncf.helm.config.v1+json"* ]]
  [ ! -e "$T/b" ]
  # An OCI 1.1 artifact (an SBOM) on an image config.
  $MK image "$T/lay" "$T/l1" --tag sbom >/dev/null
  $MC edit "$T/lay" sbom --artifact-type application/spdx+json >/dev/null
  run img pull "oci:$T/lay:sbom"
  [[ "$output" == *"not a container image: application/spdx+json"* ]]
  # Foreign layers: said so.
  $MK image "$T/lay" "$T/l1" --tag foreign >/dev/null
  $MC edit "$T/lay" foreign --layer-mt application/vnd.docker.image.rootfs.foreign.diff.tar.gzip >/dev/null
  run img pull "oci:$T/lay:foreign"
  [ "$status" -ne 0 ]
  [[ "$output" == *"foreign (non-distributable) layers are not supported"* ]]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/refs")" ]
}

@test "a layer typed gzip whose bytes are zstd still unpacks (the bytes pick the decompressor)" {
  $MK image "$T/lay" "$T/l1" --tag z --compress zstd >/dev/null
  $MC edit "$T/lay" z --layer-mt application/vnd.docker.image.rootfs.diff.tar.gzip >/dev/null
  img pull -q "oci:$T/lay:z"
  [ -x "$(rootfs_of "oci:$T/lay:z")/bin/busybox" ]
}

@test "a manifest must be what its index entry says it is" {
  # oci: layouts have no Content-Type: index.json's descriptor is the claim.
  $MK image "$T/lay" "$T/l1" --tag d >/dev/null
  $MC edit "$T/lay" d --body-mt "$DOCKER_MAN" --desc-mt "$OCI_MAN" >/dev/null
  run img pull "oci:$T/lay:d"
  [ "$status" -ne 0 ]
  [[ "$output" == *"says it is \`$DOCKER_MAN\` but was served or listed as \`$OCI_MAN\`"* ]]
  # An image index whose entry claims a Docker manifest for an OCI one.
  $MK image "$T/lay2" "$T/l1" >/dev/null
  $MK index "$T/lay2" --tag multi >/dev/null
  $MC edit "$T/lay2" multi --entry-mt "$DOCKER_MAN" >/dev/null
  run img pull "oci:$T/lay2:multi"
  [ "$status" -ne 0 ]
  [[ "$output" == *"says it is \`$OCI_MAN\` but was served or listed as \`$DOCKER_MAN\`"* ]]
  [ -z "$(ls "$C/rootfs")" ]
}

@test "registry: Content-Type and the body's mediaType must agree" {
  $MK image "$T/lay" "$T/l1" --tag dock >/dev/null
  $MC edit "$T/lay" dock --body-mt "$DOCKER_MAN" --desc-mt "$DOCKER_MAN" \
    --config-mt application/vnd.docker.container.image.v1+json \
    --layer-mt application/vnd.docker.image.rootfs.diff.tar.gzip >/dev/null
  $MK image "$T/lay" "$T/l1" --tag bare >/dev/null
  $MC edit "$T/lay" bare --body-mt none >/dev/null
  serve "$T/lay" --ctype "$OCI_MAN"
  run img pull "docker://127.0.0.1:$PORT/t/img:dock"
  [ "$status" -ne 0 ]
  [[ "$output" == *"says it is \`$DOCKER_MAN\` but was served or listed as \`$OCI_MAN\`"* ]]
  # An OCI manifest may omit its mediaType: the Content-Type says it.
  run img pull -q "docker://127.0.0.1:$PORT/t/img:bare"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  kill "$(cat "$T/serve.pid")"; rm -f "$T/port"
  # Served with its own type, the Docker manifest is fine.
  serve "$T/lay"
  run img pull -q "docker://127.0.0.1:$PORT/t/img:dock"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  kill "$(cat "$T/serve.pid")"; rm -f "$T/port"
  # A generic Content-Type says nothing: the body decides.
  serve "$T/lay" --ctype application/octet-stream
  run img pull -q "docker://127.0.0.1:$PORT/t/img:bare"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  kill "$(cat "$T/serve.pid")"; rm -f "$T/port"
  # A Docker manifest always states its type: one without is refused.
  serve "$T/lay" --ctype "$DOCKER_MAN"
  run img pull "docker://127.0.0.1:$PORT/t/img:bare"
  [ "$status" -ne 0 ]
  [[ "$output" == *"has no mediaType"* ]]
}
