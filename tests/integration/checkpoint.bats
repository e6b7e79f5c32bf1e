#!/usr/bin/env bats
# checkpoint (docs/checkpoint.md): runc's command over criu-lite.  The
# restore half of criu-lite is proven standalone by unit/test_criu; the
# `restore` command waits for the runtime's payload seam.

load ../lib/common

setup_file() { common_setup_file; }
setup() {
  common_setup
  require_root
  OUT=$BATS_TEST_TMPDIR/out
  IMG=$BATS_TEST_TMPDIR/img
}
teardown() { common_teardown; }

# Runs the bundle detached with stdout to $OUT (stdin /dev/null).
start() { # id
  (cd "$BUNDLE" && rt run -d "$1" < /dev/null > "$OUT" 2>&1)
}

# The last "count N" the container printed.
last_count() { grep '^count ' "$OUT" | tail -1 | cut -d' ' -f2; }

# Waits (up to 5 s) until the container printed a count above $1.
counts_past() { # n
  local i
  for i in $(seq 50); do
    [ "$(last_count || echo 0)" -gt "$1" ] 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

status_of() { rt state "$1" | jq -r .status; }

@test "checkpoint --help exits 0 and names the image flags" {
  run rt checkpoint --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"--image-path"* ]]
  [[ "$output" == *"--leave-running"* ]]
}

@test "checkpoint: a running container is saved, files 0600, and stopped" {
  cmd /bin/cl_counter -m 10
  id=$(cid)
  start "$id"
  counts_past 0
  run rt checkpoint --image-path "$IMG" --work-path "$BATS_TEST_TMPDIR/work" "$id"
  [ "$status" -eq 0 ]
  [ "$(status_of "$id")" = stopped ]
  # the init is pid 1 of its namespace: the image names it so
  [ -f "$IMG/tree.img" ]
  [ -f "$IMG/1/core.img" ]
  [ -f "$IMG/1/pages.img" ]
  # 10 MiB of touched memory is in pages.img, not much more
  size=$(stat -c %s "$IMG/1/pages.img")
  [ "$size" -ge $((10 << 20)) ]
  [ "$size" -lt $((12 << 20)) ]
  [ -z "$(find "$IMG" -type f ! -perm 600)" ]
  grep -q "saved to $IMG" "$BATS_TEST_TMPDIR/work/dump.log"
  # nothing counts any more
  n=$(last_count)
  sleep 0.2
  [ "$(last_count)" = "$n" ]
}

@test "checkpoint --leave-running: the container runs on" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  counts_past 0
  run rt checkpoint --leave-running --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  [ -f "$IMG/1/core.img" ]
  [ "$(status_of "$id")" = running ]
  n=$(last_count)
  counts_past "$n"
}

@test "checkpoint: a sh -c tree is saved whole, every process by its pid" {
  cmd /bin/sh -c '/bin/cl_counter -m 1; echo done'
  id=$(cid)
  start "$id"
  counts_past 0
  run rt checkpoint --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  # sh is 1, cl_counter its child 2
  [ -f "$IMG/1/core.img" ]
  [ -f "$IMG/2/core.img" ]
  [ "$(stat -c %s "$IMG/tree.img")" -eq $((48 + 2 * 16)) ]
  [ "$(status_of "$id")" = stopped ]
}

@test "checkpoint: a pipe between container processes fails naming the fd; the container runs on" {
  cmd /bin/sh -c '/bin/cl_counter -m 1 | /bin/cat'
  id=$(cid)
  start "$id"
  counts_past 0
  run rt checkpoint --image-path "$IMG" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is a pipe"* ]]
  [[ "$output" =~ fd\ [01]\ is\ a\ pipe ]]
  [ ! -e "$IMG/tree.img" ]
  [ -z "$(ls "$IMG")" ]
  [ "$(status_of "$id")" = running ]
  n=$(last_count)
  counts_past "$n"
}

@test "checkpoint: flags that need CRIU itself are refused by name" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  for f in --pre-dump "--parent-path=x" "--page-server=x:1" --lazy-pages \
           --auto-dedup "--status-fd=3" "--manage-cgroups-mode=soft" \
           "--empty-ns=network"; do
    run rt checkpoint --image-path "$IMG" $f "$id"
    [ "$status" -eq 1 ]
    name=${f%%=*}
    [[ "$output" == *"checkpoint: $name is not supported"* ]]
  done
  [ ! -e "$IMG" ]
  [ "$(status_of "$id")" = running ]
}

@test "checkpoint: a container that is not running is refused" {
  id=$(cid)
  (cd "$BUNDLE" && rt create "$id" < /dev/null > /dev/null 2>&1)
  run rt checkpoint --image-path "$IMG" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is created, not running"* ]]
  [ ! -e "$IMG/tree.img" ]
  run rt checkpoint --image-path "$IMG" nosuch
  [ "$status" -eq 1 ]
}
