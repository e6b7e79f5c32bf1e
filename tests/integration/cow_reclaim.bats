#!/usr/bin/env bats
# A create killed after it mounted a branch's quota tmpfs and before it
# wrote the id's record (docs/cow.md "Quota", crash and restart): `delete
# -f ID` and the next create of the id find what it left, with the default
# storage and with run.oci.sandlock.cow.storage, and unmount only a tmpfs
# that create mounted.  The kill is real: strace holds the runtime at the
# exit of its mount(2) (the tmpfs is mounted) and the test SIGKILLs it.

load ../lib/common
load ../lib/cow

setup_file() { common_setup_file; }

setup() {
  cow_common_setup
  command -v strace >/dev/null || skip "no strace to hold the create"
  HOST=$BATS_TEST_TMPDIR/host
  STORE=$BATS_TEST_TMPDIR/store
  mkdir -p "$HOST" "$STORE"
  chmod 755 "$BATS_TEST_TMPDIR"
  echo old > "$HOST/f"
  cfg ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$HOST\",\"options\":[\"bind\",\"cow\"]}]"
  ann max_disk 1m
  # the cow mount's index in mounts[] names its storage
  N=$(jq '.mounts | length - 1' "$BUNDLE/config.json")
}

teardown() {
  [ -n "${SPID:-}" ] && kill -9 "$SPID" 2>/dev/null
  common_teardown
  grep -o " $BATS_TEST_TMPDIR/[^ ]*" /proc/self/mountinfo 2>/dev/null \
    | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  true
}

no_mounts() { ! grep -q " $BATS_TEST_TMPDIR/" /proc/self/mountinfo; }

# create $(cid), SIGKILLed while strace holds it just after the mount(2)
# of the quota tmpfs at $1/quota.
killed_create() {
  local q=$1/quota runtime=""
  strace -f -o /dev/null -e trace=mount -e inject=mount:delay_exit=30000000 \
    "$SANDLOCK_OCI" --root "$ROOT" create -b "$BUNDLE" "$(cid)" \
    >/dev/null 2>&1 &
  SPID=$!
  for _ in $(seq 200); do
    grep -q " $q " /proc/self/mountinfo && break
    sleep 0.05
  done
  grep -q " $q " /proc/self/mountinfo
  runtime=$(cat /proc/$SPID/task/$SPID/children)
  [ -n "$runtime" ]
  kill -9 $runtime
  wait "$SPID" || true
  SPID=
  # what the kill left: the tmpfs, and no record
  grep -q " $q " /proc/self/mountinfo
  [ ! -e "$ROOT/cow-branches/$(cid)/record" ]
}

@test "reclaim: delete -f after a create killed with its quota tmpfs mounted (storage annotation)" {
  ann storage "$STORE"
  killed_create "$STORE/$(cid).$N"
  run rt delete -f "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  no_mounts
  [ ! -e "$STORE/$(cid).$N" ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  # the id is usable again, with the same storage
  cmd sh -c 'cat /data/f; echo new > /data/f'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = old ]
  [ "$(cat "$HOST/f")" = new ]
  no_mounts
  [ -z "$(ls "$STORE")" ]
}

@test "reclaim: delete -f after a create killed with its quota tmpfs mounted (default storage)" {
  killed_create "$ROOT/cow-branches/$(cid)/$N"
  run rt delete -f "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  no_mounts
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  # a container without cow branches: delete has nothing to say
  cfg '.mounts |= map(select(.options | index("cow") | not))
    | del(.annotations)'
  rt create -b "$BUNDLE" "$(cid)"
  run rt delete "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "reclaim: the next create of the id reclaims a killed create's tmpfs under the storage annotation" {
  ann storage "$STORE"
  killed_create "$STORE/$(cid).$N"
  # the id's state went some other way (a delete -f of an older runtime)
  rm -rf "${ROOT:?}/$(cid)"
  cmd sh -c 'cat /data/f'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = old ]
  no_mounts
  [ -z "$(ls "$STORE")" ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
}

@test "reclaim: a tmpfs that create did not mount is never unmounted" {
  ann storage "$STORE"
  killed_create "$STORE/$(cid).$N"
  # someone else's tmpfs where the dead create's was
  umount "$STORE/$(cid).$N/quota"
  mount -t tmpfs -o size=1m tmpfs "$STORE/$(cid).$N/quota"
  echo theirs > "$STORE/$(cid).$N/quota/x"
  run rt delete -f "$(cid)"
  echo "$output"
  [[ "$output" == *"$STORE/$(cid).$N"*"not provably"* ]]
  grep -q " $STORE/$(cid).$N/quota " /proc/self/mountinfo
  [ "$(cat "$STORE/$(cid).$N/quota/x")" = theirs ]
  # and the next create of the id says so rather than taking it
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not provably"* ]]
  [ "$(cat "$STORE/$(cid).$N/quota/x")" = theirs ]
  umount "$STORE/$(cid).$N/quota"
}
