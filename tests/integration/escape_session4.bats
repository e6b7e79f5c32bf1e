#!/usr/bin/env bats
# Escape probes against session 4's work: cow quota and storage, image
# pins, the premade overlay fd, checkpoint's libraries.  Each test performs
# the attack and checks that the host is untouched.

load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  common_setup
  ATT=
}

teardown() {
  common_teardown
  # a failed test must not leave a mount of its own on the host
  for d in "$BATS_TEST_TMPDIR" ${ATT:+"$ATT"}; do
    grep -o " $d/[^ ]*" /proc/self/mountinfo 2>/dev/null \
      | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  done
  [ -z "$ATT" ] || rm -rf "$ATT"
  true
}

ann() { cfg ".annotations[\"run.oci.sandlock.cow.$1\"]=\"$2\""; }
# Runs "$@" as nobody (another local user).  setpriv resolves the program
# with root's path access: run paths that matter through a shell.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# The storage annotation names a directory another local user can write:
# that user renames the root-owned branch directory away and puts one of
# their own in its place, with a meta naming any host directory as the
# lower; the next commit (by root) merges their upper into it.
@test "escape: cow storage in a directory another user can write is refused" {
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || skip "no overlayfs in this kernel"
  ATT=$(mktemp -d /tmp/sl-audit-att.XXXXXX)
  chown 65534:65534 "$ATT"
  chmod 0755 "$ATT"
  victim=$BATS_TEST_TMPDIR/victim
  mkdir -m 0700 "$victim" "$BATS_TEST_TMPDIR/host"
  cfg ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$BATS_TEST_TMPDIR/host\",\"options\":[\"bind\",\"cow\"]}]"
  ann storage "$ATT"
  ann on_exit keep
  cmd sh -c 'echo x > /data/f'
  run rt run -b "$BUNDLE" "$(cid)"
  if [ "$status" -eq 0 ]; then
    # the attack: a branch record of the attacker's at the same name
    b=$(basename "$(echo "$ATT"/"$(cid)".*)")
    as_nobody sh -c "mv '$ATT/$b' '$ATT/old' && mkdir -p '$ATT/$b/upper' \
      '$ATT/$b/work' && printf 'lower=%s\ncreated=0.0\nstate=kept\n' \
      '$victim' > '$ATT/$b/meta' && echo pwned > '$ATT/$b/upper/pwned'"
    rt commit "$(cid)" || true
    [ ! -e "$victim/pwned" ]
    false # the create should have been refused
  fi
  [[ "$output" == *"run.oci.sandlock.cow.storage"* ]]
  [[ "$output" == *"$ATT"* ]]
  [ -z "$(ls -A "$ATT")" ]
  [ ! -e "$ROOT/$(cid)" ]
  # the caller's own directory, and one in a sticky world-writable
  # directory (/tmp: nobody may rename root's entries there), stay usable
  mkdir -m 0700 "$BATS_TEST_TMPDIR/mine"
  ann storage "$BATS_TEST_TMPDIR/mine"
  ann on_exit abort
  rt run -b "$BUNDLE" "$(cid)2"
  ann storage /tmp
  rt run -b "$BUNDLE" "$(cid)3"
}

# The copy fallback (overlayfs refuses the layer, here for a --root on an
# overlayfs) put the container's root at ROOT/ID/rootfs: the state
# directory is 0711 and the copy's root takes the image root's mode
# (0755), so a setuid-root program the container made there ran as root
# for any local user who could reach --root.
@test "escape: the copy-fallback rootfs cannot be reached by another user" {
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || skip "no overlayfs in this kernel"
  command -v python3 >/dev/null || skip "python3 missing"
  local l=$BATS_TEST_TMPDIR/l1 a
  mkdir -p "$l"/{bin,etc}
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh chmod sleep; do ln -sf busybox "$l/bin/$a"; done
  # exits 0 when it runs as root
  printf '#include <unistd.h>\nint main(void){return geteuid()!=0;}\n' \
    > "$BATS_TEST_TMPDIR/euid.c"
  cc -static -o "$l/bin/euid" "$BATS_TEST_TMPDIR/euid.c" 2>/dev/null \
    || skip "no static C toolchain"
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$BATS_TEST_TMPDIR/lay" \
    "$l" --tag t >/dev/null
  ATT=$(mktemp -d /tmp/sl-audit-ov.XXXXXX)
  chmod 0755 "$ATT"
  mkdir -p "$ATT"/{l,u,w,m}
  mount -t overlay overlay -o "lowerdir=$ATT/l,upperdir=$ATT/u,workdir=$ATT/w" \
    "$ATT/m" || skip "cannot mount an overlayfs here"
  ort() { "$SANDLOCK_OCI" --root "$ATT/m" "$@"; }
  ort run -d --image "oci:$BATS_TEST_TMPDIR/lay:t" \
    --cache-dir "$BATS_TEST_TMPDIR/cache" "$(cid)" -- sh -c \
    'chmod 4755 /bin/euid && exec sleep 100' \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/err" || {
      cat "$BATS_TEST_TMPDIR/err"; false; }
  grep -q "copying the rootfs lower" "$BATS_TEST_TMPDIR/err"
  s=
  for _ in $(seq 100); do
    s=$(find "$ATT/m/$(cid)" -name euid -perm -4000 2>/dev/null | head -n1)
    [ -n "$s" ] && break
    sleep 0.05
  done
  [ -n "$s" ]
  [ "$(stat -c %u "$s")" = 0 ]
  "$s" # root runs it as root: the test can tell
  # the container runs on, its non-root users too ...
  [ "$(ort exec "$(cid)" sh -c 'echo ok')" = ok ]
  [ "$(ort exec --user 1000:1000 "$(cid)" sh -c 'echo ok')" = ok ]
  # ... and another local user cannot run the program as root
  # (exec'd by a shell: setpriv's own exec still has root's path access)
  run as_nobody sh -c 'exec "$0"' "$s"
  [ "$status" -ne 0 ]
  ort delete -f "$(cid)"
  umount "$ATT/m"
}
