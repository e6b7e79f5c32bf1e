#!/usr/bin/env bats
# The OCI lifecycle on real busybox bundles: every command, flag and status.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

@test "run: prints the container's output and exits with its status" {
  cmd sh -c 'echo out; echo err >&2; exit 3'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 3 ]
  [[ "$output" == *out* ]]
  [[ "$output" == *err* ]]
  # run deletes the container when it exits
  run rt list -q
  [ -z "$output" ]
}

@test "run: a container killed by a signal gives 128+N" {
  # pid 1 of a pid namespace cannot be killed from inside: share the host's
  cfg '.linux.namespaces |= map(select(.type != "pid"))'
  cmd sh -c 'kill -9 $$'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 137 ]
}

@test "create/start/state/delete walk through created, running, stopped" {
  id=$(cid)
  cmd sh -c 'read x < /proc/self/fd/0; exit 0'
  cmd sleep 30
  rt create -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" "$id"
  run rt state "$id"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .status)" = created ]
  [ "$(echo "$output" | jq -r .id)" = "$id" ]
  [ "$(echo "$output" | jq -r .bundle)" = "$BUNDLE" ]
  pid=$(echo "$output" | jq -r .pid)
  [ "$pid" = "$(cat "$BATS_TEST_TMPDIR/pid")" ]
  [ -d "/proc/$pid" ]
  rt start "$id"
  [ "$(rt state "$id" | jq -r .status)" = running ]
  run rt start "$id"
  [ "$status" -ne 0 ]
  [[ "$output" == *"it is running"* ]]
  rt kill "$id" KILL
  # the state is reconciled with the process, not read back blindly
  while [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do :; done
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
  rt delete "$id"
  run rt state "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"container \"$id\" does not exist"* ]]
}

@test "create: the container process is parked before execve" {
  id=$(cid)
  cfg '.root.readonly=false'
  cmd sh -c 'echo started > /tmp/marker'
  rt create -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq -r .pid)
  # not exec'd yet: the init is still the runtime image, not busybox
  [ "$(readlink /proc/$pid/exe)" != "$(readlink -f "$BUNDLE/rootfs/bin/busybox")" ]
  [ ! -e "$BUNDLE/rootfs/tmp/marker" ]
  rt delete "$id"
  [ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
}

@test "duplicate id is refused and leaves the first container alone" {
  id=$(cid)
  cmd sleep 30
  rt create -b "$BUNDLE" "$id"
  run rt create -b "$BUNDLE" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"already exists"* ]]
  [ "$(rt state "$id" | jq -r .status)" = created ]
}

@test "invalid ids are refused" {
  for bad in 'a/b' '..' 'x y' 'semi;colon' ''; do
    run rt create -b "$BUNDLE" "$bad"
    [ "$status" -eq 1 ]
  done
  run rt state nosuch
  [ "$status" -eq 1 ]
  [[ "$output" == *'container "nosuch" does not exist'* ]]
}

@test "delete of a running container needs --force; -f kills and cleans" {
  id=$(cid)
  cmd sleep 30
  rt run -d -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq -r .pid)
  run rt delete "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"not stopped"* ]]
  rt delete -f "$id"
  [ ! -d "$ROOT/$id" ]
  [ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
  # delete -f of something already gone is fine, plain delete is not
  rt delete -f "$id"
  run rt delete "$id"
  [ "$status" -eq 1 ]
}

@test "kill: names, SIG-prefixed names and numbers; bad signal refused" {
  id=$(cid)
  cfg '.root.readonly=false'
  cmd sh -c 'trap "echo got-usr1 > /tmp/sig" USR1; while :; do sleep 0.1; done'
  rt run -d -b "$BUNDLE" "$id"
  rt kill "$id" SIGUSR1
  while [ ! -s "$BUNDLE/rootfs/tmp/sig" ]; do sleep 0.05; done
  grep -q got-usr1 "$BUNDLE/rootfs/tmp/sig"
  run rt kill "$id" NOTASIGNAL
  [ "$status" -eq 1 ]
  [[ "$output" == *"invalid signal"* ]]
  rt kill "$id" 9
  rt delete -f "$id"
}

@test "kill of a created container ends it" {
  id=$(cid)
  cmd true
  rt create -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq -r .pid)
  rt kill "$id" KILL
  while [ -d /proc/$pid ] && ! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; do :; done
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
  run rt kill "$id" KILL
  [ "$status" -eq 1 ]
  rt delete "$id"
}

@test "list: table, json and quiet" {
  a=$(cid a); b=$(cid b)
  cmd sleep 30
  rt create -b "$BUNDLE" "$a"
  rt run -d -b "$BUNDLE" "$b"
  run rt list -q
  [[ "$output" == *"$a"* && "$output" == *"$b"* ]]
  run rt list -f json
  [ "$(echo "$output" | jq -r "map(select(.id==\"$a\"))[0].status")" = created ]
  [ "$(echo "$output" | jq -r "map(select(.id==\"$b\"))[0].status")" = running ]
  run rt list
  [[ "${lines[0]}" == ID* ]]
}

@test "missing bundle and malformed config fail cleanly with nothing left" {
  run rt create -b "$BATS_TEST_TMPDIR/nope" x1
  [ "$status" -eq 1 ]
  [[ "$output" == *"nope"* ]]
  echo '{"ociVersion": "1.0.2", "process": {"args": [1]}}' > "$BUNDLE/config.json"
  run rt create -b "$BUNDLE" x2
  [ "$status" -eq 1 ]
  [[ "$output" == *"process.args[0]: expected string"* ]]
  echo '{"ociVersion": "9.9"}' > "$BUNDLE/config.json"
  run rt create -b "$BUNDLE" x3
  [[ "$output" == *"ociVersion"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "--log --log-format json records errors as JSON lines" {
  run rt --log "$BATS_TEST_TMPDIR/log.json" --log-format json state nosuch
  [ "$status" -eq 1 ]
  jq -e '.level == "error" and (.msg | test("does not exist")) and (.time | test("^[0-9]{4}-"))' "$BATS_TEST_TMPDIR/log.json"
}

@test "missing or non-executable args[0] gives the messages podman maps to 127/126" {
  cmd /nonexistent
  run rt create -b "$BUNDLE" "$(cid a)"
  [ "$status" -eq 1 ]
  [[ "$output" == *"no such file or directory"* ]]
  cmd nosuchcmd
  run rt create -b "$BUNDLE" "$(cid b)"
  [[ "$output" == *'executable file not found in $PATH'* ]]
  cmd /etc/passwd
  run rt create -b "$BUNDLE" "$(cid c)"
  [[ "$output" == *"permission denied"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "spec refuses to overwrite, help and version work" {
  run "$SANDLOCK_OCI" spec -b "$BUNDLE"
  [ "$status" -eq 1 ]
  [[ "$output" == *"already exists"* ]]
  run "$SANDLOCK_OCI" --version
  [[ "$output" == *"sandlock-oci version"* ]]
  run "$SANDLOCK_OCI" help create
  [[ "$output" == *"--pid-file"* ]]
  run "$SANDLOCK_OCI" bogus
  [ "$status" -eq 1 ]
}

@test "run forwards SIGTERM to the container" {
  cmd sh -c 'trap "exit 42" TERM; while :; do sleep 0.05; done'
  # the binary itself, not the rt() function: $! must be the runtime
  "$SANDLOCK_OCI" --root "$ROOT" run -b "$BUNDLE" "$(cid)" & rpid=$!
  # wait until the container runs
  until rt list -q | grep -q .; do sleep 0.05; done
  until [ "$(rt list -f json | jq -r '.[0].status')" = running ]; do sleep 0.05; done
  kill -TERM $rpid
  wait $rpid || status=$?
  [ "${status:-0}" -eq 42 ]
}

@test "concurrent create/delete of 20 containers leaves nothing behind" {
  # a duration no other test on the host uses, to find only our processes
  secs=$((30000 + RANDOM))
  cmd sleep "$secs"
  pids=()
  for i in $(seq 1 20); do
    ( rt create -b "$BUNDLE" "par$i" && rt start "par$i" && rt delete -f "par$i" ) &
    pids+=($!)
  done
  # explicit pids: a bare `wait` would also wait for bats' timeout watchdog
  for p in "${pids[@]}"; do wait "$p"; done
  [ -z "$(ls "$ROOT")" ]
  [ -z "$(ps -eo args | awk -v s="$secs" '$1=="sleep" && $2==s')" ]
  run grep -q "$BUNDLE" /proc/self/mountinfo
  [ "$status" -eq 1 ]
  ! ls -d /sys/fs/cgroup/*/sandlock-oci/par* 2>/dev/null || false
}

@test "run: a terminal container in the foreground gets a pty relayed by the runtime" {
  command -v script >/dev/null || skip "script(1) missing"
  cfg '.process.terminal=true'
  cmd sh -c 'tty; stty size; [ -t 0 ] && echo isatty; exit 4'
  run script -qec "stty rows 30 cols 90; $SANDLOCK_OCI --root $ROOT run -b $BUNDLE $(cid)" /dev/null
  [ "$status" -eq 4 ]
  out=$(echo "$output" | tr -d '\r')
  [[ "$out" == *"/dev/pts/0"* ]]
  [[ "$out" == *"30 90"* ]]
  [[ "$out" == *isatty* ]]
  # without a tty on our side it still runs and relays the output
  run rt run -b "$BUNDLE" "$(cid b)" < /dev/null
  [ "$status" -eq 4 ]
  [[ "$output" == *isatty* ]]
}

@test "delete -f clears a state directory left without state.json; the id is usable again" {
  mkdir -p "$ROOT/orphan"
  run rt create -b "$BUNDLE" orphan
  [ "$status" -eq 1 ]
  [[ "$output" == *"already exists"* ]]
  run rt delete orphan
  [ "$status" -eq 1 ]
  rt delete -f orphan
  [ ! -e "$ROOT/orphan" ]
  cmd true
  rt create -b "$BUNDLE" orphan
  # a real container is never taken for an orphan
  rt delete -f orphan
  [ ! -e "$ROOT/orphan" ]
}
