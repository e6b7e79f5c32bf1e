#!/usr/bin/env bats
# The image puller against hostile and strict registries (tests/lib/hostile.py
# on 127.0.0.1, stopping by itself): bodies that never end, bodies that
# trickle, rejected credentials, wrong sizes, bad TLS; the messages must
# name the real cause.  Also `-h`/`--help` on every sub-command.

load ../lib/common
load ../lib/registry

bats_require_minimum_version 1.5.0

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup() {
  C=$BATS_TEST_TMPDIR/cache
}

teardown() {
  reg_stop_all "$BATS_TEST_TMPDIR"
}

# With a hard limit, so a pull that never ends fails the test (status 124)
# instead of hanging it.
img() { timeout 30 "$SANDLOCK_OCI" "$1" --cache-dir "$C" "${@:2}"; }
brt() { timeout 30 "$SANDLOCK_OCI" --root "$ROOT" "$@"; }

# hostile_start MODE [hostile.py args]: sets HP (its port) and HREF (an
# image reference on it); the server logs requests to $BATS_TEST_TMPDIR/h/log.
hostile_start() {
  local mode=$1 dir=$BATS_TEST_TMPDIR/h; shift
  HP=$(free_port)
  mkdir -p "$dir"
  python3 "$SANDLOCK_TESTS_DIR/lib/hostile.py" --port "$HP" --mode "$mode" \
    --lifetime 60 --log "$dir/log" "$@" > "$dir/out" 2>&1 &
  echo $! > "$dir/pid"
  HREF="docker://127.0.0.1:$HP/test/img:latest"
  if [ "$*" = "${*#--cert}" ]; then
    wait_http "http://127.0.0.1:$HP/ping"
  else
    wait_http "https://127.0.0.1:$HP/ping" -k
  fi
}

@test "every sub-command answers -h and --help with its usage on stdout" {
  cmds=$("$SANDLOCK_OCI" --help | sed -n '/^Commands:/,$p' | awk 'NR > 1 { print $1 }')
  [ -n "$cmds" ]
  for c in $cmds; do
    for h in --help -h; do
      run --separate-stderr "$SANDLOCK_OCI" "$c" "$h"
      [ "$status" -eq 0 ] || { echo "$c $h: status $status: $stderr"; false; }
      [[ "$output" == usage:* ]] || { echo "$c $h: $output"; false; }
      [ -z "$stderr" ] || { echo "$c $h: stderr: $stderr"; false; }
    done
  done
  # After other flags and their values too.
  run "$SANDLOCK_OCI" pull --creds u:p --help
  [ "$status" -eq 0 ]
  [[ "$output" == "usage: sandlock-oci pull"* ]]
}

@test "--help after a container id belongs to the container's program" {
  ROOT=$BATS_TEST_TMPDIR/state
  run rt exec "nosuch-$$" sh --help
  [ "$status" -ne 0 ]
  [[ "$output" == *nosuch-$$*"does not exist"* ]]
  run rt run --image oci:/nonexistent "nosuch-$$" -- sh --help
  [ "$status" -ne 0 ]
  [[ "$output" != usage:* ]]
}

@test "an auth file whose auth is not base64 of user:pass: error names the file and registry" {
  hostile_start basic
  f=$BATS_TEST_TMPDIR/auth.json
  for bad in "$(printf nocolon | base64)" '!!notbase64'; do
    printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$HP" "$bad" > "$f"
    run img pull --authfile "$f" "$HREF"
    [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
    [[ "$output" == *"$f"* ]]
    [[ "$output" == *"registry 127.0.0.1:$HP"* ]]
    [[ "$output" == *"not base64 of user:password"* ]]
    # The default auth file, through $DOCKER_CONFIG.
    mkdir -p "$BATS_TEST_TMPDIR/dc" && cp "$f" "$BATS_TEST_TMPDIR/dc/config.json"
    DOCKER_CONFIG=$BATS_TEST_TMPDIR/dc run img pull "$HREF"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$BATS_TEST_TMPDIR/dc/config.json"* ]]
  done
}

@test "a manifest error body that never ends is cut at its cap" {
  hostile_start endless-error
  SECONDS=0
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"http://127.0.0.1:$HP/v2/test/img/manifests/latest"* ]]
  [[ "$output" == *"HTTP 404: error body larger than 65536 bytes, transfer aborted"* ]]
  [ "$SECONDS" -lt 10 ]
}

@test "a blob error body that never ends is cut at its cap" {
  hostile_start endless-blob-error
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"/blobs/sha256:"* ]]
  [[ "$output" == *"HTTP 403: error body larger than 65536 bytes"* ]]
  [ -z "$(ls "$C/tmp" 2>/dev/null)" ]
}

@test "a token endpoint that streams for ever is cut at the cap" {
  hostile_start endless-token
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"token request to http://127.0.0.1:$HP/token"* ]]
  [[ "$output" == *"response body larger than 65536 bytes"* ]]
}

@test "a blob that trickles: cut by --stall-timeout, or by the --timeout deadline" {
  hostile_start trickle
  SECONDS=0
  run img pull --stall-timeout 1s "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"/blobs/sha256:"*"stalled:"*"--stall-timeout 1s"* ]]
  [ "$SECONDS" -lt 25 ]
  SECONDS=0
  run img pull --timeout 2s "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"/blobs/sha256:"*"deadline exceeded"*"--timeout 2s"* ]]
  [ "$SECONDS" -lt 6 ]
  [ -z "$(ls "$C/tmp" 2>/dev/null)" ]
}

@test "--timeout and --stall-timeout: bad values name the flag; bundle and run --image take them" {
  run img pull --timeout 5x docker://127.0.0.1:1/x
  [ "$status" -eq 1 ]
  [[ "$output" == *"--timeout: expected a duration"*"5x"* ]]
  run img pull --stall-timeout 200ms docker://127.0.0.1:1/x
  [ "$status" -eq 1 ]
  [[ "$output" == *"--stall-timeout: expected a duration"* ]]
  hostile_start trickle
  run img bundle --timeout 1s "$HREF" "$BATS_TEST_TMPDIR/b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"deadline exceeded"*"--timeout 1s"* ]]
  ROOT=$BATS_TEST_TMPDIR/state
  run brt run --cache-dir "$C" --timeout=1s --image "$HREF" "t$$"
  [ "$status" -eq 1 ]
  [[ "$output" == *"deadline exceeded"*"--timeout 1s"* ]]
}

@test "basic auth with a wrong password says the credentials were rejected" {
  hostile_start basic
  run img pull --creds tester:wrong "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"HTTP 401"*"rejected the credentials of user \`tester\` (from --creds)"* ]]
  mkdir -p "$BATS_TEST_TMPDIR/dc"
  printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$HP" "$(printf tester:nope | base64)" \
    > "$BATS_TEST_TMPDIR/dc/config.json"
  DOCKER_CONFIG=$BATS_TEST_TMPDIR/dc run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"user \`tester\` (from auth file $BATS_TEST_TMPDIR/dc/config.json)"* ]]
  run img pull --creds tester:s3cret "$HREF"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "bearer: anonymous access to a private repository hints at --creds; a wrong password is named" {
  hostile_start bearer-private
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"HTTP 401"*"anonymous access was refused"*"--creds"* ]]
  f=$BATS_TEST_TMPDIR/auth.json
  printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$HP" "$(printf tester:nope | base64)" > "$f"
  run img pull --authfile "$f" "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"token request"*"rejected the credentials of user \`tester\` (from --authfile $f)"* ]]
  run img pull --creds tester:s3cret "$HREF"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a config of the wrong size reports the size mismatch" {
  hostile_start big-config
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"size mismatch"* ]]
  [[ "$output" != *"Operation canceled"* ]]
}

@test "a config that is not JSON: the error names the reference and the digest" {
  hostile_start bad-config-json
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"127.0.0.1:$HP/test/img"*"config sha256:"*"invalid JSON"* ]]
}

@test "TLS: an unknown CA is named as such, not as curl's generic text" {
  d=$BATS_TEST_TMPDIR/certs
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$d/k" -out "$d/c" 2>/dev/null
  hostile_start ok --cert "$d/c" --key "$d/k"
  run img pull "$HREF"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"SSL certificate problem: self"*"signed certificate"* ]]
  [[ "$output" == *"--cert-dir"* ]]
  mkdir -p "$d/ca" && cp "$d/c" "$d/ca/hostile.crt"
  run img pull --cert-dir "$d/ca" "$HREF"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "connection refused and unknown host are named" {
  p=$(free_port)
  run img pull "docker://127.0.0.1:$p/x/y:z"
  [ "$status" -eq 1 ]
  [[ "$output" == *"127.0.0.1 port $p"*"(Connection refused)"* ]]
  run img pull "docker://no-such-host.invalid/x/y:z"
  [ "$status" -eq 1 ]
  [[ "$output" == *"Could not resolve host: no-such-host.invalid"* ]]
}

@test "unknown transports are named, not called missing" {
  run img pull http://127.0.0.1:1/x
  [ "$status" -eq 1 ]
  [[ "$output" == *"unknown transport \`http://\`"* ]]
  run img pull docker-archive:/tmp/x.tar
  [ "$status" -eq 1 ]
  [[ "$output" == *"transport \`docker-archive:\` is not supported"* ]]
}

@test "oci:DIR without a tag in a layout of several images lists their names" {
  mkdir -p "$BATS_TEST_TMPDIR/l/etc" && echo x > "$BATS_TEST_TMPDIR/l/etc/x"
  $MK image "$BATS_TEST_TMPDIR/lay" "$BATS_TEST_TMPDIR/l" --tag one >/dev/null
  echo y > "$BATS_TEST_TMPDIR/l/etc/y"
  $MK image "$BATS_TEST_TMPDIR/lay" "$BATS_TEST_TMPDIR/l" --tag two >/dev/null
  run img pull "oci:$BATS_TEST_TMPDIR/lay"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"the layout holds images tagged \`one\`, \`two\`; name one with :TAG"* ]]
  img pull -q "oci:$BATS_TEST_TMPDIR/lay:two"
}

@test "bundle into a non-empty rootfs refuses before copying anything" {
  hostile_start ok
  b=$BATS_TEST_TMPDIR/b
  mkdir -p "$b/rootfs" && echo mine > "$b/rootfs/keep"
  run img bundle "$HREF" "$b"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"bundle rootfs \`$b/rootfs\` is not empty"* ]]
  [ "$(ls "$b/rootfs")" = keep ]
  [ "$(cat "$b/rootfs/keep")" = mine ]
  [ ! -e "$b/config.json" ]
  rm "$b/rootfs/keep"
  img bundle -q "$HREF" "$b"
  [ -f "$b/rootfs/hello" ]
  [ -f "$b/config.json" ]
}

@test "ENOSPC writing a blob or unpacking a layer names the image and the cache" {
  require_root
  hostile_start ok
  # A full 64 KiB tmpfs as the cache, in a private mount namespace.
  mkdir -p "$C"
  run unshare -m --propagation private sh -c '
    mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
    mkdir -p "$1/blobs/sha256" "$1/rootfs" "$1/tmp" "$1/locks" "$1/refs"
    dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
    exec timeout 30 "$2" pull --cache-dir "$1" "$3"' sh "$C" "$SANDLOCK_OCI" "$HREF"
  [ "$status" -ne 99 ] || skip "cannot mount a tmpfs here"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  echo "$output"
  # The pull commits manifest and config under the cache lock after the
  # rootfs is unpacked, so on a cache full from the start the first write
  # to fail is the layer's; either names the image, the cache and the blob.
  [[ "$output" == *"cache \`$C\`"*"$HREF"*"sha256:"*"No space left on device"* \
     || "$output" == *"$HREF"*"cache \`$C\`: blob sha256:"*"No space left on device"* ]]
  # A layer that does not fit (the manifest and config do).
  mkdir -p "$BATS_TEST_TMPDIR/l" && head -c 300k /dev/urandom > "$BATS_TEST_TMPDIR/l/big"
  $MK image "$BATS_TEST_TMPDIR/lay" "$BATS_TEST_TMPDIR/l" --tag big >/dev/null
  run unshare -m --propagation private sh -c '
    mount -t tmpfs -o size=128k tmpfs "$1" || exit 99
    exec timeout 30 "$2" pull --cache-dir "$1" "$3"' sh "$C" "$SANDLOCK_OCI" "oci:$BATS_TEST_TMPDIR/lay:big"
  [ "$status" -eq 1 ] || { echo "status $status: $output"; false; }
  [[ "$output" == *"cache \`$C\`"*"oci:$BATS_TEST_TMPDIR/lay:big"*"entry \`big\`"*"No space left on device"* ]]
}
