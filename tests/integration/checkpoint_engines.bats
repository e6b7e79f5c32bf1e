#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# checkpoint/restore beyond the basics of checkpoint.bats: the page-data
# checksum library (libxxhash0, dlopen'd), the CRIU-only flags, a
# --leave-running checkpoint leaving no trace, containerd's `ctr`.

load ../lib/common
load ../lib/checkpoint
load ../lib/engines

setup_file() { common_setup_file; }
setup() { checkpoint_setup; }
teardown() {
  [ -z "${ENG_DIR:-}" ] || containerd_teardown
  common_teardown
}

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
  restore_as "$(cid r)" "$out2"
  OUT=$out2 wait_out '^verify '
  ! grep -q '^verify bad' "$out2" || false
  grep -q '^verify ok' "$out2"
}

@test "checkpoint/restore: --tcp-established and --ext-unix-sk are refused by name; --shell-job and --file-locks accepted" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  wait_out '^count '
  for f in --tcp-established --ext-unix-sk; do
    run rt checkpoint --image-path "$IMG" $f "$id"
    [ "$status" -eq 1 ]
    [[ "$output" == *"checkpoint: $f is not supported: criu-lite has no restore of"* ]]
  done
  [ ! -e "$IMG" ]
  [ "$(status_of "$id")" = running ]
  run rt checkpoint --help
  [[ "$output" == *"--shell-job is accepted and always in effect"* ]]
  [[ "$output" == *"--file-locks is accepted, but a file lock held fails the"* ]]
  [[ "$output" != *"[--tcp-established]"* ]]
  run rt checkpoint --shell-job --file-locks --leave-running --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  for f in --tcp-established --ext-unix-sk; do
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
  # --file-locks (containerd always passes it) changes nothing: criu-lite
  # cannot restore the lock either way
  run rt checkpoint --file-locks --image-path "$IMG" "$id"
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

# containerd pauses a task before it checkpoints it.  A paused container is
# saved, and stays paused when it runs on; kill of the stopped one answers
# in runc's words (the shim reads them as "already exited").
@test "checkpoint of a paused container: paused again with --leave-running, stopped without" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  wait_out '^count '
  rt pause "$id"
  [ "$(status_of "$id")" = paused ]
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  [ -f "$IMG/1/pages.img" ]
  [ "$(status_of "$id")" = paused ]
  n=$(grep -c '^count ' "$OUT")
  sleep 0.2
  [ "$(grep -c '^count ' "$OUT")" -eq "$n" ]
  rt resume "$id"
  wait_out "^count $((n + 3))\$"
  rt pause "$id"
  rt checkpoint --image-path "$IMG.2" "$id"
  [ "$(status_of "$id")" = stopped ]
  run rt kill "$id" KILL
  [ "$status" -eq 1 ]
  [[ "$output" == *"container not running"* ]]
  # the image of the paused container restores
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG.2" "$(cid r)" < /dev/null > "$OUT.r" 2>&1)
  OUT=$OUT.r wait_out '^count '
}

# An engine may give the container one file as stdin, stdout and stderr
# (/dev/null: containerd's --null-io); each comes back as the restoring
# side's fd of the same number, not all as its stdin.
@test "restore: stdio that was one file comes back fd for fd" {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  (cd "$BUNDLE" && rt run -d "$id" < /dev/null > /dev/null 2>&1)
  rt checkpoint --image-path "$IMG" "$id"
  a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$(cid r)" < /dev/null > "$a" 2> "$b")
  pid=$(rt state "$(cid r)" | jq -r .pid)
  [ "$(readlink /proc/$pid/fd/0)" = /dev/null ]
  [ "$(readlink /proc/$pid/fd/1)" = "$a" ]
  [ "$(readlink /proc/$pid/fd/2)" = "$b" ]
  OUT=$a wait_out '^count '
}

# ---------------------------------------------------------------- containerd
# containerd 1.6's runc v2 shim drives `checkpoint` and `restore` the runc
# way (docs/checkpoint.md, "containerd"): the client pauses the task first
# and resumes it after; `ctr container checkpoint` always passes
# --file-locks; the restore is `restore --detach --pid-file F
# -no-subreaper --bundle B` in the shim's stdio.

ctr_ready() {
  command -v containerd >/dev/null && command -v ctr >/dev/null \
    || skip "containerd not installed"
  command -v containerd-shim-runc-v2 >/dev/null \
    || skip "containerd-shim-runc-v2 not installed"
  containerd_setup
}
# ctr inside the engines' mount namespace: `ctr container restore` makes
# its FIFOs in /run/containerd/fifo, which has no flag to move it.
cr_ns() { in_ns ctr --address "$ENG_DIR/containerd.sock" --namespace "$CTR_NS" "$@"; }
tstatus() { cr task ls | awk -v t="$1" '$1 == t { print $3 }'; }
# Waits (up to 10 s) until file $1 has a line matching $2 after line $3.
wait_line() { # file regex after
  local i
  for i in $(seq 100); do
    tail -n +"$(( ${3:-0} + 1 ))" "$1" 2>/dev/null | grep -q -- "$2" && return 0
    sleep 0.1
  done
  return 1
}

@test "containerd: ctr task checkpoint of a running task, with and without --exit" {
  ctr_ready
  log=$BATS_TEST_TMPDIR/ck.log
  cr run -d "${CR_RUN_OPTS[@]}" --log-uri "file://$log" "$ENGINE_IMAGE" ck \
    /bin/cl_counter -m 1
  wait_line "$log" '^count '
  # containerd pauses the task, the runtime saves it, containerd resumes it
  run cr task checkpoint ck
  [ "$status" -eq 0 ]
  [[ "$output" == containerd.io/checkpoint/ck:* ]]
  cr image ls -q | grep -qx "$output"
  [ "$(tstatus ck)" = RUNNING ]
  n=$(wc -l < "$log")
  wait_line "$log" '^count ' "$n"
  # --exit with an image path of ours: the task stops, the image is there
  run cr task checkpoint --exit --image-path "$BATS_TEST_TMPDIR/img" ck
  [ "$status" -eq 0 ]
  [ -f "$BATS_TEST_TMPDIR/img/tree.img" ]
  [ -f "$BATS_TEST_TMPDIR/img/1/pages.img" ]
  for i in $(seq 50); do [ "$(tstatus ck)" = STOPPED ] && break; sleep 0.1; done
  [ "$(tstatus ck)" = STOPPED ]
  # the runtime answers a kill of the stopped task in runc's words, which
  # the shim takes for "already exited"
  cr task rm -f ck
  cr container rm ck
}

@test "containerd: ctr container checkpoint --task, then restore --live in a new task" {
  ctr_ready
  out=$BATS_TEST_TMPDIR/out
  mkdir -p "$out"
  # a sh -c tree: the counter's stdout is a file of a bind mount, so what
  # it prints after the restore can be read
  cr run -d "${CR_RUN_OPTS[@]}" --null-io \
    --mount "type=bind,src=$out,dst=/out,options=rbind:rw" "$ENGINE_IMAGE" ck \
    sh -c 'sh -c "/bin/cl_counter -m 8 -V 20 >> /out/log"; echo done'
  # sh is the init, its stdio the shim's (/dev/null, all three), rebound to
  # the new task's; the counter's stdout, a file, is reopened at its offset
  # (busybox sh redirects in itself before it forks: hence the inner one)
  wait_line "$out/log" '^verify ok'
  cr container checkpoint --task ck ck-image
  [ "$(tstatus ck)" = RUNNING ]
  cr task kill -s KILL ck
  for i in $(seq 50); do [ "$(tstatus ck)" = STOPPED ] && break; sleep 0.1; done
  cr task rm ck
  cr container rm ck
  n=$(wc -l < "$out/log")
  run cr_ns container restore --live ck ck-image
  [ "$status" -eq 0 ]
  [ "$(tstatus ck)" = RUNNING ]
  # it goes on where it was saved: no new start, its 8 MiB intact
  wait_line "$out/log" '^verify ok' "$n"
  ! tail -n +"$((n + 1))" "$out/log" | grep -q '^ready' || false
  first=$(tail -n +"$((n + 1))" "$out/log" | grep -m1 '^count ' | cut -d' ' -f2)
  [ "$first" -gt 1 ]
  ! tail -n +"$((n + 1))" "$out/log" | grep -q '^verify bad' || false
  cr task kill -s KILL ck
}
