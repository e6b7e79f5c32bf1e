#!/usr/bin/env bats
# The notify supervisor seam (rt_create_opts.notify) end to end, through a
# test supervisor linked with the runtime (tests/helpers/rt-notify.c): it
# traps getppid and answers 4242, so busybox sh's $PPID shows the answer
# (0 in the container's pid namespace otherwise).  The helper is a child
# subreaper and waits for all its children, so "reaped=all" means no
# supervisor, watcher or container process is left.

load ../lib/common

NOTIFY=${SANDLOCK_HELPERS%/helpers}/rt-helpers/rt-notify

setup_file() { common_setup_file; }

setup() {
  require_root
  grep -qw user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null \
    || skip "the kernel has no seccomp user notification"
  [ -x "$NOTIFY" ] || { echo "rt-notify is not built: make helpers" >&2; return 1; }
  common_setup
  STATE=$BATS_TEST_TMPDIR/notify
  mkdir -p "$STATE"
}

# The container's stderr is a file: a container left by a failing test
# must not hold bats' pipe open.
sup() {
  run sh -c 'exec timeout -s KILL 30 "$@" 2>>"$0"' \
    "$BATS_TEST_TMPDIR/stderr" "$NOTIFY" "$BUNDLE" "$STATE" "$@"
}

teardown() {
  # Only after a failure is anything left: the init and supervisor this
  # test made (the watcher dies with the supervisor's pipe), its cgroup.
  local p d
  if [ -s "$STATE/pids" ]; then
    for p in $(cat "$STATE/pids"); do kill -9 "$p" 2>/dev/null || true; done
  fi
  if [ -n "${CG:-}" ]; then
    for d in /sys/fs/cgroup/*"$CG" /sys/fs/cgroup"$CG"; do
      [ -d "$d" ] || continue
      [ -e "$d/cgroup.kill" ] && echo 1 > "$d/cgroup.kill"
      for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p"; done
      rmdir "$d" 2>/dev/null || true
    done
  fi
  true
}

@test "notify: a trapped syscall gets the supervisor's answer; exit status and clean-up" {
  cmd sh -c 'echo ppid=$PPID; exit 7'
  sup run 4242
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ppid=4242"* ]]
  [[ "$output" == *$'\nexit=7\n'* ]]
  [[ "$output" == *"supervisor_exit=0"* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: the handler reads the caller's memory, answers or lets the call go on" {
  # The root is read-only: mkdir succeeds only where the supervisor read
  # the path and answered 0 itself; another path reaches the kernel.
  cmd sh -c 'mkdir /notify-ok && echo answered; mkdir /other 2>&1; echo rc=$?'
  sup run
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"answered"* ]]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *"rc=1"* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: the config's ERRNO still wins over the trap" {
  # Both filters see getppid; the strongest verdict (ERRNO) wins, so the
  # supervisor's 4242 never comes back.
  cfg '.linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}'
  cmd sh -c 'echo ppid=$PPID'
  sup run 4242
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"ppid=4242"* ]]
  # getppid failed with EPERM: -1, which busybox prints unsigned
  [[ "$output" == *$'\nppid=4294967295\n'* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: the supervisor is never the init's parent" {
  # The init's getppid is trapped (the supervisor's answer); its real
  # parent, read from the host's /proc, is the runtime (here the helper).
  cmd sh -c 'echo ppid=$PPID; exit 0'
  sup run 99
  [ "$status" -eq 0 ]
  [[ "$output" == *"ppid=99"* ]]
  self=$(sed -n 's/^self=//p' <<<"$output")
  sp=$(sed -n 's/^supervisor=//p' <<<"$output")
  parent=$(sed -n 's/^init_parent=//p' <<<"$output")
  [ -n "$self" ]
  [ -n "$sp" ]
  [ "$sp" -gt 0 ]
  [ "$parent" = "$self" ]
  [ "$parent" != "$sp" ]
}

@test "notify: the supervisor holds only what it needs, with three capabilities" {
  # The container waits on stdin, so it runs while the helper looks.
  cmd sh -c 'echo ppid=$PPID; read x'
  sup inspect
  echo "$output"
  [ "$status" -eq 0 ]
  fds=$(grep '^sup_fd=' <<<"$output" | sed 's/pipe:\[[0-9]*\]/pipe/' | tr '\n' ' ')
  [ "$fds" = "sup_fd=0:/dev/null sup_fd=1:/dev/null sup_fd=2:$BATS_TEST_TMPDIR/stderr sup_fd=3:anon_inode:[pidfd] sup_fd=4:anon_inode:seccomp notify sup_fd=5:pipe sup_fd=6:pipe " ]
  # CAP_DAC_OVERRIDE (1), CAP_KILL (5), CAP_SYS_PTRACE (19)
  [[ "$output" == *$'sup_CapEff:\t0000000000080022'* ]]
  [[ "$output" == *$'sup_CapBnd:\t0000000000080022'* ]]
  [[ "$output" == *$'sup_NoNewPrivs:\t1'* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: SIGKILL of the supervisor kills the running container" {
  cmd sh -c 'echo ppid=$PPID; exec sleep 1000'
  sup kill
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ppid=4242"* ]]
  [[ "$output" == *$'\nsignal=9\n'* ]]
  [[ "$output" == *"supervisor_signal=9"* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: SIGKILL of the supervisor kills a created container before start" {
  sup kill-created
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'\nsignal=9\n'* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: without a pid namespace, the supervisor's death kills the cgroup's processes" {
  LAYOUT=$("$SANDLOCK_OCI" check 2>/dev/null | sed -n 's/^cgroup layout: //p')
  [ -n "$LAYOUT" ] && [ "$LAYOUT" != none ] || skip "no cgroups mounted"
  CG=/sandlock-notify-$$-$BATS_TEST_NUMBER
  cfg ".linux.namespaces |= map(select(.type != \"pid\")) | .linux.cgroupsPath=\"$CG\""
  # The background sleep outlives its shell unless the cgroup is killed;
  # it would then hold the helper (its subreaper) until the timeout.
  cmd sh -c 'sleep 1000 & echo ppid=$PPID; wait'
  RT_NOTIFY_CGROUP=1 sup kill
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ppid=4242"* ]]
  [[ "$output" == *"reaped=all"* ]]
  [[ "$output" != *"error="* ]]
  run ls -d /sys/fs/cgroup/*"$CG" /sys/fs/cgroup"$CG"
  [ "$status" -ne 0 ]
}

@test "notify: delete of a created container leaves no supervisor" {
  sup delete
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'\nsignal=9\n'* ]]
  [[ "$output" == *"supervisor_exit=0"* ]]
  [[ "$output" == *"reaped=all"* ]]
}

@test "notify: bad ops or config fail the create, naming why, leaving nothing" {
  sup trap-bad
  [ "$status" -eq 1 ]
  [[ "$output" == *"error=create: notify: syscalls[0]: 4096 is not a native system call number"* ]]
  [[ "$output" == *"reaped=all"* ]]

  rm -f "$STATE"/*
  sup init-fail
  [ "$status" -eq 1 ]
  [[ "$output" == *"error=create: notify supervisor: test init refuses"* ]]
  [[ "$output" == *"reaped=all"* ]]

  rm -f "$STATE"/*
  cfg '.process.noNewPrivileges=false'
  sup run
  [ "$status" -eq 1 ]
  [[ "$output" == *"error=create: process.noNewPrivileges: must be true"* ]]
  [[ "$output" == *"reaped=all"* ]]

  rm -f "$STATE"/*
  cfg '.process.noNewPrivileges=true | .linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","listenerPath":"/nonexistent.sock","syscalls":[]}'
  sup run
  [ "$status" -eq 1 ]
  [[ "$output" == *"error=create: linux.seccomp.listenerPath: a process has one seccomp listener"* ]]
  [[ "$output" == *"reaped=all"* ]]
}
