#!/usr/bin/env bats
# Namespace-less mode, `pid` listed in linux.namespaces: no pid namespace
# is made, so calls that name a process by pid (sched_setaffinity,
# sched_setscheduler, setpriority, prlimit64, pidfd_open, …) would reach
# the host's processes of the same user.  The trap sends those that name
# another process to the supervisor: a process of the container is done
# by the kernel, anything else is ESRCH (docs/nsless.md "Capabilities and
# the host's namespaces", runtime/vroot-pid.c).  Each test starts a host
# process of the container's user and checks its nice value, limits,
# CPUs and policy did not change; teardown kills it.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0

setup() {
  nsless_setup
  HOSTPID=
}
teardown() {
  [ -n "$HOSTPID" ] && kill -9 "$HOSTPID" 2>/dev/null
  nsless_teardown
}

# A host process of uid:gid $1 (the target).
host_sleep() { setpriv --reuid="$1" --regid="$1" --clear-groups sleep 1000 & HOSTPID=$!; }
# What the calls here change: nice, policy, CPUs, RLIMIT_NOFILE.
marks() {
  awk '{print $19, $41}' "/proc/$1/stat"
  grep Cpus_allowed_list "/proc/$1/status"
  grep 'open files' "/proc/$1/limits"
}
ncpu() { grep -c ^processor /proc/cpuinfo; }
# The calls on pid $1: setpriority(PRIO_PROCESS, 5), prlimit64(NOFILE,
# 100), sched_setaffinity(CPU 1), sched_setscheduler(SCHED_BATCH),
# pidfd_open.
CALLS='sysc setpriority 0 $p 5; sysc prlimit $p 7 100 100; sysc setaffinity $p 1; sysc setsched $p 3; sysc pidfd_open $p 0'
ALL_OK=$'OK\nOK\nOK\nOK\nOK'
ALL_ESRCH=$'ESRCH\nESRCH\nESRCH\nESRCH\nESRCH'
# In the container: what the calls changed on $p.
SHOW='cut -d" " -f19,41 /proc/$p/stat; grep Cpus_allowed_list /proc/$p/status; grep -o "open files *[0-9]* *[0-9]*" /proc/$p/limits | tr -s " "'

# Runs $CALLS on a host process of uid $1 with the runner $2…, then
# checks the host process did not change.
on_host() {
  host_sleep "$1"; shift
  local before; before=$(marks "$HOSTPID")
  args sh -c "p=$HOSTPID; $CALLS"
  run --separate-stderr "$@"
  echo "out: $output"; echo "err: $stderr"
  [ "$(marks "$HOSTPID")" = "$before" ]
  [ "$output" = "$ALL_ESRCH" ]
}

# Runs $CALLS on the container's own child, then on an orphan the init
# adopted, with the runner $1…; each is changed.
on_own() {
  args sh -c "sleep 100 & p=\$!; $CALLS; $SHOW; kill \$p
              sh -c 'sleep 100 & echo \$! > /tmp/orphan'; p=\$(cat /tmp/orphan); $CALLS; $SHOW; kill \$p"
  run --separate-stderr "$@"
  echo "out: $output"; echo "err: $stderr"
  local changed=$'5 3\nCpus_allowed_list:\t1\nopen files 100 100'
  [ "$output" = "$ALL_OK"$'\n'"$changed"$'\n'"$ALL_OK"$'\n'"$changed" ]
}

@test "nsless sched: an ordinary user's container cannot renice, pin, reschedule, prlimit or pidfd a host process of its user (ESRCH)" {
  [ "$(ncpu)" -ge 2 ] || skip "one CPU: sched_setaffinity to CPU 1 cannot be told apart"
  on_host 65534 as_user run sched1
}

@test "nsless sched: an ordinary user's container renices, pins, reschedules and prlimits its own processes" {
  [ "$(ncpu)" -ge 2 ] || skip "one CPU: sched_setaffinity to CPU 1 cannot be told apart"
  on_own as_user run sched2
}

@test "nsless sched: a root container cannot touch a host root process (ESRCH)" {
  [ "$(ncpu)" -ge 2 ] || skip "one CPU: sched_setaffinity to CPU 1 cannot be told apart"
  root_rootfs
  jqc '.process.user={uid:0,gid:0}'
  on_host 0 as_root sched3
}

@test "nsless sched: a root container renices, pins, reschedules and prlimits its own processes" {
  [ "$(ncpu)" -ge 2 ] || skip "one CPU: sched_setaffinity to CPU 1 cannot be told apart"
  root_rootfs
  jqc '.process.user={uid:0,gid:0}'
  on_own as_root sched4
}

@test "nsless sched: a process group or a uid stays refused; the caller itself and its other threads work" {
  # the last: sched_setaffinity of another thread of the caller by its tid
  args sh -c 'sysc setpriority 1 0 5; sysc setpriority 2 0 5; sysc setpriority 0 0 5; sysc prlimit 0 7 1000 1000; sysc setaffinity 0 0; sysc tidaffinity 0'
  run --separate-stderr as_user run sched5
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = $'EPERM\nEPERM\nOK\nOK\nOK\nOK' ]
}

@test "nsless sched: without pid listed, the host's processes are the container's (nothing trapped)" {
  host_sleep 65534
  jqc 'del(.linux.namespaces[] | select(.type == "pid"))'
  args sh -c "sysc getpriority 0 $HOSTPID"
  run --separate-stderr as_user run sched6
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = OK ]
}

@test "nsless sched: an exec'd process reaches the init; the exec server (the runtime's own) is ESRCH" {
  args sleep 300
  as_user run -d sched7 </dev/null >/dev/null 2>&1
  local init xs
  init=$(as_user state sched7 | jq -r .pid)
  xs=$(cat "/proc/$init/task/$init/children"); xs=${xs%% *}
  echo "init $init exec server $xs"
  [ -n "$xs" ]
  # (as_user's command line is split again: the calls are a script)
  echo "sysc setpriority 0 $init 5; sysc setpriority 0 $xs 5; sysc pidfd_open $xs 0" > "$(R)/t.sh"
  run --separate-stderr as_user exec sched7 sh /t.sh
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = $'OK\nESRCH\nESRCH' ]
  [ "$(awk '{print $19}' "/proc/$init/stat")" = 5 ]
  [ "$(awk '{print $19}' "/proc/$xs/stat")" = 0 ]
}
