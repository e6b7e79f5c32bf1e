#!/usr/bin/env bats
# A private dockerd (Debian's docker.io 20.10) with `--add-runtime
# sandlock=<built binary>`: docker run/exec/stop and exit codes through
# sandlock-oci, and its confinement inside the container
# (tests/lib/engines.bash).  Skipped, with the reason, when dockerd cannot
# start here.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/engines

setup_file() { docker_setup_file; }
teardown_file() { docker_teardown_file; }
setup() {
  require_root
  [ -z "${DOCKER_SKIP:-}" ] || skip "$DOCKER_SKIP"
}

IMG=$ENGINE_IMAGE
drun() { dk run --runtime sandlock --network none "$@"; }
# Waits (bounded) until the logs of container $1 contain $2.
wait_log() {
  local i
  for i in $(seq 100); do
    dk logs "$1" 2>&1 | grep -q -- "$2" && return 0
    sleep 0.1
  done
  echo "logs of $1 never showed '$2':"; dk logs "$1"; return 1
}

@test "docker run --runtime sandlock: output and exit codes 0, N, 126, 127" {
  run drun --rm "$IMG" sh -c 'echo to-out; exit 3'
  [ "$status" -eq 3 ]
  [ "$output" = to-out ]
  # the runtime really is sandlock-oci
  id=$(drun -d "$IMG" true)
  dk wait "$id"
  [ "$(dk inspect -f '{{.HostConfig.Runtime}}' "$id")" = sandlock ]
  dk rm "$id"
  run drun --rm "$IMG" true
  [ "$status" -eq 0 ]
  run -127 drun --rm "$IMG" /no/such/program
  echo "$output"
  run drun --rm "$IMG" /etc/passwd
  echo "$output"
  [ "$status" -eq 126 ]
}

@test "docker run: seccomp mode 2, NoNewPrivs per config, Landlock scoping" {
  run drun --rm "$IMG" cat /proc/self/status
  [[ "$output" == *$'Seccomp:\t2'* ]]
  [[ "$output" == *$'NoNewPrivs:\t0'* ]]
  run drun --rm --security-opt no-new-privileges "$IMG" cat /proc/self/status
  [[ "$output" == *$'Seccomp:\t2'* ]]
  [[ "$output" == *$'NoNewPrivs:\t1'* ]]
  # Landlock: on the host network a container still cannot connect to a
  # host abstract unix socket (scope-abstract-unix); the host itself can
  [ -x "$SANDLOCK_HELPERS/sysc" ] || skip "build/helpers/sysc missing (make helpers)"
  local sock=@sl-docker-$$
  "$SANDLOCK_HELPERS/sysc" ulisten "$sock" > "$BATS_TEST_TMPDIR/l" 3>&- &
  lpid=$!
  _wait_for 'grep -q READY "$BATS_TEST_TMPDIR/l"' 100
  run dk run --runtime sandlock --rm --network host "$IMG" sysc uconnect "$sock"
  echo "$output"
  [ "$output" = EPERM ]
  run "$SANDLOCK_HELPERS/sysc" uconnect "$sock"
  [ "$output" = OK ]
  wait "$lpid"
}

@test "docker run -d, exec (status, detached), logs, stop (-t, TERM handler), rm" {
  id=$(drun -d "$IMG" sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 1 & wait $!; done')
  wait_log "$id" ready
  run dk exec "$id" sh -c 'echo in-exec; exit 5'
  [ "$status" -eq 5 ]
  [ "$output" = in-exec ]
  run dk exec -e X=1 -w /tmp -u 1000 "$id" sh -c 'echo "$X $(pwd) $(id -u)"'
  [ "$output" = "1 /tmp 1000" ]
  run dk exec "$id" grep Seccomp: /proc/self/status
  [[ "$output" == *2 ]]
  dk exec -d "$id" sh -c 'echo detached > /tmp/d'
  _wait_for 'dk exec "$id" cat /tmp/d' 50
  [ "$(dk exec "$id" cat /tmp/d)" = detached ]
  SECONDS=0
  dk stop -t 30 "$id"
  [ "$SECONDS" -lt 10 ]
  [ "$(dk inspect -f '{{.State.ExitCode}}' "$id")" = 7 ]
  dk logs "$id" | grep -q got-term
  dk rm "$id"

  # without a handler pid 1 ignores TERM: docker kills after -t
  id=$(drun -d "$IMG" sleep 1000)
  SECONDS=0
  dk stop -t 1 "$id"
  [ "$SECONDS" -lt 8 ]
  [ "$(dk inspect -f '{{.State.ExitCode}}' "$id")" = 137 ]
  dk rm "$id"
  run dk ps -aq
  [ -z "$output" ]
}

@test "docker kill with a signal, restart, rm -f" {
  id=$(drun -d "$IMG" sh -c 'trap "echo got-usr1" USR1; echo ready; while :; do sleep 1 & wait $!; done')
  wait_log "$id" ready
  dk kill -s USR1 "$id"
  wait_log "$id" got-usr1
  dk restart -t 0 "$id"
  [ "$(dk inspect -f '{{.State.Running}}' "$id")" = true ]
  dk rm -f "$id"
  run dk ps -aq
  [ -z "$output" ]
  [ -z "$(leftover_cgroups "$DK_CGP")" ]
}

@test "docker pause/unpause and top" {
  need_runtime_cmd pause
  id=$(drun -d "$IMG" sh -c 'sleep 1000 & wait')
  pid=$(dk inspect -f '{{.State.Pid}}' "$id")
  run dk top "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"sleep 1000"* ]]
  dk pause "$id"
  [ "$(dk inspect -f '{{.State.Status}}' "$id")" = paused ]
  [ "$(freezer_state "$pid")" = FROZEN ]
  dk unpause "$id"
  [ "$(dk inspect -f '{{.State.Status}}' "$id")" = running ]
  [ "$(freezer_state "$pid")" = THAWED ]
  dk rm -f "$id"
}

@test "docker update --memory reaches the container's cgroup" {
  id=$(drun -d "$IMG" sleep 1000)
  pid=$(dk inspect -f '{{.State.Pid}}' "$id")
  dk update --memory 64m --memory-swap 64m "$id"
  cg=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$pid/cgroup")
  if [ -n "$cg" ]; then
    [ "$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes")" = 67108864 ]
  else
    cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
    [ "$(cat "/sys/fs/cgroup$cg/memory.max")" = 67108864 ]
  fi
  dk rm -f "$id"
}

@test "docker run -it and exec -it through a real pty" {
  command -v script >/dev/null || skip "script(1) missing"
  local D="env DOCKER_CONFIG=$ENG_DIR/cli docker -H unix://$ENG_DIR/docker.sock"
  run script -qec "$D run -it --rm --runtime sandlock --network none $IMG sh" /dev/null \
    < <(printf 'tty\necho typed-$((6*7))\nexit 3\n')
  echo "$output"
  [ "$status" -eq 3 ]
  [[ "$output" == *"/dev/pts/0"* ]]
  [[ "$output" == *typed-42* ]]
  id=$(drun -d "$IMG" sleep 1000)
  run script -qec "$D exec -it $id sh" /dev/null \
    < <(printf 'tty\necho typed-$((6*7))\nexit 4\n')
  echo "$output"
  [ "$status" -eq 4 ]
  [[ "$output" == *"/dev/pts/"* ]]
  [[ "$output" == *typed-42* ]]
  dk rm -f "$id"
}

# --cap-add SYS_ADMIN + seccomp=unconfined, the mounting part of
# --privileged: docker's --privileged asks for every capability, and this
# host's root lacks CAP_SYS_RESOURCE (capset fails with any runtime).
@test "docker --runtime sandlock-privileged (runtimeArgs --sandlock-disable=fs,seccomp): a SYS_ADMIN container mounts, no filter" {
  local opts=(--rm --cap-add SYS_ADMIN --security-opt seccomp=unconfined)
  # control: the plain entry stays confined
  run drun "${opts[@]}" "$IMG" sh -c 'mount -t tmpfs none /tmp && echo MOUNTED; grep ^Seccomp: /proc/self/status'
  echo "control: $output"
  [[ "$output" != *MOUNTED* ]]
  [[ "$output" == *"Seccomp:	2"* ]]
  run dk run --runtime sandlock-privileged --network none "${opts[@]}" "$IMG" \
    sh -c 'mount -t tmpfs none /tmp && echo MOUNTED; grep ^Seccomp: /proc/self/status'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'MOUNTED\nSeccomp:\t0')" ]
}
