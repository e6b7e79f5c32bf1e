#!/usr/bin/env bats
# checkpoint and restore (docs/checkpoint.md): runc's commands over
# criu-lite.  unit/test_criu proves the module standalone (threads, signal
# handlers, file offsets, trees with their pids); here, whole containers.

load ../lib/common
load ../lib/checkpoint

setup_file() { common_setup_file; }
setup() { checkpoint_setup; }
teardown() { common_teardown; }

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

# The first "count N" in file $1.
first_count() { grep -m1 '^count ' "$1" | cut -d' ' -f2; }

@test "restore: the counter goes on in a new container, its 100 MiB intact" {
  cmd /bin/cl_counter -m 100 -V 200
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^verify ok"
  rt checkpoint --image-path "$IMG" "$id"
  before=$(last_count)
  out2=$BATS_TEST_TMPDIR/out2
  run restore_as "$(cid r)" "$out2"
  [ "$status" -eq 0 ]
  [ "$(status_of "$(cid r)")" = running ]
  wait_for "$out2" "^count "
  [ "$(first_count "$out2")" -eq $((before + 1)) ]
  # its own periodic check of the whole pattern, after the restore
  wait_for "$out2" "^verify ok"
  ! grep -q "^verify bad" "$out2" || false
}

@test "restore: the restored container is confined like a fresh one" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  counts_past 0
  rt checkpoint --image-path "$IMG" "$id"
  run restore_as "$(cid r)" "$BATS_TEST_TMPDIR/out2"
  [ "$status" -eq 0 ]
  (cd "$BUNDLE" && rt run -d "$(cid f)" < /dev/null > /dev/null 2>&1)
  r=$(rt state "$(cid r)" | jq -r .pid)
  f=$(rt state "$(cid f)" | jq -r .pid)
  for k in Seccomp Seccomp_filters NoNewPrivs CapEff CapPrm CapBnd CapInh CapAmb; do
    [ "$(grep "^$k:" /proc/$r/status)" = "$(grep "^$k:" /proc/$f/status)" ]
  done
  [ "$(grep '^Seccomp:' /proc/$r/status | cut -f2)" = 2 ]
  # pid 1 of its own pid namespace, in the restored container's cgroup
  [ "$(grep '^NSpid:' /proc/$r/status | awk '{print $NF}')" = 1 ]
  grep -q "$(cid r)" /proc/$r/cgroup
  # no mapping of the restorer is left but the stub's one
  ! grep -q sandlock-oci /proc/$r/maps || false
}

@test "restore: twice from one image taken with --leave-running, beside the original" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  counts_past 0
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  for k in 1 2; do
    run restore_as "$(cid r$k)" "$BATS_TEST_TMPDIR/out$k"
    [ "$status" -eq 0 ]
    wait_for "$BATS_TEST_TMPDIR/out$k" "^count "
  done
  [ "$(first_count "$BATS_TEST_TMPDIR/out1")" = "$(first_count "$BATS_TEST_TMPDIR/out2")" ]
  [ "$(status_of "$id")" = running ]
  [ "$(status_of "$(cid r1)")" = running ]
  [ "$(status_of "$(cid r2)")" = running ]
  n=$(last_count)
  counts_past "$n"
}

@test "restore: a sh -c tree comes back whole" {
  cmd /bin/sh -c '/bin/cl_counter -m 1; echo done'
  id=$(cid)
  start "$id"
  counts_past 0
  rt checkpoint --image-path "$IMG" "$id"
  before=$(last_count)
  out2=$BATS_TEST_TMPDIR/out2
  run restore_as "$(cid r)" "$out2"
  [ "$status" -eq 0 ]
  wait_for "$out2" "^count "
  [ "$(first_count "$out2")" -eq $((before + 1)) ]
  r=$(rt state "$(cid r)" | jq -r .pid)
  # sh is the init, cl_counter its child
  [ "$(cat /proc/$r/comm)" = sh ]
  grep -q cl_counter /proc/$(cut -d' ' -f1 /proc/$r/task/$r/children)/comm
}

@test "restore: a corrupted or truncated image is refused and nothing is left" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  counts_past 0
  rt checkpoint --image-path "$IMG" "$id"
  cp -a "$IMG" "$BATS_TEST_TMPDIR/good"
  printf 'X' | dd of="$IMG/1/core.img" bs=1 seek=2000 conv=notrunc 2>/dev/null
  run restore_as "$(cid r)" "$BATS_TEST_TMPDIR/o"
  [ "$status" -eq 1 ]
  grep -q "checksum mismatch (corrupted)" "$BATS_TEST_TMPDIR/o"
  run rt state "$(cid r)"
  [ "$status" -ne 0 ]
  rm -rf "$IMG"; cp -a "$BATS_TEST_TMPDIR/good" "$IMG"
  truncate -s -4096 "$IMG/1/pages.img"
  run restore_as "$(cid r)" "$BATS_TEST_TMPDIR/o"
  [ "$status" -eq 1 ]
  grep -q "pages.img: truncated" "$BATS_TEST_TMPDIR/o"
  run rt state "$(cid r)"
  [ "$status" -ne 0 ]
  [ -z "$(ls "$ROOT" | grep -v "^$id\$" | grep "$(cid r)")" ]
}

@test "restore: flags that need CRIU itself are refused by name" {
  for f in --lazy-pages --auto-dedup "--manage-cgroups-mode=soft" \
           "--empty-ns=network" "--lsm-profile=x" "--parent-path=x"; do
    run rt restore --image-path "$IMG" $f "$(cid r)"
    [ "$status" -eq 1 ]
    [[ "$output" == *"restore: ${f%%=*} is not supported"* ]]
  done
}

@test "restore: a pipe between container processes keeps its bytes in flight" {
  # the writer puts a line in the pipe and goes on writing counts; the
  # reader does not read until its sleep is over, after the checkpoint
  cmd /bin/sh -c '{ echo in-flight-7b3; exec /bin/cl_counter -m 1 </dev/null; } | { sleep 2; exec cat; }'
  id=$(cid)
  start "$id"
  sleep 0.5
  rt checkpoint --image-path "$IMG" "$id"
  ! grep -q in-flight "$OUT" || false
  out2=$BATS_TEST_TMPDIR/out2
  run restore_as "$(cid r)" "$out2"
  [ "$status" -eq 0 ]
  wait_for "$out2" "^count "
  # what was in the pipe comes first, then what was written after restore
  [ "$(head -1 "$out2")" = in-flight-7b3 ]
  [ "$(first_count "$out2")" -ge 1 ]
}

@test "checkpoint --leave-running: the bytes in a pipe stay there for its reader" {
  cmd /bin/sh -c '{ echo in-flight-7b3; exec /bin/cl_counter -m 1 </dev/null; } | { sleep 1; exec cat; }'
  id=$(cid)
  start "$id"
  sleep 0.3
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  ! grep -q in-flight "$OUT" || false
  wait_for "$OUT" "^count "
  [ "$(head -1 "$OUT")" = in-flight-7b3 ]
}

@test "checkpoint: a socket fails the checkpoint by name; --skip-unsupported records it and restore says it is not restored" {
  # a connected pair (a listening socket is restored: checkpoint_fds.bats)
  cmd /bin/sh -c '/bin/cl_fds -P </dev/null >/dev/null & exec /bin/cl_counter -m 1'
  id=$(cid)
  start "$id"
  counts_past 0
  run rt checkpoint --leave-running --image-path "$IMG" "$id"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"socket"* ]]
  run rt checkpoint --skip-unsupported --image-path "$IMG" "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  out2=$BATS_TEST_TMPDIR/out2
  run restore_as "$(cid r)" "$out2"
  [ "$status" -eq 0 ]
  wait_for "$out2" "^count "
  cat "$out2"
  grep -q "not restored: fd [0-9]* (socket that is not listening" "$out2"
}
