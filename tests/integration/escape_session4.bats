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
# Runs "$@" as nobody (another local user).
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
