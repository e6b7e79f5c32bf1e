#!/usr/bin/env bats
# Runtime conformance found by runtime-tools, crun's tests and real engines
# (issue 16): hooks, exec's session, the CLI flags engines pass, and the
# child's real error reaching the caller.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

# A host shell hook (hooks run on the host) as a JSON object.
hook() { jq -nc --arg s "$1" '{path:"/bin/sh",args:["sh","-c",$s]}'; }

# ---- hooks ---------------------------------------------------------------

@test "hooks: a failing poststart hook is a warning and the next one still runs" {
  id=$(cid)
  m=$BATS_TEST_TMPDIR/marker
  cmd sleep 30
  cfg ".hooks.poststart=[$(hook 'exit 3'), $(hook "echo ran > $m")]"
  rt create -b "$BUNDLE" "$id"
  run rt start "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *"warning: poststart hook 0"*"exited with status 3"* ]]
  [ "$(cat "$m")" = ran ]
  [ "$(rt state "$id" | jq -r .status)" = running ]
}

@test "hooks: every failing poststop hook is logged and the rest still run" {
  id=$(cid)
  m=$BATS_TEST_TMPDIR/marker
  cfg ".hooks.poststop=[$(hook 'exit 4'), $(hook 'exit 5'), $(hook "echo ran > $m")]"
  rt create -b "$BUNDLE" "$id"
  run rt --log "$BATS_TEST_TMPDIR/log" delete -f "$id"
  [ "$status" -eq 0 ]
  [ "$(cat "$m")" = ran ]
  grep -q 'warning: poststop hook 0.*status 4' "$BATS_TEST_TMPDIR/log"
  grep -q 'warning: poststop hook 1.*status 5' "$BATS_TEST_TMPDIR/log"
}

@test "hooks: a hook without env gets the runtime's environment (runc, crun)" {
  id=$(cid)
  e=$BATS_TEST_TMPDIR/env
  cfg ".hooks.prestart=[$(hook "env > $e.prestart")] | .hooks.poststart=[$(hook "env > $e.poststart")]"
  SANDLOCK_HOOK_PROBE=yes rt run -b "$BUNDLE" "$id"
  grep -qx 'SANDLOCK_HOOK_PROBE=yes' "$e.prestart"
  grep -q '^PATH=' "$e.prestart"
  grep -qx 'SANDLOCK_HOOK_PROBE=yes' "$e.poststart"
}

@test "hooks: a hook's own env replaces the runtime's" {
  id=$(cid)
  e=$BATS_TEST_TMPDIR/env
  cfg ".hooks.prestart=[$(hook "env > $e") + {env:[\"ONLY=this\"]}]"
  SANDLOCK_HOOK_PROBE=yes rt run -b "$BUNDLE" "$id"
  grep -qx 'ONLY=this' "$e"
  ! grep -q SANDLOCK_HOOK_PROBE "$e"
}

# ---- exec ----------------------------------------------------------------

@test "exec without a terminal: the process leads its own session and group (runc, crun)" {
  id=$(cid)
  cmd sleep 30
  rt run -d -b "$BUNDLE" "$id"
  # fields 5 and 6 of /proc/PID/stat: process group and session
  run rt exec "$id" sh -c 'read -r p c s pp pg sid rest < /proc/$$/stat; echo "$$ $pg $sid"'
  [ "$status" -eq 0 ]
  set -- $output
  [ "$1" != 0 ]
  [ "$2" = "$1" ]
  [ "$3" = "$1" ]
}

# ---- the child's real error ------------------------------------------------

@test "create: a namespace path that is not a namespace reports the join, not a broken pipe" {
  cfg '.linux.namespaces |= map(if .type == "ipc" then .path = "/etc/hostname" else . end)'
  run rt create -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 1 ]
  [[ "$output" == *"join namespace"*"Invalid argument"* ]]
  [[ "$output" != *"Broken pipe"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "create: a root.path that is a regular file says so, not 'exited during setup'" {
  touch "$BUNDLE/rootfile"
  cfg '.root.path = "rootfile"'
  for i in 1 2 3; do
    run rt create -b "$BUNDLE" "$(cid)-$i"
    [ "$status" -eq 1 ]
    [[ "$output" == *"rootfile"*"Not a directory"* ]]
  done
  [ -z "$(ls "$ROOT")" ]
}

# ---- rootless hints --------------------------------------------------------

@test "run as an ordinary user with a rootful config says to use spec --rootless" {
  su nobody -s /bin/sh -c true 2>/dev/null || skip "no nobody user to switch to"
  D=$(mktemp -d /tmp/sandlock-cli.XXXXXX)
  chmod 755 "$D"
  make_bundle "$D/b"
  chown -R nobody "$D"
  run su nobody -s /bin/sh -c "cd $D/b && $SANDLOCK_OCI --root $D/state run x"
  rm -rf "$D"
  [ "$status" -eq 1 ]
  [[ "$output" == *"Operation not permitted: creating namespaces needs root or a user namespace: use \`sandlock-oci spec --rootless\`"* ]]
}

# ---- CLI flags engines and crun's tests use --------------------------------

@test "--log: a path that cannot be opened fails up front, naming it" {
  run rt --log /nonexistent-dir/x.log list
  [ "$status" -eq 1 ]
  [[ "$output" == *"--log \`/nonexistent-dir/x.log\`: No such file or directory"* ]]
}

@test "run --keep: the container stays stopped after run, and delete removes it" {
  id=$(cid)
  cmd sh -c 'exit 7'
  run rt run --keep -b "$BUNDLE" "$id"
  [ "$status" -eq 7 ]
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
  rt delete "$id"
  [ -z "$(rt list -q)" ]
}

@test "create/run --config: that file is used instead of BUNDLE/config.json" {
  cmd echo from-bundle
  jq '.process.args=["echo","from-config"]' "$BUNDLE/config.json" > "$BATS_TEST_TMPDIR/other.json"
  run rt run --config "$BATS_TEST_TMPDIR/other.json" -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [ "$output" = from-config ]
  run rt create --config "$BATS_TEST_TMPDIR/missing.json" -b "$BUNDLE" "$(cid 2)"
  [ "$status" -eq 1 ]
  [[ "$output" == *missing.json* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "--cgroup-manager: systemd reads cgroupsPath as slice:prefix:name, cgroupfs as a path, anything else is refused" {
  id=$(cid)
  cmd sh -c 'grep pids /proc/self/cgroup'
  cfg ".linux.namespaces |= map(select(.type != \"cgroup\")) | .linux.cgroupsPath=\"system.slice:cli:$id\""
  run rt --cgroup-manager systemd run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *":pids:/system.slice/cli-$id.scope" ]]
  run rt --cgroup-manager cgroupfs run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *":pids:/system.slice:cli:$id" ]]
  run rt --cgroup-manager bogus list
  [ "$status" -eq 1 ]
  [[ "$output" == *"--cgroup-manager: expected cgroupfs, systemd or disabled"* ]]
}

@test "--cgroup-manager disabled: no cgroup is made; linux.resources are refused" {
  id=$(cid)
  cmd sh -c 'cat /proc/self/cgroup'
  cfg '.linux.namespaces |= map(select(.type != "cgroup"))'
  run rt --cgroup-manager disabled run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [ "$output" = "$(cat /proc/self/cgroup)" ]
  cfg '.linux.resources={"pids":{"limit":10}}'
  run rt --cgroup-manager disabled run -b "$BUNDLE" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.resources: cannot be applied with --cgroup-manager disabled"* ]]
  [ -z "$(ls "$ROOT")" ]
}
