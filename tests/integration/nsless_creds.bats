#!/usr/bin/env bats
# Namespace-less mode: a root runtime's supervisor keeps each thread's
# credentials between its calls (runtime/vroot-thread.c, docs/nsless.md
# "Whose rights") and must never act in stale ones: every change a thread
# makes to its own credentials (set*id, setgroups, setfsuid, capset, exec)
# is seen by its next call; a reused tid is not taken for the thread that
# had it; the umask kept with them follows umask(2), whichever thread
# calls it.  tests/helpers/credt makes each change with a raw system call
# (one thread only) and opens a file after it.  The last tests count the
# supervisor's reads of /proc/<tid>/status with strace.  As root: the
# runtime's supervisor then has capabilities the container process lacks.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# process.user root, process.args $@, capabilities the default set plus
# $CAPS (a jq array of names).
root_run() {
  local a='[]' x
  for x in "$@"; do a=$(jq -c --arg x "$x" '. + [$x]' <<<"$a"); done
  jqc ".process.user={uid:0,gid:0} | .process.args=$a
       | .process.capabilities |= with_entries(.value += ${CAPS:-[]} | .value |= unique)"
}
# A file only $1 (uid:gid) may open, mode $2.
secret() { echo s > "$(R)/s"; chown "$1" "$(R)/s"; chmod "$2" "$(R)/s"; }

@test "nsless creds (as root): a thread that drops to another uid is refused at once; its root sibling is not" {
  root_rootfs; secret 0:0 600
  CAPS='["CAP_SETUID","CAP_SETGID"]' root_run credt thread-setresuid /s
  run --separate-stderr as_root creds1
  echo "$output"
  # main, the thread before and after its setresuid, main again
  [ "$output" = $'OK\nOK\nEACCES\nOK' ]
}

@test "nsless creds (as root): setgroups gives and takes a group's access" {
  root_rootfs; secret 2000:1234 640
  CAPS='["CAP_SETGID"]' root_run credt setgroups /s 1234
  run --separate-stderr as_root creds2
  echo "$output"
  [ "$output" = $'EACCES\nOK\nEACCES' ]
}

@test "nsless creds (as root): setfsuid to the owner and back" {
  root_rootfs; secret 1000:1000 600
  CAPS='["CAP_SETUID"]' root_run credt setfsuid /s 1000
  run --separate-stderr as_root creds3
  echo "$output"
  [ "$output" = $'EACCES\nOK\nEACCES' ]
}

@test "nsless creds (as root): capset dropping CAP_DAC_OVERRIDE refuses the write that needs it" {
  root_rootfs; secret 1000:1000 600
  CAPS='["CAP_DAC_OVERRIDE"]' root_run credt capset /s
  run --separate-stderr as_root creds4
  echo "$output"
  [ "$output" = $'OK\nEACCES\nOK' ]
  [ "$(cat "$(R)/s")" = s ]
}

@test "nsless creds (as root): an exec recomputes the capabilities (bounding set dropped before it)" {
  root_rootfs; secret 1000:1000 600
  CAPS='["CAP_DAC_OVERRIDE","CAP_SETPCAP"]' root_run credt bset-exec /s /bin/credt
  run --separate-stderr as_root creds5
  echo "$output"
  # prctl changes nothing yet; the exec'd image has no CAP_DAC_OVERRIDE
  [ "$output" = $'OK\nOK\nEACCES' ]
}

@test "nsless creds (as root): an exec from a thread takes the leader's tid, not its credentials" {
  # The leader keeps opening (its credentials kept) while the thread,
  # its bounding set without CAP_DAC_OVERRIDE, execs: the new image has
  # the leader's tid and no CAP_DAC_OVERRIDE.
  root_rootfs; secret 1000:1000 600
  CAPS='["CAP_DAC_OVERRIDE","CAP_SETPCAP"]' root_run credt thread-exec /s /bin/credt
  local i
  for i in 1 2 3; do
    run --separate-stderr as_root "creds6-$i"
    echo "$output"
    [ "$output" = $'OK\nEACCES' ]
  done
}

@test "nsless creds (as root): the umask kept with the credentials follows umask(2)" {
  # Files created on a root caller's behalf take its umask, kept with its
  # credentials; the shell's umask builtin changes it between two creates
  # made by the shell itself (redirections, no fork).
  root_rootfs
  root_run sh -c 'umask 077; : > /tmp/a; umask 022; : > /tmp/b; umask 027; : > /tmp/c; stat -c %a /tmp/a /tmp/b /tmp/c'
  run --separate-stderr as_root creds-umask1
  echo "$output"
  [ "$output" = $'600\n644\n640' ]
}

@test "nsless creds (as root): a thread's umask(2) is every thread's (they share it)" {
  root_rootfs
  root_run credt umask-thread /tmp
  run --separate-stderr as_root creds-umask2
  echo "$output"
  [ "$output" = "644 600" ]
}

@test "nsless creds (as root): a storm of threads and processes, half dropped to uid 1000, each answered in its own credentials; the supervisor's fds stay bounded" {
  root_rootfs; secret 0:0 600
  CAPS='["CAP_SETUID","CAP_SETGID"]' root_run credt storm /s 1500
  "$SANDLOCK_OCI" --root "$D/rstate" create --isolation landlock -b "$D/bundle" creds7 \
    </dev/null >"$D/out" 2>&1
  local sup; sup=$(jq -r .supervisor_pid "$D/rstate/creds7/state.json")
  "$SANDLOCK_OCI" --root "$D/rstate" start creds7
  local max=0 n
  while [ -e "/proc/$sup" ] && ! grep -q '^wrong=' "$D/out"; do
    n=$(ls "/proc/$sup/fd" 2>/dev/null | wc -l)
    [ "$n" -gt "$max" ] && max=$n
    sleep 0.05
  done
  cat "$D/out"; echo "supervisor fds, most seen: $max"
  echo "# supervisor fds, most seen: $max" >&3
  grep -qx 'wrong=0' "$D/out"
  # 128 kept threads' pidfds at most, beside the view's and the dcache's
  [ "$max" -lt 250 ]
}

@test "nsless creds (as root): a reused tid is not taken for the thread that had it" {
  # A thread drops to uid 1000 and opens (its credentials kept), then
  # exits; the test moves the host's ns_last_pid so that the next thread,
  # root, gets the same tid (other processes of the host may take it first:
  # rounds where they did prove nothing and are retried).
  [ -w /proc/sys/kernel/ns_last_pid ] || skip "ns_last_pid not writable"
  root_rootfs; secret 0:0 600
  CAPS='["CAP_SETUID","CAP_SETGID"]' root_run credt reuse /s 10
  as_root creds8 </dev/null >"$D/out" 2>&1 &
  local bg=$! i t k hits=0 tid go
  tid=$(R)/tmp/credt.tid go=$(R)/tmp/credt.go
  for i in $(seq 10); do
    for t in $(seq 500); do [ -e "$tid" ] && break; sleep 0.01; done
    read -r t < "$tid"
    # No fork of this shell from the write until the helper's thread is
    # made (builtins only: each fork would take a pid).
    echo $((t - 1)) > /proc/sys/kernel/ns_last_pid
    : > "$go"
    for ((k = 0; k < 1000000; k++)); do [ -e "$go" ] || break; done
  done
  wait "$bg"
  cat "$D/out"
  ! grep -q '^dropped=OK' "$D/out"
  # every root thread opens, whoever had its tid
  [ "$(grep -c 'open=OK$' "$D/out")" -eq 10 ]
  hits=$(awk -F'[= ]' '$2 == $4' "$D/out" | wc -l)
  echo "rounds with the tid reused: $hits"
  [ "$hits" -gt 0 ] || skip "no tid was reused in 10 rounds (other processes of the host took them)"
}

# Runs "$@" as root in a container whose supervisor is straced ($D/tr;
# the container's output in $D/out): prints how many reads of a
# /proc/<tid>/status file the supervisor made.
status_reads() {
  local sup i
  root_run "$@"
  "$SANDLOCK_OCI" --root "$D/rstate" create --isolation landlock -b "$D/bundle" creds9 \
    </dev/null >"$D/out" 2>&1
  sup=$(jq -r .supervisor_pid "$D/rstate/creds9/state.json")
  strace -y -e trace=pread64,read -o "$D/tr" -p "$sup" 2>/dev/null &
  local tr=$!
  for i in $(seq 500); do grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$sup/status" && break; sleep 0.01; done
  "$SANDLOCK_OCI" --root "$D/rstate" start creds9
  wait "$tr"
  "$SANDLOCK_OCI" --root "$D/rstate" delete -f creds9 >/dev/null 2>&1 || true
  grep -c '/status>' "$D/tr" || true
}

@test "nsless creds (as root): a loop of one thread reads its /proc/<tid>/status once, not per call" {
  command -v strace >/dev/null || skip "strace not installed"
  local n=300 reads
  root_rootfs
  reads=$(status_reads sysc sloop "$n" /etc/passwd)
  echo "status reads for $n stat+open: $reads"
  # Before: one per serviced call (2 per iteration).  Now: the first call
  # of the process and the first after its exec.
  [ "$reads" -le 5 ]
}

@test "nsless creds (as root): so does a thread other than the leader (its thread group is kept too)" {
  command -v strace >/dev/null || skip "strace not installed"
  local n=300 reads
  root_rootfs
  reads=$(status_reads credt tloop /etc/passwd "$n")
  cat "$D/out"
  grep -qx OK "$D/out"
  echo "status reads for $n stats from a thread: $reads"
  # Before: two per call (its thread group's Tgid, then its credentials).
  [ "$reads" -le 6 ]
}

@test "nsless creds (as root): creates take the kept umask (no status read per create)" {
  command -v strace >/dev/null || skip "strace not installed"
  local reads
  root_rootfs
  reads=$(status_reads sh -c 'i=0; while [ $i -lt 200 ]; do : > /tmp/f$i; i=$((i + 1)); done; stat -c %a /tmp/f199')
  cat "$D/out"
  grep -qx 644 "$D/out"
  echo "status reads for 200 creates: $reads"
  # Before: two per create (credentials, umask).
  [ "$reads" -le 6 ]
}
