#!/usr/bin/env bats
# The image puller against local registries (no internet): Debian's
# docker-registry on 127.0.0.1 (plain; TLS + htpasswd), a loopback proxy
# for bearer tokens and faults, OCI layouts built here from busybox.

load ../lib/common
load ../lib/registry
load ../lib/engines

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup_file() {
  export D=$BATS_FILE_TMPDIR
  command -v skopeo >/dev/null || skip "skopeo missing"
  [ -x /usr/bin/docker-registry ] || skip "docker-registry missing"
  # Layer 1: busybox with a few applets and /etc.
  local l1=$D/l1 l2=$D/l2
  mkdir -p "$l1"/{bin,etc,data/keep,opq} "$l2"/{data,opq} "$l2/etc"
  cp "$BUSYBOX" "$l1/bin/busybox"
  for a in sh ls cat echo true id stat; do ln -s busybox "$l1/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home:/bin/sh\n' > "$l1/etc/passwd"
  printf 'root:x:0:\nuser:x:1000:\nwheel:x:10:user\n' > "$l1/etc/group"
  echo gone > "$l1/data/victim"; echo old > "$l1/opq/old"; echo kept > "$l1/data/keep/k"
  # Layer 2: a whiteout, an opaque dir, a hardlink, a symlink.
  : > "$l2/data/.wh.victim"; : > "$l2/opq/.wh..wh..opq"; echo new > "$l2/opq/new"
  echo early > "$l2/opq/-early"   # sorts before the marker: same layer, kept
  echo hl > "$l2/data/a"; ln "$l2/data/a" "$l2/data/b"; ln -s ../data/a "$l2/etc/link"
  $MK image "$D/lay" "$l1" --tag bb --cmd '["echo","hello from image"]' --user user \
    --label org.example=yes --port 80/tcp >/dev/null
  $MK image "$D/lay" "$l1" "$l2" --tag multi >/dev/null
  $MK image "$D/lay" "$l1" --tag zst --compress zstd >/dev/null
  # Layer 3: 12 MiB that do not compress: decompressed on its own thread
  # (image/unpack.c PIPE_MIN).
  mkdir -p "$D/l3/big" && head -c 12M /dev/urandom > "$D/l3/big/blob"
  sha256sum < "$D/l3/big/blob" | cut -d' ' -f1 > "$D/big.sha"
  $MK image "$D/lay" "$l1" "$D/l3" --tag big >/dev/null
  $MK image "$D/lay" "$l1" "$l2" --tag baddiff --bad-diff-id 1 >/dev/null
  $MK image "$D/lay" "$l1" --tag baddiffzst --compress zstd --bad-diff-id 0 >/dev/null
  $MK image "$D/lay" "$l1" "$l2" --tag fewdiff --drop-diff-id >/dev/null
  $MK image "$D/lay" "$l1" --arch amd64 >/dev/null
  $MK image "$D/lay" "$l1" "$l2" --arch arm64 --variant v8 >/dev/null
  $MK index "$D/lay" --tag multiarch >/dev/null
  reg_certs "$D/certs"
  mkdir -p "$D/cadir" && cp "$D/certs/ca.crt" "$D/cadir/"
  reg_start PLAIN "$D/plain"
  reg_start TLS "$D/tls" tls
  echo "REG_PLAIN_PORT=$REG_PLAIN_PORT REG_TLS_PORT=$REG_TLS_PORT" > "$D/ports"
  for t in bb multi zst baddiff big; do push "$D/lay:$t" "$REG_PLAIN_PORT" "test/busybox:$t"; done
  push "$D/lay:multiarch" "$REG_PLAIN_PORT" test/busybox:multiarch --all
  sk copy --quiet --dest-cert-dir "$D/cadir" --dest-creds tester:s3cret \
    "oci:$D/lay:bb" "docker://127.0.0.1:$REG_TLS_PORT/secure/busybox:bb" >/dev/null
}

teardown_file() {
  reg_stop_all "$BATS_FILE_TMPDIR"
}

setup() {
  . "$BATS_FILE_TMPDIR/ports"
  D=$BATS_FILE_TMPDIR
  C=$BATS_TEST_TMPDIR/cache
  P="127.0.0.1:$REG_PLAIN_PORT/test/busybox"
  S="127.0.0.1:$REG_TLS_PORT/secure/busybox:bb"
}

teardown() {
  if [ -d "$BATS_TEST_TMPDIR/state" ]; then ROOT=$BATS_TEST_TMPDIR/state common_teardown; fi
  reg_stop_all "$BATS_TEST_TMPDIR"
  if [ -f "$BATS_TEST_TMPDIR/dockerd/ns.pid" ]; then ENG_DIR=$BATS_TEST_TMPDIR/dockerd private_dockerd_stop; fi
  if [ -f "$BATS_TEST_TMPDIR/nobody-dir" ]; then rm -rf "$(cat "$BATS_TEST_TMPDIR/nobody-dir")"; fi
}

img() { "$SANDLOCK_OCI" "$1" --cache-dir "$C" "${@:2}"; }
rootfs_of() { img pull --offline "$1" --format json | jq -r .rootfs; }

@test "pull docker:// over plain HTTP on localhost, then from cache" {
  run img pull "docker://$P:bb" --format json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  r=$(echo "$output" | jq -r .rootfs)
  [ "$(echo "$output" | jq -r .cached)" = false ]
  [ -x "$r/bin/busybox" ]
  [ -L "$r/bin/sh" ]
  [ "$(cat "$r/etc/passwd" | head -1)" = "root:x:0:0:root:/root:/bin/sh" ]
  run img pull "docker://$P:bb" --format json
  [ "$(echo "$output" | jq -r .cached)" = true ]
  [ -z "$(ls "$C/tmp")" ]
  img pull -q "docker://localhost:$REG_PLAIN_PORT/test/busybox:bb"
}

@test "second pull of a cached image touches only the manifest" {
  proxy_start X "$BATS_TEST_TMPDIR/px" "$REG_PLAIN_PORT"
  img pull -q "docker://127.0.0.1:$PROXY_X_PORT/test/busybox:bb"
  grep -q /blobs/ "$BATS_TEST_TMPDIR/px/requests"
  : > "$BATS_TEST_TMPDIR/px/requests"
  img pull -q "docker://127.0.0.1:$PROXY_X_PORT/test/busybox:bb"
  run grep -c /blobs/ "$BATS_TEST_TMPDIR/px/requests"
  [ "$output" = 0 ]
  grep -q /manifests/bb "$BATS_TEST_TMPDIR/px/requests"
}

@test "layers: whiteout, opaque dir, hardlink, symlink applied in order" {
  img pull -q "docker://$P:multi"
  r=$(rootfs_of "docker://$P:multi")
  [ ! -e "$r/data/victim" ]
  [ -f "$r/data/keep/k" ]
  [ ! -e "$r/opq/old" ]
  [ "$(cat "$r/opq/new")" = new ]
  [ "$(cat "$r/opq/-early")" = early ]
  [ "$(stat -c %i "$r/data/a")" = "$(stat -c %i "$r/data/b")" ]
  [ "$(readlink "$r/etc/link")" = ../data/a ]
}

@test "zstd layer" {
  img pull -q "docker://$P:zst"
  [ -x "$(rootfs_of "docker://$P:zst")/bin/busybox" ]
}

@test "platform selection from an index, and its error" {
  run img pull "docker://$P:multiarch" --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .platform)" = linux/amd64 ]
  run img pull "docker://$P:multiarch" --platform linux/arm64 --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .platform)" = linux/arm64/v8 ]
  run img pull "docker://$P:multiarch" --platform linux/s390x
  [ "$status" -ne 0 ]
  [[ "$output" == *"no image for platform linux/s390x"*"linux/amd64"*"linux/arm64/v8"* ]]
  # The same index from a layout (no Content-Type: the index entry's type).
  run img pull "oci:$D/lay:multiarch" --format json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(echo "$output" | jq -r .platform)" = linux/amd64 ]
  run img pull "oci:$D/lay:multiarch" --platform linux/arm64 --format json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(echo "$output" | jq -r .platform)" = linux/arm64/v8 ]
}

@test "pull by digest; tag with digest refused; unknown manifest named" {
  d=$(img pull "docker://$P:bb" --format json | jq -r .digest)
  img pull -q "docker://$P@$d"
  run img pull "docker://$P:bb@$d"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not both"* ]]
  run img pull "docker://$P:nope"
  [ "$status" -ne 0 ]
  [[ "$output" == *"404 MANIFEST_UNKNOWN"* ]]
  run img pull "$P:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"missing transport"* ]]
}

@test "TLS: refused without the CA, verified with --cert-dir or SSL_CERT_FILE" {
  run img pull "docker://$S" --creds tester:s3cret
  [ "$status" -ne 0 ]
  [[ "$output" == *"--cert-dir"* ]]
  img pull -q "docker://$S" --cert-dir "$D/cadir" --creds tester:s3cret
  rm -rf "$C"
  SSL_CERT_FILE=$D/certs/ca.crt img pull -q "docker://$S" --creds tester:s3cret
  rm -rf "$C"
  img pull -q "docker://$S" --tls-verify=false --creds tester:s3cret
}

@test "basic auth: required, wrong password, --creds, auth file, DOCKER_CONFIG" {
  run img pull "docker://$S" --cert-dir "$D/cadir"
  [ "$status" -ne 0 ]
  [[ "$output" == *"401"*"credentials"* ]]
  run img pull "docker://$S" --cert-dir "$D/cadir" --creds tester:wrong
  [ "$status" -ne 0 ]
  [[ "$output" == *"UNAUTHORIZED"* ]]
  mkdir -p "$BATS_TEST_TMPDIR/dc"
  printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$REG_TLS_PORT" \
    "$(printf tester:s3cret | base64)" > "$BATS_TEST_TMPDIR/dc/config.json"
  img pull -q "docker://$S" --cert-dir "$D/cadir" --authfile "$BATS_TEST_TMPDIR/dc/config.json"
  rm -rf "$C"
  DOCKER_CONFIG=$BATS_TEST_TMPDIR/dc img pull -q "docker://$S" --cert-dir "$D/cadir"
  printf '{"credHelpers":{"127.0.0.1:%s":"pass"}}' "$REG_TLS_PORT" > "$BATS_TEST_TMPDIR/h.json"
  rm -rf "$C"
  run img pull "docker://$S" --cert-dir "$D/cadir" --authfile "$BATS_TEST_TMPDIR/h.json"
  [ "$status" -ne 0 ]
  [[ "$output" == *"docker-credential-pass"*"not run"* ]]
}

@test "bearer token: anonymous, and with credentials" {
  proxy_start A "$BATS_TEST_TMPDIR/pa" "$REG_PLAIN_PORT" --bearer :
  img pull -q "docker://127.0.0.1:$PROXY_A_PORT/test/busybox:bb"
  grep -q '^GET /token' "$BATS_TEST_TMPDIR/pa/requests"
  proxy_start B "$BATS_TEST_TMPDIR/pb" "$REG_PLAIN_PORT" --bearer bob:pw
  rm -rf "$C"
  run img pull "docker://127.0.0.1:$PROXY_B_PORT/test/busybox:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"token request"*"UNAUTHORIZED"* ]]
  img pull -q "docker://127.0.0.1:$PROXY_B_PORT/test/busybox:bb" --creds bob:pw
}

# The manifest file of TAG in $D/lay.
manifest_of() {
  local m
  m=$(jq -r --arg t "$1" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"]==$t) | .digest' "$D/lay/index.json")
  echo "$D/lay/blobs/sha256/${m#sha256:}"
}

# The digests of TAG's config and layers in $D/lay, one a line, sorted.
blobs_of() { jq -r '.config.digest, .layers[].digest' "$(manifest_of "$1")" | sort; }

@test "blob redirects: followed to another host, Authorization dropped there" {
  px=$BATS_TEST_TMPDIR/pz
  proxy_start Z "$px" "$REG_PLAIN_PORT" --bearer bob:pw --blob-store "$px/store"
  img pull -q "docker://127.0.0.1:$PROXY_Z_PORT/test/busybox:multi" --creds bob:pw
  r=$(rootfs_of "docker://127.0.0.1:$PROXY_Z_PORT/test/busybox:multi")
  [ ! -e "$r/data/victim" ]
  [ "$(cat "$r/opq/new")" = new ]
  want=$(blobs_of multi)
  [ "$(echo "$want" | wc -l)" = 3 ]
  # The registry got every blob request with the token (and redirected it) ...
  for d in $want; do
    grep -qx "GET /v2/test/busybox/blobs/$d - auth=Bearer" "$px/requests"
  done
  # ... the store served every blob, and never saw an Authorization header.
  [ "$(jq -r 'select(.method == "GET") | .path | sub(".*/blobs/"; "")' "$px/store" | sort -u)" = "$want" ]
  [ "$(jq -s '[.[].headers | keys[] | ascii_downcase | select(. == "authorization")] | length' "$px/store")" = 0 ]
  # Wrong bytes from the store fail the pull, naming the blob's digest.
  rm -rf "$C"
  proxy_start W "$BATS_TEST_TMPDIR/pw" "$REG_PLAIN_PORT" --bearer bob:pw \
    --blob-store "$BATS_TEST_TMPDIR/pw/store" --corrupt
  run img pull "docker://127.0.0.1:$PROXY_W_PORT/test/busybox:bb" --creds bob:pw
  [ "$status" -ne 0 ]
  [ -s "$BATS_TEST_TMPDIR/pw/store" ]
  # Config or layer, whichever fails first: one of the image's blobs.
  [[ "$output" =~ blob\ (sha256:[0-9a-f]{64}):\ digest\ mismatch\ \(content\ hashes\ to\ sha256: ]]
  blobs_of bb | grep -qx "${BASH_REMATCH[1]}"
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/refs")" ]
}

# What a terminal shows of a pull: escape sequences and CRs dropped.
on_tty() {
  script -qefc "$(printf '%q ' "$SANDLOCK_OCI" pull --cache-dir "$C" "$@")" /dev/null </dev/null |
    sed -e 's/\x1b\[[0-9]*[AK]//g' -e 's/\r//g'
}

@test "progress on a TTY: a line per layer and a total, with sizes and rate; none piped or -q" {
  command -v script >/dev/null || skip "util-linux script missing"
  # --jobs 1: the second layer has not started when the first is drawn.
  on_tty --jobs 1 "docker://$P:big" > "$BATS_TEST_TMPDIR/tty"
  res=$(tail -1 "$BATS_TEST_TMPDIR/tty")
  [[ "$res" =~ ^docker://$P:big\ sha256:[0-9a-f]{64}$ ]]
  # The last redraw: each layer (manifest order) done, then the total.
  m=$(manifest_of big)
  [ "$(jq '.layers | length' "$m")" = 2 ]
  want=$(jq -r '.layers[] | "\(.digest) \(.size)"' "$m" |
    awk '{ printf "%-19s %8.1f / %8.1f MB  done\n", substr($1, 1, 19), $2 / 1e6, $2 / 1e6; t += $2 }
         END { printf "total               %8.1f / %8.1f MB\n", t / 1e6, t / 1e6 }')
  got=$(tail -4 "$BATS_TEST_TMPDIR/tty" | head -3 | sed -E 's/  [0-9]+\.[0-9] MB\/s$//')
  [ "$got" = "$want" ]
  tail -2 "$BATS_TEST_TMPDIR/tty" | head -1 | grep -Eq '  [0-9]+\.[0-9] MB/s$'
  # Every line drawn names its layer or is the total.
  [ -z "$(grep -Ev '^(sha256:[0-9a-f]{12} |total |docker://)' "$BATS_TEST_TMPDIR/tty")" ]
  # The 12 MB layer was drawn part-way too: fewer bytes than its size, not done.
  big=$(jq -r '.layers[1] | "\(.digest[0:19]) \(.size)"' "$m")
  awk -v d="${big% *}" -v s="${big#* }" '$1 == d && $5 == "MB" && $2 + 0 < $4 + 0 && $4 == sprintf("%.1f", s / 1e6) { n++ }
    END { exit !(n > 0) }' "$BATS_TEST_TMPDIR/tty"
  # Not a TTY, or -q: the result line alone.
  rm -rf "$C"
  run img pull "docker://$P:big"
  [ "$status" -eq 0 ]
  [ "$output" = "$res" ]
  rm -rf "$C"
  on_tty -q "docker://$P:big" > "$BATS_TEST_TMPDIR/tty"
  [ "$(cat "$BATS_TEST_TMPDIR/tty")" = "$res" ]
}

@test "a dropped connection mid-blob resumes with Range" {
  proxy_start R "$BATS_TEST_TMPDIR/pr" "$REG_PLAIN_PORT" --drop-once
  img pull -q "docker://127.0.0.1:$PROXY_R_PORT/test/busybox:multi"
  grep -q '/blobs/.* bytes=[1-9]' "$BATS_TEST_TMPDIR/pr/requests"
  [ -x "$(rootfs_of "docker://127.0.0.1:$PROXY_R_PORT/test/busybox:multi")/bin/busybox" ]
}

@test "a large layer, decompressed on its own thread, through a dropped connection" {
  proxy_start R "$BATS_TEST_TMPDIR/pr" "$REG_PLAIN_PORT" --drop-once
  img pull -q "docker://127.0.0.1:$PROXY_R_PORT/test/busybox:big"
  grep -q '/blobs/.* bytes=[1-9]' "$BATS_TEST_TMPDIR/pr/requests"
  r=$(rootfs_of "docker://127.0.0.1:$PROXY_R_PORT/test/busybox:big")
  [ "$(sha256sum < "$r/big/blob" | cut -d' ' -f1)" = "$(cat "$D/big.sha")" ]
  [ -x "$r/bin/busybox" ]
}

@test "a pull that cannot make its temp dir fails at once, naming it" {
  img pull -q "docker://$P:bb"
  mv "$C/tmp" "$C/tmp.saved" && : > "$C/tmp"
  # Not cached: the config fetch waits for layer bytes that never come.
  run timeout 20 "$SANDLOCK_OCI" pull --cache-dir "$C" "docker://$P:multi"
  [ "$status" -eq 1 ]
  [[ "$output" == *"cache temp dir"*"Not a directory"* ]]
}

@test "503s are retried" {
  proxy_start F "$BATS_TEST_TMPDIR/pf" "$REG_PLAIN_PORT" --fail-first 2
  img pull -q "docker://127.0.0.1:$PROXY_F_PORT/test/busybox:bb"
}

@test "digest mismatch fails the pull, names the digest, leaves nothing" {
  proxy_start M "$BATS_TEST_TMPDIR/pm" "$REG_PLAIN_PORT" --corrupt
  run img pull "docker://127.0.0.1:$PROXY_M_PORT/test/busybox:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"digest mismatch"*sha256:* ]]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/refs")" ]
}

@test "a layer whose uncompressed content differs from its diff_id is refused" {
  l2=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"]=="baddiff") | .digest' "$D/lay/index.json")
  l2=$(jq -r '.layers[1].digest' "$D/lay/blobs/sha256/${l2#sha256:}")
  bad=sha256:$(printf 'not this layer' | sha256sum | cut -d' ' -f1)
  run img pull "docker://$P:baddiff"
  [ "$status" -ne 0 ] || { echo "$output"; false; }
  [[ "$output" == *"layer $l2: diff_id mismatch: the config says $bad, the uncompressed layer hashes to sha256:"* ]]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/refs")" ]
  # Nothing kept is trusted: the next pull checks again.
  run img pull "docker://$P:baddiff"
  [ "$status" -ne 0 ]
  [[ "$output" == *"diff_id mismatch"* ]]
  run img pull "oci:$D/lay:baddiffzst"
  [ "$status" -ne 0 ]
  [[ "$output" == *"diff_id mismatch: the config says $bad"* ]]
  tar -C "$D/lay" -cf "$BATS_TEST_TMPDIR/arch.tar" .
  run img pull "oci-archive:$BATS_TEST_TMPDIR/arch.tar:baddiff"
  [ "$status" -ne 0 ]
  [[ "$output" == *"layer $l2: diff_id mismatch"* ]]
  run img pull "oci:$D/lay:fewdiff"
  [ "$status" -ne 0 ]
  [[ "$output" == *"rootfs.diff_ids has 1 entries for the manifest's 2 layers"* ]]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/refs")" ]
  # The good images still verify (every layer, gzip and zstd).
  img pull -q "docker://$P:multi"
  img pull -q "oci:$D/lay:zst"
}

@test "truncated blob fails as a size mismatch" {
  proxy_start T "$BATS_TEST_TMPDIR/pt" "$REG_PLAIN_PORT" --truncate
  run img pull "docker://127.0.0.1:$PROXY_T_PORT/test/busybox:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"size mismatch"* ]]
  [ -z "$(ls "$C/rootfs")" ]
}

@test "oci: and oci-archive: transports; corrupt layout blob detected" {
  img pull -q "oci:$D/lay:bb"
  [ -x "$(rootfs_of "oci:$D/lay:bb")/bin/busybox" ]
  tar -C "$D/lay" -cf "$BATS_TEST_TMPDIR/arch.tar" .
  img pull -q "oci-archive:$BATS_TEST_TMPDIR/arch.tar:multi"
  [ ! -e "$(rootfs_of "oci-archive:$BATS_TEST_TMPDIR/arch.tar:multi")/data/victim" ]
  [ -z "$(ls "$C/tmp")" ]
  cp -a "$D/lay" "$BATS_TEST_TMPDIR/bad"
  layer=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"]=="zst") | .digest' \
    "$BATS_TEST_TMPDIR/bad/index.json")
  layer=$(jq -r '.layers[0].digest' "$BATS_TEST_TMPDIR/bad/blobs/sha256/${layer#sha256:}")
  f=$BATS_TEST_TMPDIR/bad/blobs/sha256/${layer#sha256:}
  printf 'X' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
  run img pull "oci:$BATS_TEST_TMPDIR/bad:zst"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$layer"* ]]
  truncate -s 1000 "$f"
  run img pull "oci:$BATS_TEST_TMPDIR/bad:zst"
  [ "$status" -ne 0 ]
}

@test "an oci-archive cannot point the reader at host files" {
  t=$BATS_TEST_TMPDIR/ev
  mkdir -p "$t/blobs/sha256"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$t/oci-layout"
  ln -s /etc/passwd "$t/index.json"
  tar -C "$t" -cf "$BATS_TEST_TMPDIR/ev.tar" .
  run img pull "oci-archive:$BATS_TEST_TMPDIR/ev.tar"
  [ "$status" -ne 0 ]
  [[ "$output" != *"root:"* ]]
  [[ "$output" == *index.json* ]]
  # A FIFO as a blob must not hang the reader.
  rm "$t/index.json"
  mkfifo "$t/blobs/sha256/$(printf %064d 0)"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%064d","size":10}]}' 0 > "$t/index.json"
  tar -C "$t" -cf "$BATS_TEST_TMPDIR/ev2.tar" .
  run timeout 10 "$SANDLOCK_OCI" pull --cache-dir "$C" "oci-archive:$BATS_TEST_TMPDIR/ev2.tar"
  [ "$status" -ne 0 ]
  [ "$status" -ne 124 ]
  [[ "$output" == *"not a regular file"* ]]
}

evil_image() { # CASE [target]
  local t=$BATS_TEST_TMPDIR
  $MK evil "$t/evil.tar" "$1" --target "${2:-/tmp}"
  $MK image "$t/evil" "$t/evil.tar" --tag e >/dev/null
}

@test "tar escapes rejected, naming the entry: .., absolute, hardlink, whiteout" {
  for c in dotdot absolute hardlink whiteout; do
    rm -rf "$BATS_TEST_TMPDIR/evil"
    evil_image $c /etc/passwd
    run img pull "oci:$BATS_TEST_TMPDIR/evil:e"
    echo "$c: $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"entry \`"* ]]
    [[ "$output" == *"escapes the rootfs"* ]]
  done
  [ ! -e "$BATS_TEST_TMPDIR/escaped" ]
  [ ! -e /tmp/escaped-abs ]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/tmp")" ]
}

@test "symlink-then-write and symlink whiteout never reach the host" {
  out=$BATS_TEST_TMPDIR/outside
  mkdir -p "$out" && echo precious > "$out/victim"
  # evil -> $out: resolved inside the rootfs, where $out does not exist.
  evil_image symlink "$out"
  run img pull "oci:$BATS_TEST_TMPDIR/evil:e"
  [ "$status" -ne 0 ]
  [[ "$output" == *"entry \`evil/escaped\`"* ]]
  [ ! -e "$out/escaped" ]
  # evil -> /: the write lands at the rootfs's top, not the host's.
  rm -rf "$BATS_TEST_TMPDIR/evil"
  evil_image symlink /
  img pull -q "oci:$BATS_TEST_TMPDIR/evil:e"
  [ ! -e /escaped ]
  [ "$(cat "$(rootfs_of "oci:$BATS_TEST_TMPDIR/evil:e")/escaped")" = pwned ]
  rm -rf "$BATS_TEST_TMPDIR/evil"
  evil_image symlink-whiteout "$out"
  img pull -q "oci:$BATS_TEST_TMPDIR/evil:e"
  [ "$(cat "$out/victim")" = precious ]
}

@test "gzip bomb bounded by the image's declared size" {
  python3 - "$BATS_TEST_TMPDIR/bomb.tar" <<'PY'
import sys, tarfile
class Z:
    def __init__(s, n): s.n = n
    def read(s, k=-1):
        k = s.n if k < 0 else min(k, s.n); s.n -= k; return b"\0" * k
ti = tarfile.TarInfo("zeros"); ti.size = 300 << 20
with tarfile.open(sys.argv[1], "w") as t: t.addfile(ti, Z(ti.size))
PY
  $MK image "$BATS_TEST_TMPDIR/bomb" "$BATS_TEST_TMPDIR/bomb.tar" --tag b >/dev/null
  rm -f "$BATS_TEST_TMPDIR/bomb.tar"
  run img pull "oci:$BATS_TEST_TMPDIR/bomb:b"
  [ "$status" -ne 0 ]
  [[ "$output" == *"decompression bomb"* ]]
  [ -z "$(ls "$C/rootfs")" ]
}

@test "concurrent pulls of one image share one rootfs" {
  pids=()
  for i in 1 2 3 4; do img pull -q "docker://$P:multi" > "$BATS_TEST_TMPDIR/o$i" 2>&1 & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p"; done
  [ "$(ls "$C/rootfs" | wc -l)" = 1 ]
  [ -z "$(ls "$C/tmp")" ]
  [ ! -e "$(rootfs_of "docker://$P:multi")/data/victim" ]
}

@test "a killed pull leaves nothing a later pull trusts" {
  proxy_start K "$BATS_TEST_TMPDIR/pk" "$REG_PLAIN_PORT" --stall
  # The binary itself in the background, so $! is the process to kill.
  "$SANDLOCK_OCI" pull --cache-dir "$C" -q "docker://127.0.0.1:$PROXY_K_PORT/test/busybox:bb" & pid=$!
  for _ in $(seq 100); do [ -n "$(ls "$C/tmp" 2>/dev/null)" ] && break; sleep 0.05; done
  kill -9 $pid; wait $pid || true
  [ -n "$(ls "$C/tmp")" ]
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/refs")" ]
  run img pull --offline "docker://127.0.0.1:$PROXY_K_PORT/test/busybox:bb"
  [ "$status" -ne 0 ]
  img pull -q "docker://$P:bb"
  [ -z "$(ls "$C/tmp")" ]
  [ -x "$(rootfs_of "docker://$P:bb")/bin/busybox" ]
}

@test "unprivileged pull and bundle: owned by the caller, rootless config" {
  require_root
  id nobody >/dev/null 2>&1 || skip "no nobody user"
  u=$(mktemp -d /tmp/sandlock-image-nobody.XXXXXX)   # bats' dirs are root-only
  echo "$u" > "$BATS_TEST_TMPDIR/nobody-dir"
  chmod 777 "$u"
  su nobody -s /bin/sh -c "HOME=$u XDG_CACHE_HOME= '$SANDLOCK_OCI' pull -q docker://$P:multi && HOME=$u '$SANDLOCK_OCI' bundle -q docker://$P:multi $u/b"
  r=$(ls -d "$u"/.cache/sandlock/images/rootfs/*)
  [ "$(stat -c %U "$r/bin/busybox")" = nobody ]
  [ ! -e "$r/data/victim" ]
  jq -e '.linux.uidMappings[0].hostID == 65534' "$u/b/config.json"
  # Device nodes: created only as root with --allow-devices (0600), skipped
  # and counted otherwise (image_content.bats has the rest).
  evil_image device
  chmod -R a+rX "$BATS_TEST_TMPDIR/evil"
  cp -a "$BATS_TEST_TMPDIR/evil" "$u/evil"
  run su nobody -s /bin/sh -c "HOME=$u '$SANDLOCK_OCI' pull --allow-devices --format json oci:$u/evil:e"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .devices_skipped)" = 1 ]
  img pull -q --allow-devices "oci:$u/evil:e"
  [ -c "$(rootfs_of "oci:$u/evil:e")/dev/null" ]
  [ "$(stat -c %a "$(rootfs_of "oci:$u/evil:e")/dev/null")" = 600 ]
  rm -rf "$u"
}

@test "offline: the cache alone" {
  img pull -q "docker://$P:bb"
  run img pull --offline "docker://127.0.0.1:1/test/busybox:bb"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not in the cache"* ]]
  run img pull --offline "docker://$P:bb" --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .cached)" = true ]
}

@test "images, inspect, rmi, prune" {
  img pull -q "docker://$P:bb"
  img pull -q "docker://$P:multi"
  run img images --format json
  [ "$(echo "$output" | jq length)" = 2 ]
  img inspect "docker://$P:bb" | jq -e '.config.Cmd == ["echo","hello from image"]'
  d=$(img images --format json | jq -r ".[] | select(.ref | endswith(\":multi\")) | .digest")
  img inspect "${d:7:12}" | jq -e .rootfs
  img rmi "$P:bb"
  [ "$(img images --format json | jq length)" = 1 ]
  [ "$(ls "$C/rootfs" | wc -l)" = 1 ]
  img rmi "docker://$P:multi"
  [ -z "$(ls "$C/rootfs")" ]
  [ -z "$(ls "$C/blobs/sha256")" ]
  run img rmi "docker://$P:multi"
  [ "$status" -ne 0 ]
  run img prune --format json
  [ "$status" -eq 0 ]
}

@test "bundle: rootfs and config.json from the image config" {
  img bundle "docker://$P:bb" "$BATS_TEST_TMPDIR/b" -q
  b=$BATS_TEST_TMPDIR/b
  [ -x "$b/rootfs/bin/busybox" ]
  jq -e '.process.args == ["echo","hello from image"]' "$b/config.json"
  jq -e '.process.user.uid == 1000 and .process.user.gid == 1000' "$b/config.json"
  jq -e '.process.user.additionalGids == [10]' "$b/config.json"
  jq -e '.annotations["org.example"] == "yes"' "$b/config.json"
  jq -e '.annotations["org.opencontainers.image.exposedPorts"] == "80/tcp"' "$b/config.json"
  img bundle "docker://$P:bb" "$BATS_TEST_TMPDIR/b2" -q -- id -u
  jq -e '.process.args == ["id","-u"]' "$BATS_TEST_TMPDIR/b2/config.json"
}

@test "bundle runs with sandlock-oci run" {
  require_root
  img bundle "docker://$P:bb" "$BATS_TEST_TMPDIR/b" -q
  ROOT=$BATS_TEST_TMPDIR/state
  run "$SANDLOCK_OCI" --root "$ROOT" run -b "$BATS_TEST_TMPDIR/b" imgtest
  [ "$status" -eq 0 ]
  [[ "$output" == *"hello from image"* ]]
}

@test "run --image pulls, bundles and runs; -- CMD replaces Cmd" {
  require_root
  ROOT=$BATS_TEST_TMPDIR/state
  run "$SANDLOCK_OCI" --root "$ROOT" run --cache-dir "$C" --image "docker://$P:bb" img1
  [ "$status" -eq 0 ]
  [[ "$output" == *"hello from image"* ]]
  run "$SANDLOCK_OCI" --root "$ROOT" run --image "docker://$P:bb" --cache-dir "$C" img2 -- id -u
  [ "$status" -eq 0 ]
  [ "$output" = 1000 ]
  [ ! -e "$ROOT/image-bundles/img2" ]
}

# The bundles `run --image` builds belong to their container: gone with it.
ibundles() { ls -A "$ROOT/image-bundles" 2>/dev/null | tr '\n' ' '; }

@test "run -d --image: delete and delete -f remove the container's image bundle" {
  require_root
  ROOT=$BATS_TEST_TMPDIR/state
  rt run -d --cache-dir "$C" --image "docker://$P:bb" d1 -- busybox sleep 100
  [ "$(rt state d1 | jq -r .status)" = running ]
  # (the rootfs is an overlay inside the container: rootfs/ is its mount point)
  [ -d "$ROOT/image-bundles/d1/rootfs" ]
  [ -f "$ROOT/image-bundles/d1/config.json" ]
  rt delete -f d1
  [ ! -e "$ROOT/image-bundles/d1" ]
  [ ! -e "$ROOT/d1" ]
  rt run -d --cache-dir "$C" --image "docker://$P:bb" d2 -- true
  for _ in $(seq 100); do [ "$(rt state d2 | jq -r .status)" = stopped ] && break; sleep 0.05; done
  [ -d "$ROOT/image-bundles/d2" ]
  rt delete d2
  [ ! -e "$ROOT/image-bundles/d2" ]
  # A symlink put in the bundle's place is removed, never followed.
  mkdir -p "$BATS_TEST_TMPDIR/victim" && echo keep > "$BATS_TEST_TMPDIR/victim/f"
  rt run -d --cache-dir "$C" --image "docker://$P:bb" d3 -- busybox sleep 100
  mv "$ROOT/image-bundles/d3" "$BATS_TEST_TMPDIR/moved"
  ln -s "$BATS_TEST_TMPDIR/victim" "$ROOT/image-bundles/d3"
  rt delete -f d3
  [ ! -L "$ROOT/image-bundles/d3" ]
  [ "$(cat "$BATS_TEST_TMPDIR/victim/f")" = keep ]
  [ -z "$(ibundles)" ]
}

@test "delete never removes a bundle the runtime did not build for that container" {
  require_root
  ROOT=$BATS_TEST_TMPDIR/state
  img bundle "docker://$P:bb" "$BATS_TEST_TMPDIR/ub" -q -- busybox sleep 100
  rt run -d -b "$BATS_TEST_TMPDIR/ub" u1
  rt delete -f u1
  [ -f "$BATS_TEST_TMPDIR/ub/config.json" ]
  # Even at the very path run --image would use, a user's bundle is the user's.
  mkdir -p "$ROOT/image-bundles"
  cp -a "$BATS_TEST_TMPDIR/ub" "$ROOT/image-bundles/u2"
  rt run -d -b "$ROOT/image-bundles/u2" u2
  rt delete -f u2
  [ -f "$ROOT/image-bundles/u2/config.json" ]
  # A container that ran from another container's image bundle leaves it alone.
  rt run -d --cache-dir "$C" --image "docker://$P:bb" owner -- busybox sleep 100
  rt run -d -b "$ROOT/image-bundles/owner" borrower
  rt delete -f borrower
  [ -f "$ROOT/image-bundles/owner/config.json" ]
  [ "$(rt state owner | jq -r .status)" = running ]
}

@test "a failed run --image leaves no bundle and never touches an existing container" {
  require_root
  ROOT=$BATS_TEST_TMPDIR/state
  rt run -d --cache-dir "$C" --image "docker://$P:bb" e1 -- busybox sleep 100
  cfg=$(cat "$ROOT/image-bundles/e1/config.json")
  ino=$(stat -c %i "$ROOT/image-bundles/e1/rootfs")
  run rt run --cache-dir "$C" --image "docker://$P:bb" e1 -- id
  [ "$status" -ne 0 ]
  [[ "$output" == *'"e1" already exists'* ]]
  [ "$(cat "$ROOT/image-bundles/e1/config.json")" = "$cfg" ]
  [ "$(stat -c %i "$ROOT/image-bundles/e1/rootfs")" = "$ino" ]
  [ "$(rt state e1 | jq -r .status)" = running ]
  # An id that is a path must not reach the file system.
  run rt run --cache-dir "$C" --image "docker://$P:bb" ../e1 -- id
  [ "$status" -ne 0 ]
  [[ "$output" == *"invalid container id"* ]]
  [ "$(rt state e1 | jq -r .status)" = running ]
  # Bad flags; a command the image lacks; the reserved name.
  run rt run --preserve-fds x --cache-dir "$C" --image "docker://$P:bb" f1
  [ "$status" -ne 0 ]
  run rt run --cache-dir "$C" --image "docker://$P:bb" f2 -- /no/such/program
  [ "$status" -ne 0 ]
  run rt run -d --cache-dir "$C" --image "docker://$P:bb" f3 -- /no/such/program
  [ "$status" -ne 0 ]
  run rt run --cache-dir "$C" --image "docker://$P:bb" image-bundles
  [ "$status" -ne 0 ]
  [ "$(ibundles)" = "e1 " ]
  [ ! -e "$ROOT/f1" ]
  [ ! -e "$ROOT/f2" ]
  [ ! -e "$ROOT/f3" ]
  # delete -f of the reserved name is a no-op, not an rm -rf of every bundle.
  rt delete -f image-bundles
  [ "$(ibundles)" = "e1 " ]
  rt delete -f e1
  [ -z "$(ibundles)" ]
}

@test "run --image cleans what killed runs left: stale bundles, build dirs, half-created state" {
  require_root
  ROOT=$BATS_TEST_TMPDIR/state
  # A run killed while it built its bundle leaves a build directory.
  mkdir -p "$ROOT/image-bundles/.run-stale1/rootfs" "$ROOT/image-bundles/.run-live1"
  # ... and one a live run is building (it holds the flock) stays.
  (exec 9<"$ROOT/image-bundles/.run-live1" 3>&-; flock 9; exec sleep 100) &
  lpid=$!
  for _ in $(seq 100); do grep -q "$(stat -c %i "$ROOT/image-bundles/.run-live1")" /proc/locks && break; sleep 0.05; done
  # A bundle left behind for an id no container has.
  mkdir -p "$ROOT/image-bundles/g1/rootfs" && : > "$ROOT/image-bundles/g1/stale"
  run rt run --cache-dir "$C" --image "docker://$P:bb" g1 -- id -u
  [ "$status" -eq 0 ]
  [ "$output" = 1000 ]
  [ "$(ibundles)" = ".run-live1 " ]
  kill "$lpid"
  wait "$lpid" || true
  rmdir "$ROOT/image-bundles/.run-live1"
  # A run killed between reserving the id and writing state.json leaves a
  # state directory without state.json: delete -f finds the record of the
  # bundle there and removes both.
  rt run -d --cache-dir "$C" --image "docker://$P:bb" h1 -- true
  for _ in $(seq 100); do [ "$(rt state h1 | jq -r .status)" = stopped ] && break; sleep 0.05; done
  rm "$ROOT/h1/state.json"
  rt delete -f h1
  [ ! -e "$ROOT/h1" ]
  [ -z "$(ibundles)" ]
}

# docker_api DIR NAME:TAG=SAVE.tar...: tests/lib/dockerapi.py on DIR/sock
# (stopped by teardown through DIR/pid).
docker_api() {
  local dir=$1; shift
  python3 "$SANDLOCK_TESTS_DIR/lib/dockerapi.py" "$dir/sock" "$@" & echo $! > "$dir/pid"
  for _ in $(seq 100); do [ -S "$dir/sock" ] && return 0; sleep 0.05; done
  echo "docker API on $dir/sock did not come up" >&2
  return 1
}

@test "docker-daemon: from a Docker API socket (legacy docker save layout)" {
  t=$BATS_TEST_TMPDIR/dd
  mkdir -p "$t/save/abc" "$t/bad/abc"
  man=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"]=="bb") | .digest' "$D/lay/index.json")
  cfg=$(jq -r .config.digest "$D/lay/blobs/sha256/${man#sha256:}")
  layer=$(jq -r '.layers[0].digest' "$D/lay/blobs/sha256/${man#sha256:}")
  # The very tar the config's diff_id names; GNU tar's own would differ.
  zcat "$D/lay/blobs/sha256/${layer#sha256:}" > "$t/save/abc/layer.tar"
  tar -C "$D/l1" -cf "$t/bad/abc/layer.tar" .
  for s in save bad; do
    cp "$D/lay/blobs/sha256/${cfg#sha256:}" "$t/$s/${cfg#sha256:}.json"
    printf '[{"Config":"%s.json","RepoTags":["busybox:latest"],"Layers":["abc/layer.tar"]}]' \
      "${cfg#sha256:}" > "$t/$s/manifest.json"
    tar -C "$t/$s" -cf "$t/$s.tar" .
  done
  docker_api "$t" busybox:latest="$t/save.tar" bad:latest="$t/bad.tar"
  DOCKER_HOST=unix://$t/sock img pull -q docker-daemon:busybox:latest
  [ -x "$(rootfs_of docker-daemon:busybox:latest)/bin/busybox" ]
  DOCKER_HOST=unix://$t/sock run img pull docker-daemon:nosuch:latest
  [ "$status" -ne 0 ]
  [[ "$output" == *"404"* ]]
  # A layer.tar that is not the one the config's diff_id names.
  DOCKER_HOST=unix://$t/sock run img pull docker-daemon:bad:latest
  [ "$status" -ne 0 ]
  [[ "$output" == *"diff_id mismatch"* ]]
}

@test "docker-daemon: Docker 25+ docker save (OCI layout beside manifest.json)" {
  t=$BATS_TEST_TMPDIR/dd
  mkdir -p "$t"
  md=$($MK docker-save "$D/lay" bb "$t/oci.tar")
  mm=$($MK docker-save "$D/lay" multi "$t/ctr.tar" --name ctr:v1 --containerd)
  $MK docker-save "$D/lay" bb "$t/bad.tar" --name bad:latest --bad-layer >/dev/null
  tar -tf "$t/oci.tar" | grep -qx manifest.json
  layer=$(tar -xOf "$t/oci.tar" "blobs/sha256/${md#sha256:}" | jq -r '.layers[0].digest')
  docker_api "$t" busybox:latest="$t/oci.tar" ctr:v1="$t/ctr.tar" bad:latest="$t/bad.tar"
  export DOCKER_HOST=unix://$t/sock
  run img pull docker-daemon:busybox:latest --format json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # Docker's own manifest, not one rebuilt from manifest.json.
  [ "$(echo "$output" | jq -r .digest)" = "$md" ]
  r=$(echo "$output" | jq -r .rootfs)
  [ -x "$r/bin/busybox" ]
  [ -L "$r/bin/sh" ]
  [ "$(head -1 "$r/etc/passwd")" = "root:x:0:0:root:/root:/bin/sh" ]
  img inspect docker-daemon:busybox:latest | jq -e '.config.Cmd == ["echo","hello from image"] and .config.User == "user"'
  [ -z "$(ls "$C/tmp")" ]
  # The containerd image store's save: index.json names an image index.
  run img pull docker-daemon:ctr:v1 --format json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(echo "$output" | jq -r .digest)" = "$mm" ]
  [ "$(echo "$output" | jq -r .platform)" = linux/amd64 ]
  r=$(echo "$output" | jq -r .rootfs)
  [ ! -e "$r/data/victim" ]
  [ ! -e "$r/opq/old" ]
  [ "$(cat "$r/opq/new")" = new ]
  [ "$(stat -c %i "$r/data/a")" = "$(stat -c %i "$r/data/b")" ]
  # A layer blob whose bytes do not hash to its name (a fresh cache: the
  # good layer is in this one).
  rm -rf "$C"
  run img pull docker-daemon:bad:latest
  [ "$status" -ne 0 ]
  [[ "$output" == *"$layer"*"digest mismatch"* ]]
  [ "$(img images --format json | jq length)" = 0 ]
  [ -z "$(ls "$C/tmp")" ]
}

# What a Docker daemon leaves on a host: its fixed paths (/run/docker is
# made whatever --exec-root says; key.json lands next to the config file,
# /etc/docker by default), and mounts.
host_docker_traces() {
  find /run/docker /run/docker.sock /etc/docker /var/lib/docker /root/.docker \
    -printf '%p %i %y %s %T@\n' 2>/dev/null | sort
  awk '{ print $5 }' /proc/self/mountinfo | sort
}

# dockerd (vfs storage) on private roots under $ENG_DIR, in the private
# mount namespace tests/lib/engines.bash gives every engine (a tmpfs over
# its /run), so nothing it makes outside $ENG_DIR reaches the host.
private_dockerd_start() {
  mkdir -p "$ENG_DIR"/{cwd,cli}
  engine_mntns || return 1
  # Its identity key goes to /etc/docker/key.json unless told (20.10).
  printf '{"deprecated-key-path": "%s/key.json"}\n' "$ENG_DIR" > "$ENG_DIR/daemon.json"
  in_ns /usr/sbin/dockerd --config-file "$ENG_DIR/daemon.json" \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --bridge=none --userland-proxy=false --storage-driver=vfs \
    -H "unix://$ENG_DIR/docker.sock" --data-root "$ENG_DIR/root" \
    --exec-root "$ENG_DIR/exec" --pidfile "$ENG_DIR/dockerd.pid" \
    </dev/null >"$ENG_DIR/log" 2>&1 3>&- &
  echo $! > "$ENG_DIR/dockerd.ppid"
  _wait_for 'dk version' 300 || { tail -5 "$ENG_DIR/log"; return 1; }
}

# Stops it by pid (it removes its pid file when done), then whatever is
# left in its mount namespace, and the namespace.
private_dockerd_stop() {
  local p
  p=$(cat "$ENG_DIR/dockerd.ppid" 2>/dev/null) && kill "$p" 2>/dev/null
  for _ in $(seq 200); do [ -e "$ENG_DIR/dockerd.pid" ] || break; sleep 0.05; done
  engine_mntns_stop
  rm -f "$ENG_DIR/ns.pid"
}

@test "docker-daemon: from a real dockerd on a private socket" {
  require_root
  [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || skip "Debian's docker.io (dockerd) not installed"
  before=$(host_docker_traces)
  export ENG_DIR=$BATS_TEST_TMPDIR/dockerd
  private_dockerd_start
  tar -C "$D/l1" -cf - . | dk import -c 'CMD ["echo","hi"]' - sandlock-test/bb:v1 >/dev/null
  DOCKER_HOST=unix://$ENG_DIR/docker.sock img pull -q docker-daemon:sandlock-test/bb:v1
  r=$(rootfs_of docker-daemon:sandlock-test/bb:v1)
  [ -x "$r/bin/busybox" ]
  [ "$(cat "$r/data/victim")" = gone ]
  img inspect docker-daemon:sandlock-test/bb:v1 | jq -e '.config.Cmd == ["echo","hi"]'
  DOCKER_HOST=unix://$ENG_DIR/docker.sock run img pull docker-daemon:sandlock-test/none:v1
  [ "$status" -ne 0 ]
  [[ "$output" == *"404"* ]]
  private_dockerd_stop
  [ "$(host_docker_traces)" = "$before" ]
}

@test "bad option values are refused before any network use, naming the option" {
  for v in 3x 0 17 ''; do
    run "$SANDLOCK_OCI" pull --jobs "$v" docker://127.0.0.1:1/nothing
    [ "$status" -eq 1 ]
    [[ "$output" == *"--jobs: expected 1..16"* ]]
  done
  run "$SANDLOCK_OCI" bundle --tls-verify=maybe docker://127.0.0.1:1/x "$BATS_TEST_TMPDIR/b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"--tls-verify: expected true or false"* ]]
  run "$SANDLOCK_OCI" images --bogus
  [ "$status" -eq 1 ]
  [[ "$output" == *"images: unknown option"* ]]
}

@test "container commands load no image library; a pull loads libcurl" {
  command -v readelf >/dev/null || skip "readelf missing"
  # Linked: only what every command needs (image/dl.h says why).
  run bash -c "readelf -d '$SANDLOCK_OCI' | awk '/NEEDED/ { gsub(/[][]/, \"\", \$5); print \$5 }' | sort | tr '\n' ' '"
  [ "$output" = "libc.so.6 libcap.so.2 libseccomp.so.2 libyajl.so.2 " ]
  # Loaded: a container-side command maps none of them at run time ...
  LD_DEBUG=libs "$SANDLOCK_OCI" spec --bundle "$BATS_TEST_TMPDIR" 2> "$BATS_TEST_TMPDIR/ld"
  grep -q 'libseccomp' "$BATS_TEST_TMPDIR/ld"
  run grep -E 'lib(curl|archive|crypto|isal|zstd|z)\.so' "$BATS_TEST_TMPDIR/ld"
  [ "$status" -eq 1 ]
  # ... while a pull maps libcurl on its first request (refused here: port 1).
  LD_DEBUG=libs "$SANDLOCK_OCI" pull -q --cache-dir "$BATS_TEST_TMPDIR/c" \
    docker://127.0.0.1:1/nothing 2> "$BATS_TEST_TMPDIR/ld2" || true
  grep -q 'libcurl\.so' "$BATS_TEST_TMPDIR/ld2"
}
