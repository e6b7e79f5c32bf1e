#!/usr/bin/env bats
# Escapes through file descriptors and through the parked runtime binary:
# --preserve-fds holes that the runtime's own fds would fill and a cwd
# outside the container's root (CVE-2024-21626 class), and a dumpable host
# binary in a pid namespace another container shares (CVE-2019-5736 class).
load ../lib/common

setup_file() { common_setup_file; }
setup() {
  require_root
  common_setup
  ID=$(cid)
  # A root-owned host file next to the state root ($ROOT/../victim).
  VICTIM=$BATS_TEST_TMPDIR/victim
  : > "$VICTIM"
  chmod 644 "$VICTIM"
}
teardown() {
  common_teardown
  if [ -n "${RL:-}" ]; then
    su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $RL/state delete -f r2" >/dev/null 2>&1
    rm -rf "$RL"
  fi
}

victim_untouched() { [ "$(stat -c %a "$VICTIM")" = 644 ]; }
no_state_left() { [ -z "$(ls "$ROOT")" ]; }
# Every Landlock protection and the default seccomp profile off.
all_off() { cfg '.annotations["run.oci.sandlock.disable"]="fs,scope-signal,scope-abstract-unix,seccomp"'; }

@test "preserve-fds: a hole in create's range is refused, naming the fd, before anything exists" {
  # Before: the state directory (flock()ed) took fd 4 and the parked init
  # kept it, so every later command on the container hung on the lock.
  st=0
  "$SANDLOCK_OCI" --root "$ROOT" create --preserve-fds 2 -b "$BUNDLE" "$ID" \
    3>&- 4>&- >/dev/null 2>"$BATS_TEST_TMPDIR/err" || st=$?
  if [ "$st" -eq 0 ]; then
    kill -9 "$(jq -r .pid "$ROOT/$ID/state.json")"    # frees the lock
    false
  fi
  [ "$st" -eq 1 ]
  grep -q "create: --preserve-fds 2: fd 3 is not open" "$BATS_TEST_TMPDIR/err"
  no_state_left
  run rt run --preserve-fds 2 -b "$BUNDLE" "$ID" 3</dev/null 4>&-
  [ "$status" -eq 1 ]
  [[ "$output" == *"run: --preserve-fds 2: fd 4 is not open"* ]]
  no_state_left
}

@test "preserve-fds: exec with a hole cannot reach the host's state directory" {
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$ID"
  # Before: the state directory landed on fd 4, inside the preserved range,
  # and a cwd of /proc/self/fd/4 put the process in it on the host.
  run rt exec --preserve-fds 3 --cwd /proc/self/fd/4 "$ID" \
    sh -c 'chmod 4777 ../../victim; echo chmod=$?' 3>&- 4>&- 5>&-
  [ "$status" -eq 1 ]
  [[ "$output" == *"exec: --preserve-fds 3: fd 3 is not open"* ]]
  victim_untouched
}

@test "cwd: a passed directory outside the root is refused (create and exec)" {
  cfg '.process.cwd="/proc/self/fd/3"'
  cmd sh -c 'chmod 4777 victim; echo chmod=$?'
  run rt run --preserve-fds 1 -b "$BUNDLE" "$ID" 3<"$BATS_TEST_TMPDIR"
  [ "$status" -eq 1 ]
  [[ "$output" == *'process.cwd `/proc/self/fd/3`: outside the container'"'"'s root'* ]]
  victim_untouched
  no_state_left

  cfg '.process.cwd="/"'
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$ID"
  run rt exec --preserve-fds 1 --cwd /proc/self/fd/3 "$ID" \
    sh -c 'chmod 4777 victim; echo chmod=$?' 3<"$BATS_TEST_TMPDIR"
  [ "$status" -eq 1 ]
  [[ "$output" == *"outside the container's root"* ]]
  victim_untouched
  # A cwd inside the root still works, through a symlink too.
  ln -s /tmp "$BUNDLE/rootfs/tmplink"
  run rt exec --cwd /tmplink "$ID" pwd
  [ "$status" -eq 0 ]
  [ "$output" = /tmp ]
}

@test "preserve-fds: a count beyond the fd limit is refused by name" {
  # Before: "Bad file descriptor", naming nothing.
  run rt create --preserve-fds 65536 -b "$BUNDLE" "$ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"--preserve-fds 65536: fds 3..65538 exceed the open-file limit"* ]]
  no_state_left
  run rt exec --preserve-fds 70000 "$ID" true
  [ "$status" -eq 1 ]
  [[ "$output" == *"--preserve-fds: expected a number from 0 to 65536"* ]]
}

@test "preserve-fds: passed fds reach the container, and nothing of the runtime's does" {
  echo three > "$BATS_TEST_TMPDIR/f3"
  echo four > "$BATS_TEST_TMPDIR/f4"
  cmd sh -c 'cat <&3; cat <&4; ls /proc/self/fd | sort -n | tr "\n" " "'
  run rt run --preserve-fds 2 -b "$BUNDLE" "$ID" 3<"$BATS_TEST_TMPDIR/f3" 4<"$BATS_TEST_TMPDIR/f4"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = three ]
  [ "${lines[1]}" = four ]
  # 0-4, and the fd ls itself opens for the directory
  [[ "${lines[2]}" =~ ^"0 1 2 3 4 "[0-9]+" "$ ]]

  # The parked init holds stdio, the passed fd and the exec and status
  # fifos only: no state directory (its flock would hang every other
  # command).
  cmd true
  rt create --preserve-fds 1 -b "$BUNDLE" "$ID" 3</dev/null
  pid=$(rt state "$ID" | jq -r .pid)
  [ "$(ls /proc/$pid/fd | sort -n | head -4 | tr '\n' ' ')" = "0 1 2 3 " ]
  for fd in $(ls /proc/$pid/fd | sort -n | tail -n +5); do
    case "$(readlink /proc/$pid/fd/$fd)" in
      "$ROOT/$ID/exec.fifo" | "$ROOT/$ID/start.status") ;;
      *) echo "fd $fd: $(readlink /proc/$pid/fd/$fd)"; false ;;
    esac
  done
  timeout 10 "$SANDLOCK_OCI" --root "$ROOT" start "$ID"

  # An exec'd process: stdio and its passed fd, nothing else.
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$ID-x"
  run rt exec --preserve-fds 1 "$ID-x" sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "' 3</dev/null
  [ "$status" -eq 0 ]
  [[ "$output" =~ ^"0 1 2 3 "[0-9]+" "$ ]]
}

@test "dumpable: a container sharing the pid namespace cannot open the parked init's binary, environ or mem" {
  all_off
  # The attacker is A's own init, told B's pid through a fifo (so the
  # test needs no exec); it answers through another.
  mkfifo "$BUNDLE/rootfs/tmp/go" "$BUNDLE/rootfs/tmp/out"
  cfg '.process.args=["sh","-c","read n < /tmp/go; { readlink /proc/$n/exe || echo denied; cat /proc/$n/environ >/dev/null 2>&1 || echo denied; sysc open /proc/$n/exe path; sysc open /proc/$n/exe w; sysc open /proc/$n/mem r; } > /tmp/out 2>&1; read n < /tmp/go; readlink /proc/$n/exe > /tmp/out 2>&1; sleep 300"]'
  rt run -d -b "$BUNDLE" "$ID"
  apid=$(rt state "$ID" | jq -r .pid)
  B=$BATS_TEST_TMPDIR/b
  make_bundle "$B" sleep 300
  cfg_in "$B" '.annotations["run.oci.sandlock.disable"]="fs,scope-signal,scope-abstract-unix,seccomp"'
  cfg_in "$B" ".linux.namespaces |= map(if .type == \"pid\" then .path = \"/proc/$apid/ns/pid\" else . end)"
  rt create -b "$B" "$ID-b"
  bpid=$(rt state "$ID-b" | jq -r .pid)
  nspid=$(awk '/^NSpid:/ { print $NF }' /proc/$bpid/status)
  [ "$nspid" -gt 1 ]
  echo "$nspid" | timeout 20 tee "$BUNDLE/rootfs/tmp/go" >/dev/null
  mapfile -t lines < <(timeout 20 cat "$BUNDLE/rootfs/tmp/out")
  # Before: readlink showed the host's runtime binary, environ the runtime's
  # environment, and the binary and mem opened (O_PATH: reopened for writing
  # once nothing runs it).
  [ "${lines[0]}" = denied ]
  [ "${lines[1]}" = denied ]
  [ "${lines[2]}" = EACCES ]
  [ "${lines[3]}" = EACCES ]
  [ "${lines[4]}" = EACCES ]
  # execve makes it dumpable again, as any process: the control.
  rt start "$ID-b"
  echo "$nspid" | timeout 20 tee "$BUNDLE/rootfs/tmp/go" >/dev/null
  [ "$(timeout 20 cat "$BUNDLE/rootfs/tmp/out")" = /bin/busybox ]
}

@test "dumpable: rootless, the parent still maps the user and sets oom_score_adj; the parked init is closed to its own uid" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null || skip "unprivileged user namespaces are not available"
  RL=$(mktemp -d /tmp/sandlock-escape-rl.XXXXXX)
  D=$RL
  chmod 755 "$D"
  make_rootfs "$D/bundle/rootfs"
  chown -R nobody "$D"
  as_nobody() { su nobody -s /bin/sh -c "cd $D/bundle && $*"; }
  as_nobody "$SANDLOCK_OCI spec --rootless"
  jq '.process.terminal=false | .process.args=["sh","-c","cat /proc/self/oom_score_adj /proc/self/uid_map"] | .process.oomScoreAdj=100' \
    "$D/bundle/config.json" > "$D/c"
  chown nobody "$D/c"; mv "$D/c" "$D/bundle/config.json"
  run as_nobody "$SANDLOCK_OCI --root $D/state run r1"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 100 ]
  [[ "${lines[1]}" == *"0"*"65534"*"1"* ]]
  as_nobody "$SANDLOCK_OCI --root $D/state create r2"
  pid=$(jq .pid "$D/state/r2/state.json")
  # Before: the same uid read the runtime's binary path and environment.
  run as_nobody "readlink /proc/$pid/exe"
  [ "$status" -ne 0 ]
  run as_nobody "cat /proc/$pid/environ"
  [ "$status" -ne 0 ]
  as_nobody "$SANDLOCK_OCI --root $D/state delete -f r2"
  # exec, whose joiner is non-dumpable too, still works rootless.
  jq '.process.args=["sleep","300"]' "$D/bundle/config.json" > "$D/c"
  chown nobody "$D/c"; mv "$D/c" "$D/bundle/config.json"
  as_nobody "$SANDLOCK_OCI --root $D/state run -d r2"
  run as_nobody "$SANDLOCK_OCI --root $D/state exec r2 id -u"
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
  as_nobody "$SANDLOCK_OCI --root $D/state delete -f r2"
}

@test "dumpable: time offsets still apply in a user namespace that maps root elsewhere" {
  [ -e /proc/self/ns/time ] || skip "no time namespaces"
  # Before: setresuid(0) in the namespace made the init non-dumpable (a
  # new euid), its /proc/self/timens_offsets root's, and create failed.
  # The bundle where uid 100000 can reach it (bats' own tmpdir is 0700).
  RL=$(mktemp -d /tmp/sandlock-escape-tn.XXXXXX)
  chmod 755 "$RL"
  BUNDLE=$RL/bundle
  make_bundle "$BUNDLE" sh -c 'id -u; cut -d. -f1 /proc/uptime'
  chown -R 100000:100000 "$BUNDLE/rootfs"
  cfg '.linux.namespaces += [{"type":"user"},{"type":"time"}]
       | .linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]
       | .linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]
       | .linux.timeOffsets={"boottime":{"secs":864000,"nanosecs":0},"monotonic":{"secs":864000,"nanosecs":0}}'
  run rt run -b "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" -ge 864000 ]
}
