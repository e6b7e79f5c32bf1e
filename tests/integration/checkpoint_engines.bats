#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# checkpoint/restore beyond the basics of checkpoint.bats: the page-data
# checksum library (libxxhash0, dlopen'd), the CRIU-only flags, a
# --leave-running checkpoint leaving no trace, containerd's `ctr`.

load ../lib/common

setup_file() { common_setup_file; }
setup() {
  common_setup
  require_root
  OUT=$BATS_TEST_TMPDIR/out
  IMG=$BATS_TEST_TMPDIR/img
}
teardown() { common_teardown; }

start() { # id
  (cd "$BUNDLE" && rt run -d "$1" < /dev/null > "$OUT" 2>&1)
}

# Waits (up to 5 s) for a line matching $1 in the container's output.
wait_out() { # regex
  local i
  for i in $(seq 50); do
    grep -q -- "$1" "$OUT" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

status_of() { rt state "$1" | jq -r .status; }

# Runs sandlock-oci in a private mount namespace where libxxhash.so.0 is
# /dev/null: a host without the package, for this command only.
rt_without_xxhash() {
  local lib
  lib=$(readlink -f "$(ldconfig -p | awk '/libxxhash\.so\.0 .*x86-64/ { print $NF; exit }')")
  [ -f "$lib" ] || skip "libxxhash0 is not installed"
  unshare -m --propagation private sh -c \
    'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
    "$SANDLOCK_OCI" --root "$ROOT" "$@"
}

@test "libxxhash0 missing: checkpoint and restore fail naming the package, nothing left" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  wait_out '^count '
  run rt_without_xxhash checkpoint --leave-running --image-path "$IMG" "$id"
  [ "$status" -ne 0 ]
  [[ "$output" == *"libxxhash0"* ]]
  [ "$(status_of "$id")" = running ]
  [ ! -e "$IMG/1/pages.img" ]
  # with the library, the checkpoint works; a restore without it does not
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  id2=$(cid r)
  run rt_without_xxhash restore -d --image-path "$IMG" -b "$BUNDLE" "$id2"
  [ "$status" -ne 0 ]
  [[ "$output" == *"libxxhash0"* ]]
  run rt state "$id2"
  [ "$status" -ne 0 ]
}

# Pages are read with process_vm_readv, which honours protections: a page
# written and then made PROT_NONE must still be saved (through
# /proc/PID/mem) and come back with its bytes.
@test "checkpoint: a PROT_NONE page that holds data is saved and restored" {
  cmd /bin/cl_counter -m 1 -g -V 20
  id=$(cid)
  start "$id"
  wait_out '^verify ok'
  rt checkpoint --image-path "$IMG" "$id"
  out2=$BATS_TEST_TMPDIR/out2
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$(cid r)" < /dev/null > "$out2" 2>&1)
  OUT=$out2 wait_out '^verify '
  ! grep -q '^verify bad' "$out2"
  grep -q '^verify ok' "$out2"
}

@test "checkpoint/restore: flags for what criu-lite cannot restore are refused by name; --shell-job is accepted" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  wait_out '^count '
  for f in --tcp-established --ext-unix-sk --file-locks; do
    run rt checkpoint --image-path "$IMG" $f "$id"
    [ "$status" -eq 1 ]
    [[ "$output" == *"checkpoint: $f is not supported: criu-lite has no restore of"* ]]
  done
  [ ! -e "$IMG" ]
  [ "$(status_of "$id")" = running ]
  run rt checkpoint --help
  [[ "$output" == *"--shell-job is accepted and always in effect"* ]]
  [[ "$output" != *"[--tcp-established]"* ]]
  run rt checkpoint --shell-job --leave-running --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  for f in --tcp-established --ext-unix-sk --file-locks; do
    run rt restore -d --image-path "$IMG" -b "$BUNDLE" $f "$(cid r)"
    [ "$status" -eq 1 ]
    [[ "$output" == *"restore: $f is not supported"* ]]
    run rt state "$(cid r)"
    [ "$status" -ne 0 ]
  done
}

# A lock criu-lite would drop at restore (another process could then take
# it while the restored one believes it holds it) fails the checkpoint.
@test "checkpoint: a process holding a file lock is refused naming the fd, and runs on" {
  cmd /bin/cl_counter -m 1 -l /dev/shm/lock
  id=$(cid)
  start "$id"
  wait_out '^count '
  run rt checkpoint --image-path "$IMG" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"fd 3 holds a file lock (FLOCK  ADVISORY  WRITE"*"which criu-lite cannot save or restore"* ]]
  [ "$(status_of "$id")" = running ]
  [ ! -e "$IMG/1/pages.img" ]
  n=$(grep -c '^count ' "$OUT")
  wait_out "^count $((n + 5))\$"
}

# The last "obs K end" line of $OUT, as K.
last_obs() { grep '^obs [0-9]* end ' "$OUT" | tail -1 | cut -d' ' -f2; }
# Observation K without its prefix.
obs_block() { grep "^obs $1: " "$OUT" | sed "s/^obs $1: //"; }

# checkpoint --leave-running stops every thread with ptrace, injects
# syscalls (sigaltstack, rt_sigaction, a scratch mmap/munmap, ...) and
# puts each back: from inside, nothing may differ but the time that
# passed.  cl_observe reports what a process can see of itself
# (tests/helpers/cl_observe.c): signal masks, pending and caught sets,
# handlers, altstack, tracer, threads, children, fds with offsets and
# flags, cwd, maps, limits, itimers, prctl state.
@test "checkpoint --leave-running: the container cannot tell from inside" {
  cmd /bin/cl_observe -n 20
  id=$(cid)
  start "$id"
  wait_out '^obs 2 end '
  before=$(last_obs)
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  [ -f "$IMG/1/pages.img" ]
  during=$(last_obs)
  after=$((during + 2))   # begun after the checkpoint returned
  wait_out "^obs $after end "
  diff <(obs_block "$before") <(obs_block "$after")
  [ -n "$(obs_block "$before" | grep 'TracerPid:.0$')" ]
  [ "$(obs_block "$before" | grep -c '^/proc/self/task/.*/children')" -eq 0 ]
  # the counter went on by one at a time: no count lost or repeated
  grep '^count ' "$OUT" | cut -d' ' -f2 | awk 'NR > 1 && $1 != p + 1 { bad = 1 } { p = $1 } END { exit bad }'
  [ "$(status_of "$id")" = running ]
}
