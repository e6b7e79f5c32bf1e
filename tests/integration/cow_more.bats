#!/usr/bin/env bats
# More of cow/ (docs/cow.md): conflicts with host-side deletes, the image
# cache pinned under the containers whose lower it is, rootless run
# --image with an overlay, and the copy fallback where overlayfs cannot
# hold the upper.

load ../lib/common
load ../lib/cow

setup_file() { common_setup_file; }

setup() {
  cow_common_setup
}

teardown() {
  # the copy-fallback test's --root on an overlayfs mount
  if [ -n "${OVROOT:-}" ]; then
    for id in $("$SANDLOCK_OCI" --root "$OVROOT" list -q 2>/dev/null); do
      "$SANDLOCK_OCI" --root "$OVROOT" delete -f "$id" >/dev/null 2>&1 || true
    done
    umount "$OVROOT" 2>/dev/null || true
  fi
  [ -z "${RL:-}" ] || rm -rf "$RL"
  common_teardown
}


# An image in an OCI layout, built here: busybox and a few files.
make_image() {
  command -v python3 >/dev/null || skip "python3 missing"
  local l=$BATS_TEST_TMPDIR/l1 a
  mkdir -p "$l"/{bin,etc,data/sub}
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh ls cat echo true rm mv chmod mkdir touch grep sleep id; do
    ln -sf busybox "$l/bin/$a"
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
  mkdir -p "$HOST/d" "$HOST/quiet" "$HOST/remade"
  echo m > "$HOST/mod"; echo g > "$HOST/gone"; echo i > "$HOST/d/in"
  echo r > "$HOST/retyped"; echo q > "$HOST/quiet/q"
  cfg_in "$BUNDLE" ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$HOST\",\"options\":[\"bind\",\"cow\"]}]"
  ann on_exit defer
  cmd sh -c 'echo 1 >> /data/mod; rm /data/gone; echo 1 >> /data/d/in; echo 1 >> /data/retyped; echo 1 >> /data/quiet/q; echo n > /data/remade/n'
  rt run -b "$BUNDLE" "$(cid)" 2>/dev/null
  # the host, meanwhile: deletes what the branch modified or deleted too,
  # a directory the branch wrote in, makes a file a directory, and
  # deletes and makes again a directory the branch added to
  rm "$HOST/mod" "$HOST/gone" "$HOST/retyped"
  rm -r "$HOST/d" "$HOST/remade"
  mkdir "$HOST/retyped" "$HOST/remade"
  run rt commit "$(cid)"
  echo "$output"
  [ "$status" -ne 0 ]
  for p in mod gone d retyped remade; do
    [[ "$output" == *"conflict: $HOST/$p"* ]]
  done
  [[ "$output" != *"conflict: $HOST/quiet"* ]]
  # nothing was merged; the branch is still there to decide
  [ ! -e "$HOST/mod" ]
  [ ! -e "$HOST/d" ]
  [ "$(cat "$HOST/quiet/q")" = q ]
  rt commit --force "$(cid)"
  [ "$(cat "$HOST/mod")" = "$(printf 'm\n1')" ]
  [ "$(cat "$HOST/quiet/q")" = "$(printf 'q\n1')" ]
}

@test "image pins: rmi refuses the lower of a running or stopped container, naming it" {
  make_image
  rt run -d --image "$IMG" --cache-dir "$CACHE" "$(cid a)" -- sleep 100
  rt run --keep --image "$IMG" --cache-dir "$CACHE" "$(cid b)" -- true
  before=$(cache_tree)
  run rt rmi --cache-dir "$CACHE" "$IMG"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"in use by"*"container $(cid a)"* ]]
  [[ "$output" == *"container $(cid b)"* ]]
  [[ "$output" == *"nothing removed"* ]]
  [ "$(cache_tree)" = "$before" ]
  [ -n "$(rt images --cache-dir "$CACHE" -q)" ]
  # the container still sees its image
  [ "$(rt exec "$(cid a)" cat /data/f)" = orig ]
  rt delete -f "$(cid a)"
  run rt rmi --cache-dir "$CACHE" "$IMG"
  [ "$status" -ne 0 ]
  [[ "$output" == *"container $(cid b)"* ]]
  [[ "$output" != *"$(cid a)"* ]]
  # delete releases the pin: a stopped container's too
  rt delete "$(cid b)"
  rt rmi --cache-dir "$CACHE" "$IMG"
  [ -z "$(ls "$CACHE/rootfs")" ]
}

@test "image pins: prune keeps an unreferenced rootfs a container uses, and says so" {
  make_image t
  rt run -d --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sleep 100
  old=$(basename "$(echo "$CACHE"/rootfs/*)")
  # the tag moves to another image: the running container's rootfs is
  # referenced by no record any more
  echo other > "$BATS_TEST_TMPDIR/l1/data/f"
  make_image t
  rt pull --cache-dir "$CACHE" "$IMG" >/dev/null
  [ "$(ls "$CACHE/rootfs" | wc -l)" = 2 ]
  run rt prune --cache-dir "$CACHE"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"kept rootfs $old (in use by container $(cid))"* ]]
  [ -d "$CACHE/rootfs/$old" ]
  [ "$(rt exec "$(cid)" cat /data/f)" = orig ]
  run rt prune --cache-dir "$CACHE" --format json
  [ "$(jq -r '.kept[0]' <<<"$output")" = "$old (in use by container $(cid))" ]
  rt delete -f "$(cid)"
  run rt prune --cache-dir "$CACHE"
  [[ "$output" != *kept* ]]
  [ ! -e "$CACHE/rootfs/$old" ]
  [ "$(ls "$CACHE/rootfs" | wc -l)" = 1 ]
}

@test "image pins: a pin whose holder is gone, or names another pin, is stale" {
  make_image
  rt run -d --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sleep 100
  [ -f "$ROOT/$(cid)/image-pin" ]
  [ "$(ls "$CACHE"/pins/*/ | wc -l)" = 1 ]
  # the holder's record lost (a state directory removed by hand, a crash
  # between the two): the pin no longer counts, and the sweep drops it
  cp "$ROOT/$(cid)/image-pin" "$BATS_TEST_TMPDIR/pin"
  rm "$ROOT/$(cid)/image-pin"
  rt rmi --cache-dir "$CACHE" "$IMG"
  [ -z "$(ls "$CACHE/rootfs")" ]
  [ -z "$(ls "$CACHE/pins")" ]
  rt delete -f "$(cid)"
  # a holder at the same path that names another pin is not the old one
  make_image
  rt run -d --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sleep 100
  hex=$(basename "$(echo "$CACHE"/rootfs/*)")
  printf 'holder=%s\nname=container old\n' "$ROOT/$(cid)/image-pin" \
    > "$CACHE/pins/$hex/0123456789abcdef0123456789abcdef"
  run rt rmi --cache-dir "$CACHE" "$IMG"
  [ "$status" -ne 0 ]
  [[ "$output" == *"in use by container $(cid)"* ]]
  [[ "$output" != *"container old"* ]]
  [ ! -e "$CACHE/pins/$hex/0123456789abcdef0123456789abcdef" ]
  rt delete -f "$(cid)"
  [ -z "$(ls "$CACHE/pins/$hex")" ]
}

@test "cow rootless: run --image mounts the cached rootfs as an overlay lower; the cache is never written" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null \
    || skip "unprivileged user namespaces are not available"
  command -v python3 >/dev/null || skip "python3 missing"
  RL=$(mktemp -d /tmp/sandlock-cowmore.XXXXXX)
  chmod 755 "$RL"
  BATS_TEST_TMPDIR=$RL make_image
  chown -R nobody:nogroup "$RL"
  nb() { su nobody -s /bin/sh -c "HOME=$RL $SANDLOCK_OCI --root $RL/state $*"; }
  nb pull --cache-dir "$RL/cache" "oci:$RL/lay:t" >/dev/null
  CACHE=$RL/cache
  before=$(cache_tree)
  run nb check
  [[ "$output" == *"overlay userxattr: yes"* ]]
  [[ "$output" == *"run --image rootfs: overlay over the cached rootfs"* ]]
  run nb run --image "oci:$RL/lay:t" --cache-dir "$RL/cache" rl1 -- sh -c \
    "'grep -c \" / / .* - overlay overlay .*userxattr\" /proc/self/mountinfo; echo w > /data/f; echo n > /data/new; rm /etc/hosts; rm -r /data/sub; mv /bin/ls /bin/ls2; chmod 700 /data; cat /data/f'"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"copying"* ]]
  [ "${lines[0]}" = 1 ]
  [ "${lines[-1]}" = w ]
  [ "$(cache_tree)" = "$before" ]
  # the layer and the pin went with the container
  [ ! -e "$RL/state/rl1" ]
  [ -z "$(ls "$RL/cache/pins/"*/ 2>/dev/null)" ]
}

@test "cow: where overlayfs refuses the upper (--root on an overlayfs), one warning, a copy, the cache untouched" {
  make_image
  rt pull --cache-dir "$CACHE" "$IMG" >/dev/null
  before=$(cache_tree)
  ov=$BATS_TEST_TMPDIR/ov
  mkdir -p "$ov"/{l,u,w,m}
  mount -t overlay overlay -o "lowerdir=$ov/l,upperdir=$ov/u,workdir=$ov/w" "$ov/m" \
    || skip "cannot mount an overlayfs here"
  OVROOT=$ov/m
  ort() { "$SANDLOCK_OCI" --root "$OVROOT" "$@"; }
  ort run -d --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sh -c \
    'echo w > /data/f; rm /etc/hosts; echo done > /data/done; exec sleep 100' \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/err"
  cat "$BATS_TEST_TMPDIR/err"
  [ "$(grep -c . "$BATS_TEST_TMPDIR/err")" = 1 ]
  grep -q "copying the rootfs lower \`$(echo "$CACHE"/rootfs/*)\`: overlayfs refused the layer: .*not supported as upperdir" "$BATS_TEST_TMPDIR/err"
  for _ in $(seq 200); do
    [ -e "$OVROOT/$(cid)/rootfs/root/data/done" ] && break
    sleep 0.05
  done
  # the container works on a copy of its own, under its state directory
  [ "$(ort exec "$(cid)" cat /data/f)" = w ]
  [ "$(cat "$OVROOT/$(cid)/rootfs/root/data/f")" = w ]
  [ ! -e "$OVROOT/$(cid)/layer" ]
  # (its / is a bind of that copy: an overlayfs only because the --root is)
  mi=$(ort exec "$(cid)" cat /proc/self/mountinfo | awk '$5 == "/"')
  [[ "$mi" != *layer/upper* ]]
  [[ "$mi" != *"$CACHE"* ]]
  [ "$(cache_tree)" = "$before" ]
  # a copy holds no pin: the image can go while it runs
  [ -z "$(ls "$CACHE/pins/"*/ 2>/dev/null)" ]
  ort delete -f "$(cid)"
  [ ! -e "$OVROOT/$(cid)" ]
  [ "$(cache_tree)" = "$before" ]
}

@test "image pins: a pin or holder that is a FIFO does not hang rmi or prune; it keeps the tree" {
  make_image
  rt pull --cache-dir "$CACHE" "$IMG" >/dev/null
  hex=$(basename "$(echo "$CACHE"/rootfs/*)")
  mkdir -p "$CACHE/pins/$hex"
  mkfifo "$BATS_TEST_TMPDIR/holder"
  printf 'holder=%s\nname=container fifo\n' "$BATS_TEST_TMPDIR/holder" \
    > "$CACHE/pins/$hex/0123456789abcdef0123456789abcdef"
  mkfifo "$CACHE/pins/$hex/fedcba9876543210fedcba9876543210"
  # a reader that opened either FIFO blocking would wait for a writer forever
  run timeout 20 "$SANDLOCK_OCI" --root "$ROOT" rmi --cache-dir "$CACHE" "$IMG"
  echo "$output"
  [ "$status" -ne 124 ]
  [ "$status" -ne 0 ]
  [[ "$output" == *"in use by container fifo"* ]]
  [ -d "$CACHE/rootfs/$hex" ]
}
