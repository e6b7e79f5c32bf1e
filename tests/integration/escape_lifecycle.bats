#!/usr/bin/env bats
# Containers that must stay manageable: a create killed at any point, a
# state.json that is huge, corrupt or missing, annotations bigger than one
# socket datagram, a start on a full disk.  (Issue 10, items 7-10.)

load ../lib/common

setup_file() { common_setup_file; }
setup() { common_setup; }
teardown() {
  # A hook gate left blocked by a failed test: release it.
  [ -p "$BATS_TEST_TMPDIR/gate" ] && timeout 2 sh -c "echo > '$BATS_TEST_TMPDIR/gate'" 2>/dev/null
  common_teardown
}

# Every cgroup directory of container $1 on any hierarchy (v1 ones, the
# hybrid unified tree, or a pure v2 root).
cgroup_dirs() {
  ls -d /sys/fs/cgroup/*/sandlock-oci/"$1" /sys/fs/cgroup/sandlock-oci/"$1" 2>/dev/null || true
}

# Processes whose command line names this test's --root: the runtime, and
# the container init before its execve (a clone of the runtime).
root_procs() {
  # One grep over every cmdline (NUL-separated arguments, -z): an argument
  # that is exactly $ROOT.  The pattern comes from a file, so that grep's
  # own command line does not match.
  grep -lsxzF -f <(printf '%s\n' "$ROOT") /proc/[0-9]*/cmdline | cut -d/ -f3
  return 0
}

# After delete -f of $1: no state, no cgroup directory, no process.
assert_gone() {
  [ ! -e "$ROOT/$1" ] || { echo "state dir left: $ROOT/$1"; return 1; }
  local d; d=$(cgroup_dirs "$1")
  [ -z "$d" ] || { echo "cgroup dirs left: $d"; return 1; }
  local p; p=$(root_procs)
  [ -z "$p" ] || { echo "processes left: $p"; ps -o pid,stat,args -p "$(echo $p | tr ' ' ,)"; return 1; }
}

# create $1, showing its errors.  Not under `run`: the parked process holds
# the stdio it was created with, and `run` would wait for it to close.
create_ok() {
  rt create -b "$BUNDLE" "$1" > "$BATS_TEST_TMPDIR/create.out" 2>&1 \
    || { cat "$BATS_TEST_TMPDIR/create.out"; return 1; }
}

# A prestart hook that says it has been reached (a fifo the test reads) and
# then blocks on a second fifo: create is then at a known point, with its
# cgroup made and its child cloned and waiting.
blocking_prestart() {
  mkfifo "$BATS_TEST_TMPDIR/reached" "$BATS_TEST_TMPDIR/gate"
  cat > "$BATS_TEST_TMPDIR/hook.sh" <<EOF
#!/bin/sh
echo > "$BATS_TEST_TMPDIR/reached"
read x < "$BATS_TEST_TMPDIR/gate"
EOF
  chmod +x "$BATS_TEST_TMPDIR/hook.sh"
  cfg ".hooks={\"prestart\":[{\"path\":\"$BATS_TEST_TMPDIR/hook.sh\"}]}"
}

@test "create killed in a prestart hook: list shows it, delete -f removes cgroup, process, state" {
  require_root
  blocking_prestart
  cmd sleep 1000
  for i in 1 2 3; do
    id=$(cid "k$i")
    "$SANDLOCK_OCI" --root "$ROOT" create -b "$BUNDLE" "$id" & pid=$!
    read -r _ < "$BATS_TEST_TMPDIR/reached"
    kill -9 "$pid"
    wait "$pid" || true
    echo > "$BATS_TEST_TMPDIR/gate"
    run rt list -q
    [ "$status" -eq 0 ]
    [[ "$output" == *"$id"* ]]
    run rt state "$id"
    [ "$status" -eq 0 ]
    # Never startable: its create did not finish.
    run rt start "$id"
    [ "$status" -ne 0 ]
    run rt delete -f "$id"
    echo "$output"
    [ "$status" -eq 0 ]
    assert_gone "$id"
  done
}

@test "create killed with SIGKILL at random points: delete -f always leaves nothing" {
  require_root
  cmd sleep 1000
  for i in $(seq 1 20); do
    id=$(cid "r$i")
    "$SANDLOCK_OCI" --root "$ROOT" create -b "$BUNDLE" "$id" & pid=$!
    # The point is to hit every step of create: vary the delay.
    sleep "0.0$(printf '%02d' $((RANDOM % 25)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" || true
    if [ -e "$ROOT/$id" ]; then
      run rt list -q
      [[ "$output" == *"$id"* ]] || { echo "list hides $id: $output"; false; }
    fi
    run rt delete -f "$id"
    echo "iteration $i: $output"
    [ "$status" -eq 0 ]
    assert_gone "$id"
  done
}

@test "create killed by SIGTERM (a caller's timeout) in a prestart hook: nothing is left" {
  require_root
  blocking_prestart
  cmd sleep 1000
  id=$(cid)
  "$SANDLOCK_OCI" --root "$ROOT" create -b "$BUNDLE" "$id" & pid=$!
  read -r _ < "$BATS_TEST_TMPDIR/reached"
  kill -TERM "$pid"
  wait "$pid" || true
  echo > "$BATS_TEST_TMPDIR/gate"
  run rt delete -f "$id"
  [ "$status" -eq 0 ]
  assert_gone "$id"
}

@test "annotations of 2 MiB: create, state, kill, list and delete all work" {
  require_root
  cmd sleep 1000
  head -c 2097152 /dev/zero | tr '\0' a > "$BATS_TEST_TMPDIR/big"
  jq --rawfile v "$BATS_TEST_TMPDIR/big" '.annotations={"big":$v}' "$BUNDLE/config.json" > "$BUNDLE/c.json"
  mv "$BUNDLE/c.json" "$BUNDLE/config.json"
  id=$(cid)
  create_ok "$id"
  run rt state "$id"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r '.annotations.big | length')" = 2097152 ]
  run rt list -q
  [[ "$output" == *"$id"* ]]
  rt start "$id"
  rt kill "$id" KILL
  run rt delete -f "$id"
  [ "$status" -eq 0 ]
  assert_gone "$id"
}

@test "annotations of 300 KiB reach a createContainer hook (no EMSGSIZE on the sync socket)" {
  require_root
  head -c 307200 /dev/zero | tr '\0' b > "$BATS_TEST_TMPDIR/big"
  out=$BATS_TEST_TMPDIR/hookin
  jq --rawfile v "$BATS_TEST_TMPDIR/big" --arg out "$out" \
    '.annotations={"big":$v} | .hooks={"createContainer":[{"path":"/bin/sh","args":["sh","-c","cat > \($out)"]}]}' \
    "$BUNDLE/config.json" > "$BUNDLE/c.json"
  mv "$BUNDLE/c.json" "$BUNDLE/config.json"
  # The hook runs in the container's mount namespace before pivot_root:
  # the host path is still reachable there.
  id=$(cid)
  create_ok "$id"
  [ "$(jq -r '.annotations.big | length' "$out")" = 307200 ]
  [ "$(jq -r .status "$out")" = creating ]
  rt delete -f "$id"
}

@test "corrupt state.json: list shows the container, delete -f removes process, cgroup and state" {
  require_root
  cmd sleep 1000
  id=$(cid)
  rt create -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq .pid)
  echo '{"status": "created", "pid": ' > "$ROOT/$id/state.json"
  run rt list
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$id"*unknown* ]]
  run rt state "$id"
  [ "$status" -ne 0 ]
  [[ "$output" == *"state.json of \`$id\` is corrupt"* ]]
  run rt delete -f "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ ! -e "/proc/$pid" ] || [ "$(cat /proc/$pid/stat | cut -d' ' -f3)" = Z ]
  assert_gone "$id"
}

@test "missing state.json: delete -f still kills the container and removes its cgroup" {
  require_root
  cmd sleep 1000
  id=$(cid)
  rt create -b "$BUNDLE" "$id"
  rt start "$id"
  rm "$ROOT/$id/state.json"
  run rt list -q
  [[ "$output" == *"$id"* ]]
  run rt delete -f "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_gone "$id"
}

@test "state.json bigger than the loader allows: a clear error, and delete -f still removes it" {
  require_root
  cmd sleep 1000
  id=$(cid)
  rt create -b "$BUNDLE" "$id"
  head -c $((18 * 1024 * 1024)) /dev/zero | tr '\0' ' ' > "$ROOT/$id/state.json"
  run rt state "$id"
  [ "$status" -ne 0 ]
  [[ "$output" == *"state.json"*"larger than"* ]]
  run rt delete -f "$id"
  [ "$status" -eq 0 ]
  assert_gone "$id"
}

@test "start on a full disk fails without starting the process, and works once there is room" {
  require_root
  command -v unshare >/dev/null || skip "needs unshare(1)"
  small=$BATS_TEST_TMPDIR/small
  mkdir -p "$small"
  cmd sleep 1000
  id=$(cid)
  # A private mount namespace: the tiny tmpfs root vanishes with it.
  run unshare -m --propagation private bash -c '
    set -u
    mount -t tmpfs -o size=128k tmpfs "$1" || exit 90
    sl=$4
    r() { "$sl" --root "$1" "${@:2}"; }
    # The parked process keeps the stdio it is created with: not run'"'"'s pipe.
    r "$1" create -b "$2" "$3" > "$2/../create.out" 2>&1 || exit 91
    dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
    r "$1" start "$3"; rc=$?
    echo "start rc=$rc"
    st=$(r "$1" state "$3" | jq -r .status)
    echo "after failed start: $st"
    pid=$(r "$1" state "$3" | jq -r .pid)
    comm=$(cat /proc/$pid/comm)
    echo "comm: $comm"
    rm "$1/fill"
    r "$1" start "$3"; rc2=$?
    echo "second start rc=$rc2 $(r "$1" state "$3" | jq -r .status)"
    r "$1" delete -f "$3"
    [ "$rc" -ne 0 ] && [ "$st" = created ] && [ "$comm" = sandlock-oci ] && [ "$rc2" = 0 ]
  ' _ "$small" "$BUNDLE" "$id" "$SANDLOCK_OCI"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"second start rc=0 running"* ]]
}

@test "a hook that does not read a 1 MiB state is still killed at its timeout" {
  require_root
  head -c 1048576 /dev/zero | tr '\0' c > "$BATS_TEST_TMPDIR/big"
  jq --rawfile v "$BATS_TEST_TMPDIR/big" \
    '.annotations={"big":$v} | .hooks={"prestart":[{"path":"/bin/sleep","args":["sleep","60"],"timeout":1}]}' \
    "$BUNDLE/config.json" > "$BUNDLE/c.json"
  mv "$BUNDLE/c.json" "$BUNDLE/config.json"
  id=$(cid)
  # The state is far larger than a pipe: writing it must not block past
  # the hook's timeout (the outer timeout only turns a hang into a failure).
  run timeout 20 "$SANDLOCK_OCI" --root "$ROOT" create -b "$BUNDLE" "$id"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"prestart hook 0 (/bin/sleep): timed out after 1s"* ]]
  [ ! -e "$ROOT/$id" ]
  [ -z "$(cgroup_dirs "$id")" ]
}
