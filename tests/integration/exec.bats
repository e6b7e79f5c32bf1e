#!/usr/bin/env bats
# exec: a new process inside a running container.
load ../lib/common

setup_file() { common_setup_file; }
setup() {
  require_root
  common_setup
  ID=$(cid)
  cmd sleep 300
}
teardown() { common_teardown; }

start_ctr() { rt run -d -b "$BUNDLE" "$ID"; }

@test "exec: same namespaces, cgroup and confinement as the container" {
  start_ctr
  pid=$(rt state "$ID" | jq -r .pid)
  run rt exec "$ID" sh -c 'for n in pid net mnt ipc uts cgroup; do readlink /proc/self/ns/$n; done; echo $$; grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status'
  [ "$status" -eq 0 ]
  i=0
  for n in pid net mnt ipc uts cgroup; do
    [ "${lines[$i]}" = "$(readlink /proc/$pid/ns/$n)" ]; i=$((i+1))
  done
  [ "${lines[6]}" -gt 1 ]     # a pid inside the container's pid namespace
  [ "${lines[7]}" = "NoNewPrivs:	1" ]
  [ "${lines[8]}" = "Seccomp:	2" ]
}

@test "exec: exit status, signals as 128+N, missing command" {
  start_ctr
  run rt exec "$ID" sh -c 'exit 7'
  [ "$status" -eq 7 ]
  run rt exec "$ID" sh -c 'kill -KILL $$'
  [ "$status" -eq 137 ]
  run rt exec "$ID" nosuchcmd
  [ "$status" -eq 1 ]
  [[ "$output" == *'exec: "nosuchcmd": executable file not found in $PATH'* ]]
  run rt exec "$ID" /etc/passwd
  [[ "$output" == *"permission denied"* ]]
}

@test "exec: --user, --cwd, --env, --additional-gids, --cap, --no-new-privs" {
  cfg '.process.noNewPrivileges=false'
  start_ctr
  run rt exec --user 1000:1000 -g 5 --cwd /tmp -e FOO=bar -e X=y "$ID" sh -c 'id -u; id -g; id -G; pwd; echo $FOO$X; grep NoNewPrivs /proc/self/status'
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1000 ]
  [[ "${lines[2]}" == *5* ]]
  [ "${lines[3]}" = /tmp ]
  [ "${lines[4]}" = bary ]
  [ "${lines[5]}" = "NoNewPrivs:	0" ]
  run rt exec --no-new-privs --cap CAP_SYS_TIME "$ID" grep -E '^(NoNewPrivs|CapBnd)' /proc/self/status
  [[ "$output" == *"NoNewPrivs:	1"* ]]
  bnd=$(echo "$output" | awk '/CapBnd/ {print $2}')
  [ $(( 0x$bnd & (1 << 25) )) -ne 0 ]   # CAP_SYS_TIME added
  run rt exec --user notanumber "$ID" true
  [ "$status" -eq 1 ]
  [[ "$output" == *"--user"* ]]
}

@test "exec: --process file (as conmon and the containerd shim pass it)" {
  start_ctr
  jq -n '{"args":["sh","-c","echo $A; pwd"],"env":["A=from-process-file","PATH=/bin"],"cwd":"/etc","user":{"uid":0,"gid":0}}' > "$BATS_TEST_TMPDIR/p.json"
  run rt exec --process "$BATS_TEST_TMPDIR/p.json" "$ID"
  [ "${lines[0]}" = from-process-file ]
  [ "${lines[1]}" = /etc ]
  echo '{"args": "notalist"}' > "$BATS_TEST_TMPDIR/bad.json"
  run rt exec --process "$BATS_TEST_TMPDIR/bad.json" "$ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"process.args"* ]]
}

@test "exec: the engine sample process files run unchanged" {
  start_ctr
  for f in podman containerd; do
    jq '.args=["echo","hello-accept"]' "$SANDLOCK_TESTS_DIR/fixtures/samples/$f-exec-process.json" > "$BATS_TEST_TMPDIR/$f.json"
    run rt exec --process "$BATS_TEST_TMPDIR/$f.json" "$ID"
    [ "$status" -eq 0 ]
    [ "$output" = hello-accept ]
  done
}

@test "exec -d --pid-file: the pid is in the container's cgroup and pid namespace" {
  start_ctr
  rt exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$ID" sleep 60
  epid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
  pid=$(rt state "$ID" | jq -r .pid)
  [ "$(readlink /proc/$epid/ns/pid)" = "$(readlink /proc/$pid/ns/pid)" ]
  [ "$(grep pids /proc/$epid/cgroup)" = "$(grep pids /proc/$pid/cgroup)" ]
  # kill --all reaches the exec'd process too
  rt kill --all "$ID" KILL
  while [ -d /proc/$epid ] && ! grep -q '^State:.*Z' /proc/$epid/status 2>/dev/null; do sleep 0.02; done
}

@test "exec: an exec'd process may signal the container's init (own pid namespace)" {
  cmd sh -c 'trap "echo got > /tmp/sig; exit 0" USR1; while :; do sleep 0.05; done'
  cfg '.root.readonly=false'
  start_ctr
  run rt exec "$ID" kill -USR1 1
  [ "$status" -eq 0 ]
  pid=$(rt state "$ID" | jq -r .pid)
  while [ ! -s "$BUNDLE/rootfs/tmp/sig" ]; do sleep 0.02; done
}

@test "exec: Landlock applies to the exec'd process" {
  cfg '.mounts += [{"destination":"/data","type":"tmpfs","source":"tmpfs","options":["rw"]}] | .annotations={"run.oci.sandlock.fs_readable":"/data"}'
  start_ctr
  run rt exec "$ID" sh -c '(echo x > /data/f) 2>&1'
  [[ "$output" == *"Permission denied"* ]]
}

@test "exec: a tty over --console-socket" {
  start_ctr
  sock=$BATS_TEST_TMPDIR/c.sock
  "$SANDLOCK_HELPERS/recvtty" "$sock" > "$BATS_TEST_TMPDIR/tty.out" & rpid=$!
  until [ -S "$sock" ]; do sleep 0.02; done
  rt exec -t --console-socket "$sock" "$ID" sh -c 'tty; [ -t 1 ] && echo isatty'
  wait $rpid
  out=$(tr -d '\r' < "$BATS_TEST_TMPDIR/tty.out")
  [[ "$out" == *"/dev/pts/"* ]]
  [[ "$out" == *isatty* ]]
  run rt exec -t "$ID" true
  [ "$status" -eq 1 ]
  [[ "$output" == *"--console-socket"* ]]
}

@test "exec into a created or stopped container is refused" {
  rt create -b "$BUNDLE" "$ID"
  run rt exec "$ID" true
  [ "$status" -eq 1 ]
  [[ "$output" == *"not running"* ]]
  rt kill "$ID" KILL
  pid=$(rt state "$ID" | jq -r .pid)
  while [ -d /proc/$pid ] && ! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; do sleep 0.02; done
  run rt exec "$ID" true
  [ "$status" -eq 1 ]
  [[ "$output" == *"not running"* ]]
}

@test "exec: foreground exec forwards SIGTERM" {
  start_ctr
  "$SANDLOCK_OCI" --root "$ROOT" exec "$ID" sh -c 'trap "exit 33" TERM; echo ready > /dev/null; while :; do sleep 0.05; done' & epid=$!
  # the exec'd process is the runtime's child; wait until it runs sh
  until c=$(pgrep -P $epid) && [ "$(cat /proc/$c/comm 2>/dev/null)" = sh ]; do sleep 0.05; done
  kill -TERM $epid
  wait $epid || s=$?
  [ "${s:-0}" -eq 33 ]
}
