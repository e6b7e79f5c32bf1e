#!/usr/bin/env bats
# Escapes through file descriptors: --preserve-fds holes that the runtime's
# own fds would fill and a cwd outside the container's root (CVE-2024-21626
# class).
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
teardown() { common_teardown; }

victim_untouched() { [ "$(stat -c %a "$VICTIM")" = 644 ]; }
no_state_left() { [ -z "$(ls "$ROOT")" ]; }

@test "preserve-fds: a hole in create's range is refused, naming the fd, before anything exists" {
  # Before: the state directory (flock()ed) took fd 4 and the parked init
  # kept it, so `start` hung on the lock.
  run rt create --preserve-fds 2 -b "$BUNDLE" "$ID" 3>&- 4>&-
  [ "$status" -eq 1 ]
  [[ "$output" == *"create: --preserve-fds 2: fd 3 is not open"* ]]
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
}
