#!/usr/bin/env bats
# Namespace-less mode: FIFO opens that wait for their peer (docs/nsless.md
# "FIFOs").  The runtime runs as nobody with user namespaces made
# unavailable (tests/lib/nsless.bash); "as root" tests run it as root.
load ../lib/common
load ../lib/nsless

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# The runtime as root, namespace-less; process.args "sh -c $1" as uid/gid
# 1000 with no groups (vrsys asuser; CAP_SETUID/SETGID given for that).
root_rt() { "$SANDLOCK_OCI" --root "$D/rstate" "$@"; }
as_1000_sh() {
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"vrsys\",\"asuser\",\"1000\",\"1000\",\"/bin/sh\",\"-c\",$(jq -Rn --arg s "$1" '$s')]
       | .process.capabilities |= with_entries(.value += [\"CAP_SETUID\",\"CAP_SETGID\"] | .value |= unique)"
}

# Runs "$@" bounded (a hang is a failure), its output in files: a hung
# container's processes would hold a pipe of bats' `run` open.  Sets
# status, output, stderr and lines as `run --separate-stderr` does.
bounded() {
  status=0
  timeout -k 5 30 "$@" > "$D/out" 2> "$D/err" < /dev/null || status=$?
  output=$(cat "$D/out"); stderr=$(cat "$D/err")
  mapfile -t lines < "$D/out"
}
# Runs sh -c "$1" in a container as nobody, bounded.
fifo_sh() {
  args sh -c "$1"
  bounded unshare -m --propagation private "$D/enter.sh" run "c$BATS_TEST_NUMBER"
}

@test "nsless fifo: a writer and a reader of a FIFO meet (the supervisor is not blocked)" {
  # Before: the supervisor's own blocking open stopped its one loop, so
  # the peer's open was never served: the container hung.
  fifo_sh 'mkfifo /tmp/p; echo hi > /tmp/p & cat /tmp/p; wait
           cat /tmp/p & echo there > /tmp/p; wait'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'hi\nthere')" ]
}

@test "nsless fifo: other calls are served while an open waits" {
  fifo_sh 'mkfifo /tmp/p; cat /tmp/p > /tmp/out & ls / > /dev/null && echo served
           echo late > /tmp/p; wait; cat /tmp/out'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'served\nlate')" ]
}

@test "nsless fifo: O_RDWR never waits, the caller's O_NONBLOCK is its own" {
  # O_WRONLY|O_NONBLOCK without a reader: ENXIO (not a waiting thread,
  # not a supervisor's open that succeeded); with a reader: opened.
  # O_RDONLY|O_NONBLOCK: opened at once.
  fifo_sh 'mkfifo /tmp/p; fifoprobe try /tmp/p rw; fifoprobe try /tmp/p wn
           fifoprobe try /tmp/p rn; fifoprobe try /tmp/../tmp/p wn
           exec 3<>/tmp/p; fifoprobe try /tmp/p wn; echo x > /tmp/p; echo done'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'OK\nENXIO\nOK\nENXIO\nOK\ndone')" ]
}

@test "nsless fifo: the walk path, openat2 and a relative path wait too" {
  # /tmp/../tmp/p is not plain: the walk's open (type known before it).
  fifo_sh 'mkfifo /tmp/p; cd /tmp
           fifoprobe write /tmp/../tmp/p one & fifoprobe read p; wait; echo
           fifoprobe write p two openat2 & fifoprobe read /tmp/./p openat2; wait; echo
           fifoprobe read ../tmp/p & fifoprobe write /tmp/p three; wait; echo'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'one\ntwo\nthree')" ]
}

@test "nsless fifo: a reader killed while it waits leaves no reader behind" {
  # The waiting thread's open ends with the caller: a writer then finds
  # no reader (ENXIO with O_NONBLOCK), and the next reader meets the next
  # writer.  (sleep: the reader must be waiting when it is killed.)
  fifo_sh 'mkfifo /tmp/p; cat /tmp/p & pid=$!; sleep 1; kill -9 $pid; wait $pid
           sleep 1; fifoprobe try /tmp/p wn
           echo w > /tmp/p & pid=$!; sleep 1; kill -9 $pid; wait $pid
           sleep 1; fifoprobe try /tmp/p rn
           echo again > /tmp/p & cat /tmp/p; wait'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'ENXIO\nOK\nagain')" ]
}

@test "nsless fifo: many opens wait at once, and more than the bound are refused" {
  # 40 readers of 40 FIFOs wait at once; each writer then meets its
  # reader.  Beyond VR_FIFO_MAX (64) waiting opens, one fails (ENFILE)
  # rather than stopping the container.  Readers and writers are not the
  # shell's children, nor is it waiting in an open: busybox sh's SIGCHLD
  # handler has no SA_RESTART, and a FIFO open it interrupts is EINTR, as
  # on the host.
  fifo_sh 'n() { wc -l < $1 2>/dev/null || echo 0; }
           i=0; while [ $i -lt 40 ]; do mkfifo /tmp/p$i; ( (cat /tmp/p$i >> /tmp/out) & ); i=$((i+1)); done
           i=0; while [ $i -lt 40 ]; do ( (echo $i > /tmp/p$i) & ); i=$((i+1)); done
           while [ $(n /tmp/out) -lt 40 ]; do sleep 0.1; done; n /tmp/out
           i=0; while [ $i -lt 70 ]; do mkfifo /tmp/q$i; ( (fifoprobe read /tmp/q$i >> /tmp/r) & ); i=$((i+1)); done
           while [ $(n /tmp/r) -lt 6 ]; do sleep 0.1; done; sort /tmp/r | uniq -c | sed "s/^ *//"
           i=0; while [ $i -lt 70 ]; do ( (echo x > /tmp/q$i) & ); i=$((i+1)); done
           while [ $(n /tmp/r) -lt 70 ]; do sleep 0.1; done; sort /tmp/r | uniq -c | sed "s/^ *//"'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '40\n6 ENFILE\n6 ENFILE\n64 x')" ]
}

@test "nsless fifo (as root): the waiting open is the caller's, in its credentials" {
  # A root supervisor keeps CAP_DAC_OVERRIDE: a waiting open made in its
  # own credentials would open root's 0600 FIFO for uid 1000 (here it
  # would wait for a reader: the run times out).  The walk's O_PATH open
  # checks no access: the thread's open is the one that must refuse.
  chown -R 0:0 "$(R)"; chmod 1777 "$(R)/tmp"
  mkfifo -m 0600 "$(R)/tmp/rootonly"; mkfifo -m 0666 "$(R)/tmp/shared"
  as_1000_sh 'id -u; fifoprobe try /tmp/../tmp/rootonly w; fifoprobe try /tmp/rootonly r
              fifoprobe write /tmp/../tmp/shared meet & fifoprobe read /tmp/shared; wait; echo'
  bounded "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" f1
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '1000\nEACCES\nEACCES\nmeet')" ]
}


@test "nsless exec under a soft RLIMIT_NOFILE below 1024: binaries, argv[0], scripts, dynamic ELFs" {
  # Every exec'd binary was injected at fd 1023, which the kernel refuses
  # at or above the soft limit: "Bad file descriptor" (EBADF).  `env
  # /bin/echo` passes one buffer as path and argv[0] (busybox dispatches
  # on its last name); the script's interpreter is busybox too.
  dyn_echo; chown -R nobody "$(R)/opt"
  printf '#!/bin/sh\necho script $0\n' > "$(R)/tmp/s.sh"; chmod 755 "$(R)/tmp/s.sh"; chown nobody "$(R)/tmp/s.sh"
  fifo_sh 'ulimit -n 256; /bin/true && echo true-ran; env /bin/echo argv0-kept
           ulimit -n 20; /tmp/s.sh; /opt/dynecho dynamic; sh -c "echo \$(ulimit -n)"'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'true-ran\nargv0-kept\nscript /tmp/s.sh\ndynamic\n20')" ]
}

@test "nsless exec under a low RLIMIT_NOFILE: the caller's own fds are not taken" {
  # The numbers are free ones below the limit: fds the caller holds near
  # it stay its own (ash keeps fd 9 and below for redirections).
  fifo_sh 'ulimit -n 12; exec 9>/tmp/nine 8>/tmp/eight; /bin/sh -c "echo kept >&9; echo also >&8"
           cat /tmp/nine /tmp/eight'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'kept\nalso')" ]
}

@test "nsless fifo: a FIFO reopened through /proc/self/fd waits on a thread too" {
  # /proc/<pid>/fd/N of a named FIFO is a new open of it, which waits for
  # a writer like any other (sleep: the writer comes after the reopen).
  fifo_sh 'mkfifo /tmp/p; fifoprobe hold /tmp/p /bin/sh -c "(sleep 1; echo via-fd > /tmp/p) & cat /proc/self/fd/3; wait"'
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = via-fd ]
}

@test "nsless exec (as root) under a low RLIMIT_NOFILE: uid 1000's exec finds free fds in its own table" {
  # A root supervisor reads another uid's limit and fd table (its own
  # credentials for that, not the caller's).
  chown -R 0:0 "$(R)"; chmod 1777 "$(R)/tmp"
  as_1000_sh 'ulimit -n 64; id -u; /bin/true && echo ran; env /bin/echo argv0'
  bounded "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" x1
  echo "$output"; echo "$stderr" | grep -v warning || true
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '1000\nran\nargv0')" ]
}
