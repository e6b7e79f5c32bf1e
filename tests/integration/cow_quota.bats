#!/usr/bin/env bats
# run.oci.sandlock.cow.max_disk (docs/cow.md "Quota"): each cow layer's
# upper is on a tmpfs of that size, so the write that would cross the limit
# fails with ENOSPC in the writing process; a branch that stays (keep,
# defer) moves to disk and its tmpfs goes; commit and abort work straight
# from the tmpfs; nothing stays mounted.

load ../lib/common
load ../lib/cow

setup_file() { common_setup_file; }

setup() {
  cow_common_setup
  HOST=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOST/d"
  echo old > "$HOST/f"
  echo gone > "$HOST/g"
  cfg ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$HOST\",\"options\":[\"bind\",\"cow\"]}]"
}

teardown() {
  common_teardown
  # a failed test must not leave its quota mounted on the host
  grep -o " $BATS_TEST_TMPDIR/[^ ]*" /proc/self/mountinfo 2>/dev/null \
    | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  true
}

# Nothing of this test is mounted any more.
no_mounts() { ! grep -q " $BATS_TEST_TMPDIR/" /proc/self/mountinfo; }
storage() { echo "$ROOT"/cow-branches/"$1"/[0-9]*; }
wait_for() {
  for _ in $(seq 200); do
    [ -e "$1" ] && return 0
    sleep 0.05
  done
  return 1
}
wait_stopped() {
  for _ in $(seq 100); do
    [ "$(rt state "$1" | jq -r .status)" = stopped ] && return 0
    sleep 0.05
  done
  return 1
}

# The shell opens the file (fd 3) before dd writes: the open succeeds, and
# only the write that crosses the limit fails, in dd.
DD='exec 3>/data/big || { echo "open failed"; exit 9; }; dd if=/dev/zero bs=4096 count=1000 >&3; echo "dd=$?"; wc -c < /data/big'

@test "quota: the write that crosses max_disk fails with ENOSPC in the writer, not at open" {
  ann max_disk 1m
  ann on_exit abort
  cmd sh -c "$DD"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"open failed"* ]]
  [[ "$output" == *"error writing"*"No space left on device"* ]]
  # every byte up to the limit was written, not one more
  [[ "$output" == *"256+0 records out"* ]]
  [[ "$output" == *"dd=1"* ]]
  [[ "$output" == *$'\n1048576'* ]]
  [ ! -e "$HOST/big" ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
}

@test "quota: while the container runs its upper is a tmpfs of max_disk bytes" {
  ann max_disk 512k
  cmd sh -c 'echo run > /data/f; exec sleep 100'
  rt create -b "$BUNDLE" "$(cid)"
  rt start "$(cid)"
  s=$(storage "$(cid)")
  wait_for "$s/quota/upper/f"
  [ "$(stat -f -c %T "$s/quota")" = tmpfs ]
  [ "$(( $(stat -f -c '%b * %S' "$s/quota") ))" -eq 524288 ]
  grep -q " $s/quota " /proc/self/mountinfo
  grep -q "^max_disk=524288$" "$s/meta"
  grep -q "^quota=tmpfs$" "$s/meta"
  rt delete -f "$(cid)"
}

@test "quota: a branch under its limit commits normally" {
  ann max_disk 1m
  cmd sh -c 'echo new > /data/f; rm /data/g; mkdir /data/d/x; echo n > /data/d/x/y'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/f")" = new ]
  [ ! -e "$HOST/g" ]
  [ "$(cat "$HOST/d/x/y")" = n ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
  run rt branches
  [ "${#lines[@]}" -eq 1 ]
}

@test "quota: a deferred branch leaves its tmpfs, outlives delete, and commits later" {
  ann max_disk 1m
  cmd sh -c 'echo engine > /data/f; rm /data/g; exec sleep 100'
  rt create -b "$BUNDLE" "$(cid)"
  rt start "$(cid)"
  s=$(storage "$(cid)")
  wait_for "$s/quota/upper/f"
  rt kill "$(cid)" KILL
  wait_stopped "$(cid)"
  # reaped by the caller: exit status unknown, on_exit and on_error
  # differ, so delete defers the branch
  run rt delete "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"deferred branch"* ]]
  no_mounts
  grep -q "^quota=disk$" "$s/meta"
  [ "$(cat "$s/upper/f")" = engine ]
  [ "$(cat "$HOST/f")" = old ]
  run rt branches
  [[ "$output" == *"$(cid)"*deferred*/data* ]]
  run rt changes --format json "$(cid)"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.[0].max_disk' <<<"$output")" = 1048576 ]
  [ "$(jq -r '.[0].changes[] | select(.path=="g") | .op' <<<"$output")" = deleted ]
  [ "$(jq -r '.[0].changes[] | select(.path=="f") | .op' <<<"$output")" = modified ]
  rt commit "$(cid)"
  [ "$(cat "$HOST/f")" = engine ]
  [ ! -e "$HOST/g" ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
}

@test "quota: a kept branch is on disk after run; abort drops it" {
  ann max_disk 1m
  ann on_exit keep
  cmd sh -c 'echo kept > /data/f; mkfifo /data/p; ln /data/f /data/f2'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"kept branch"* ]]
  no_mounts
  s=$(storage "$(cid)")
  [ ! -e "$s/quota" ]
  [ -p "$s/upper/p" ]
  [ "$(stat -c %h "$s/upper/f")" = 2 ]
  rt abort "$(cid)"
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  [ "$(cat "$HOST/f")" = old ]
  no_mounts
}

@test "quota: with the storage annotation the tmpfs is under that directory" {
  local st=$BATS_TEST_TMPDIR/st
  mkdir "$st"
  ann max_disk 1m
  ann storage "$st"
  ann on_exit defer
  cmd sh -c "$DD"
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"deferred branch $st/$(cid).7"* ]]
  no_mounts
  grep -q "^quota=disk$" "$st/$(cid).7/meta"
  [ "$(stat -c %s "$st/$(cid).7/upper/big")" = 1048576 ]
  rt commit "$(cid)"
  [ "$(stat -c %s "$HOST/big")" = 1048576 ]
  [ ! -e "$st/$(cid).7" ]
  no_mounts
}

@test "quota: a failure aborts straight from the tmpfs; nothing stays mounted" {
  ann max_disk 1m
  cmd sh -c 'echo bad > /data/f; exit 3'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 3 ]
  [ "$(cat "$HOST/f")" = old ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
}

@test "quota: a conflicting commit leaves the branch deferred, on disk" {
  ann max_disk 1m
  cmd sh -c 'echo mine > /data/f; exec sleep 100'
  rt create -b "$BUNDLE" "$(cid)"
  rt start "$(cid)"
  s=$(storage "$(cid)")
  wait_for "$s/quota/upper/f"
  echo theirs > "$HOST/f"
  rt kill "$(cid)" KILL
  wait_stopped "$(cid)"
  run rt commit "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--force"* ]]
  no_mounts
  grep -q "^quota=disk$" "$s/meta"
  rt delete "$(cid)"
  rt commit --force "$(cid)"
  [ "$(cat "$HOST/f")" = mine ]
  no_mounts
}

@test "quota: a branch whose tmpfs is gone (a restart) is lost, not empty; abort drops it" {
  ann max_disk 1m
  cmd sh -c 'echo lost > /data/f; exec sleep 100'
  rt create -b "$BUNDLE" "$(cid)"
  rt start "$(cid)"
  s=$(storage "$(cid)")
  wait_for "$s/quota/upper/f"
  rt kill "$(cid)" KILL
  wait_stopped "$(cid)"
  # what a restart does to the tmpfs (the state root here is on disk)
  umount -l "$s/quota"
  run rt delete "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"is gone"* ]]
  run rt branches
  [[ "$output" == *"$(cid)"*lost* ]]
  run rt changes "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"quota tmpfs"*"is gone"* ]]
  run rt commit "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"is gone"* ]]
  [ "$(cat "$HOST/f")" = old ]
  rt abort "$(cid)"
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  # the id is free again
  cmd sh -c 'echo again > /data/f'
  rt run -b "$BUNDLE" "$(cid)"
  [ "$(cat "$HOST/f")" = again ]
  no_mounts
}

@test "quota: a create that died after mounting a branch's tmpfs: the next create of the id reclaims it" {
  ann max_disk 1m
  # what a runtime killed inside create leaves (before the record exists):
  # the id's branch directory with a mounted quota tmpfs and no record
  local d=$ROOT/cow-branches/$(cid)/7
  mkdir -p "$d/quota"
  mount -t tmpfs -o size=1m tmpfs "$d/quota"
  mkdir "$d/quota/upper" "$d/quota/work"
  echo stale > "$d/quota/upper/f"
  run rt branches
  [[ "$output" != *"$(cid)"* ]]
  cmd sh -c 'cat /data/f; echo fresh > /data/f'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = old ]
  [ "$(cat "$HOST/f")" = fresh ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
}

bad() {
  run rt create -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$1"* ]]
  [ ! -e "$ROOT/$(cid)" ]
  [ -z "$(ls "$ROOT/cow-branches" 2>/dev/null)" ]
  no_mounts
}

@test "quota: bad sizes are refused at create, naming the annotation; nothing is created" {
  local k=run.oci.sandlock.cow.max_disk
  ann max_disk 0;     bad "$k: \"0\": must be more than 0"
  ann max_disk 0k;    bad "$k: \"0k\": must be more than 0"
  ann max_disk -1;    bad "$k: \"-1\": expected a byte count"
  ann max_disk "";    bad "$k: \"\": expected a byte count"
  ann max_disk lots;  bad "$k: \"lots\": expected a byte count"
  ann max_disk 10x;   bad "$k: \"10x\": unknown unit"
  ann max_disk 1.5g;  bad "$k: \"1.5g\": unknown unit"
  ann max_disk "5 m"; bad "$k: \"5 m\": unknown unit"
  ann max_disk 18446744073709551616; bad "$k: \"18446744073709551616\": too large"
  ann max_disk 17179869184g;         bad "$k: \"17179869184g\": too large"
  ann max_disk 1m
  # the second cow mount fails after the first one's tmpfs is mounted
  cfg '.mounts += [{"destination":"/more","type":"bind","source":"/nonexistent-cowq","options":["bind","cow"]}]'
  bad "mounts["
  cfg 'del(.mounts[-1])'
  # a create that fails in the runtime, after the branches are made
  cfg '.mounts += [{"destination":"relative","type":"tmpfs","source":"tmpfs"}]'
  bad 'destination'
  cfg 'del(.mounts[-1])'
  # and a quota with nothing to limit is not silently ignored
  cfg 'del(.mounts[-1])'
  ann max_disk 1m
  bad "$k: nothing to limit"
}

@test "quota: sizes in podman's units" {
  for v in 1048576:1048576 512k:524288 2M:2097152 1g:1073741824 64KiB:65536 3mb:3145728; do
    ann max_disk "${v%%:*}"
    cmd sh -c 'exec sleep 100'
    rt create -b "$BUNDLE" "$(cid)"
    s=$(storage "$(cid)")
    [ "$(( $(stat -f -c '%b * %S' "$s/quota") ))" -eq "${v##*:}" ]
    rt delete -f "$(cid)"
    no_mounts
    rt abort "$(cid)" 2>/dev/null || true
  done
}

# An image in an OCI layout, built here (as cow.bats does).
make_image() {
  local l=$BATS_TEST_TMPDIR/l1 a
  mkdir -p "$l"/{bin,etc,data}
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh cat echo dd wc exec sleep; do ln -s busybox "$l/bin/$a"; done
  echo orig > "$l/data/f"
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$BATS_TEST_TMPDIR/lay" \
    "$l" --tag t >/dev/null
  IMG="oci:$BATS_TEST_TMPDIR/lay:t"
  CACHE=$BATS_TEST_TMPDIR/cache
}

@test "quota: the root layer of bundle --cow gets the quota too, and goes with the container" {
  command -v python3 >/dev/null || skip "python3 missing"
  make_image
  local cb=$BATS_TEST_TMPDIR/cb
  rt bundle --cow --cache-dir "$CACHE" "$IMG" "$cb" -- sh -c \
    'exec 3>/big || exit 9; dd if=/dev/zero bs=4096 count=1000 >&3; echo "dd=$?"; exec sleep 100' >/dev/null
  [ "$(jq -r '.annotations["run.oci.sandlock.cow.rootfs_lower"]' "$cb/config.json")" != null ]
  jq '.annotations["run.oci.sandlock.cow.max_disk"]="1m"' "$cb/config.json" > "$cb/c"
  mv "$cb/c" "$cb/config.json"
  rt run -d -b "$cb" "$(cid)" > "$BATS_TEST_TMPDIR/out" 2>&1
  wait_for "$ROOT/$(cid)/layer/quota/upper/big"
  [ "$(stat -f -c %T "$ROOT/$(cid)/layer/quota")" = tmpfs ]
  for _ in $(seq 100); do
    [ "$(stat -c %s "$ROOT/$(cid)/layer/quota/upper/big")" = 1048576 ] && break
    sleep 0.05
  done
  [ "$(stat -c %s "$ROOT/$(cid)/layer/quota/upper/big")" = 1048576 ]
  rt delete -f "$(cid)"
  [ ! -e "$ROOT/$(cid)" ]
  no_mounts
}

@test "quota: the root layer: ENOSPC at the write, seen by the writer (run)" {
  command -v python3 >/dev/null || skip "python3 missing"
  make_image
  local cb=$BATS_TEST_TMPDIR/cb
  rt bundle --cow --cache-dir "$CACHE" "$IMG" "$cb" -- sh -c \
    'exec 3>/big || { echo "open failed"; exit 9; }; dd if=/dev/zero bs=4096 count=1000 >&3; echo "dd=$?"' >/dev/null
  jq '.annotations["run.oci.sandlock.cow.max_disk"]="1m"' "$cb/config.json" > "$cb/c"
  mv "$cb/c" "$cb/config.json"
  run rt run -b "$cb" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"256+0 records out"* ]]
  [[ "$output" == *"dd=1"* ]]
  [ ! -e "$ROOT/$(cid)" ]
  no_mounts
}

@test "quota: rootless: refused at create, naming the annotation; nothing is left" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null \
    || skip "unprivileged user namespaces are not available"
  local R
  R=$(mktemp -d /tmp/sandlock-cowq.XXXXXX)
  chmod 755 "$R"
  make_rootfs "$R/bundle/rootfs"
  mkdir -p "$R/host"
  echo old > "$R/host/f"
  chown -R nobody:nogroup "$R"
  su nobody -s /bin/sh -c "cd $R/bundle && $SANDLOCK_OCI spec --rootless"
  jq --arg h "$R/host" '.process.terminal=false
    | .process.args=["sh","-c","echo new > /data/f"]
    | .mounts += [{"destination":"/data","type":"bind","source":$h,"options":["bind","cow"]}]
    | .annotations["run.oci.sandlock.cow.max_disk"]="1m"' \
    "$R/bundle/config.json" > "$R/c"
  chown nobody "$R/c"; mv "$R/c" "$R/bundle/config.json"
  run su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $R/state run -b $R/bundle rq1"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"run.oci.sandlock.cow.max_disk"*"rootless container cannot have one"* ]]
  [ ! -e "$R/state/rq1" ]
  [ -z "$(ls "$R/state/cow-branches" 2>/dev/null)" ]
  [ "$(cat "$R/host/f")" = old ]
  ! grep -q " $R/" /proc/self/mountinfo || false
  rm -rf "$R"
}

@test "quota: features lists max_disk" {
  run rt features
  [ "$status" -eq 0 ]
  [ "$(jq '.annotations | has("run.oci.sandlock.cow.max_disk")' <<<"$output")" = true ]
}
