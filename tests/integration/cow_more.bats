#!/usr/bin/env bats
# More of cow/ (docs/cow.md): conflicts with host-side deletes, the image
# cache pinned under the containers whose lower it is, rootless run
# --image with an overlay, and the copy fallback where overlayfs cannot
# hold the upper.

load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || skip "no overlayfs in this kernel"
  common_setup
}

teardown() { common_teardown; }

ann() { cfg ".annotations[\"run.oci.sandlock.cow.$1\"]=\"$2\""; }
tree() { (cd "$1" && find . -printf '%p %y %m %s\n' | sort; \
          find . -type f -exec sha256sum {} + | sort); }

# An image in an OCI layout, built here: busybox and a few files.
make_image() {
  command -v python3 >/dev/null || skip "python3 missing"
  local l=$BATS_TEST_TMPDIR/l1 a
  mkdir -p "$l"/{bin,etc,data/sub}
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh ls cat echo true rm mv chmod mkdir touch grep sleep id; do
    ln -s busybox "$l/bin/$a"
  done
  echo orig > "$l/data/f"; echo deep > "$l/data/sub/g"; echo h > "$l/etc/hosts"
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$BATS_TEST_TMPDIR/lay" \
    "$l" --tag "${1:-t}" >/dev/null
  IMG="oci:$BATS_TEST_TMPDIR/lay:${1:-t}"
  CACHE=${CACHE:-$BATS_TEST_TMPDIR/cache}
}
cache_tree() { tree "$(echo "$CACHE"/rootfs/*)"; }

@test "cow conflicts: host-side deletes and retypes of paths the branch changed" {
  HOST=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOST/d" "$HOST/quiet"
  echo m > "$HOST/mod"; echo g > "$HOST/gone"; echo i > "$HOST/d/in"
  echo r > "$HOST/retyped"; echo q > "$HOST/quiet/q"
  cfg_in "$BUNDLE" ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$HOST\",\"options\":[\"bind\",\"cow\"]}]"
  ann on_exit defer
  cmd sh -c 'echo 1 >> /data/mod; rm /data/gone; echo 1 >> /data/d/in; echo 1 >> /data/retyped; echo 1 >> /data/quiet/q'
  rt run -b "$BUNDLE" "$(cid)" 2>/dev/null
  # the host, meanwhile: deletes what the branch modified or deleted too,
  # a directory the branch wrote in, and makes a file a directory
  rm "$HOST/mod" "$HOST/gone" "$HOST/retyped"
  rm -r "$HOST/d"
  mkdir "$HOST/retyped"
  run rt commit "$(cid)"
  echo "$output"
  [ "$status" -ne 0 ]
  for p in mod gone d retyped; do
    [[ "$output" == *"conflict: $HOST/$p"* ]]
  done
  [[ "$output" != *"conflict: $HOST/quiet"* ]]
  # nothing was merged; the branch is still there to decide
  [ ! -e "$HOST/mod" ] && [ ! -e "$HOST/d" ] && [ "$(cat "$HOST/quiet/q")" = q ]
  rt commit --force "$(cid)"
  [ "$(cat "$HOST/mod")" = "$(printf 'm\n1')" ]
  [ "$(cat "$HOST/quiet/q")" = "$(printf 'q\n1')" ]
}
