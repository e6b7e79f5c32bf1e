#!/usr/bin/env bats
# Namespace-less mode: open(O_PATH) in the view (docs/nsless.md "O_PATH"),
# the *at(fd, "", AT_EMPTY_PATH) calls on such fds.  The runtime runs as
# nobody with user namespaces made unavailable (tests/lib/nsless.bash);
# tests marked "as root" run it as root (process.user 0).
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# As root (as_root, tests/lib/nsless.bash) the supervisor keeps
# CAP_DAC_OVERRIDE: the only one that can read an exec-only file.
# process.user root, process.args "sh -c $1" run as uid/gid 1000 with no
# groups (vrsys asuser; CAP_SETUID/SETGID given for that).
as_1000_sh() {
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"vrsys\",\"asuser\",\"1000\",\"1000\",\"/bin/sh\",\"-c\",$(jq -Rn --arg s "$1" '$s')]
       | .process.capabilities |= with_entries(.value += [\"CAP_SETUID\",\"CAP_SETGID\"] | .value |= unique)"
}

@test "nsless opath: O_PATH of a directory and a file, and what programs do with them" {
  # ADDFD cannot inject an O_PATH file: every open(O_PATH) was EBADF.
  args sh -c 'cd /; opath /etc - type estat fchdir at:passwd ls reopen readlink
              opath /etc/passwd - type estat reopen
              opath /etc openat2,dir type at:group
              opath /etc/passwd rel,nofollow type
              opath /bin/sh - type
              opath /proc/self/maps - grep:/bin/opath grep:bundle/rootfs
              opath /bin/busybox - exec'
  run --separate-stderr as_user run op1
  echo "$output"
  [ "$(grep -c '^open=OK$' <<<"$output")" = 7 ]
  [[ "$output" == *$'type=dir\nestat=dir\nfchdir=/etc\nat:passwd=root:x:0:0:root:/root:/bin/sh\nls=OK\nreopen=OK\nreadlink=ENOENT'* ]]
  [[ "$output" == *$'open=OK\ntype=reg\nestat=reg\nreopen=OK'* ]]
  [[ "$output" == *$'type=dir\nat:group=root:x:0:'* ]]
  # /proc/<pid>/maps read through an O_PATH fd is drawn as a read open's
  # is: the view's paths, never the host's.
  [[ "$output" == *$'open=OK\ntype=reg\nopen=OK\ntype=reg\nopen=OK\ngrep:/bin/opath=yes\ngrep:bundle/rootfs=no\nopen=OK\nexec=exec-ran'* ]]
}

@test "nsless opath: what cannot be emulated gets ELOOP or EACCES, never a device open" {
  mkdir -p "$(R)/secret" "$(R)/search"
  echo s > "$(R)/secret/f"; echo t > "$(R)/search/f"
  chown 0:0 "$(R)/secret/f" "$(R)/search"
  chmod 600 "$(R)/secret/f"; chmod 711 "$(R)/search"; chmod 644 "$(R)/search/f"
  mkfifo "$(R)/tmp/fifo"; chown nobody "$(R)/tmp/fifo"
  args sh -c 'opath /bin/sh nofollow type; opath /secret/f - type
              opath /search - type; opath /search/f - at:x; cat /search/f
              opath /dev/null - type; opath /tmp/fifo - type
              opath /etc/passwd dir type; opath /proc/self/fd/1 - type
              opath /tmp/new creat type; ls /tmp/new; opath /etc openat2,rdwr type'
  run --separate-stderr as_user run op2
  echo "$output"
  [ "${lines[0]}" = open=ELOOP ]       # a symlink itself (O_NOFOLLOW)
  [ "${lines[1]}" = open=EACCES ]      # a file nobody may not read
  [ "${lines[2]}" = open=EACCES ]      # a search-only directory
  [ "${lines[3]}" = open=OK ]          # ... whose file may be read
  [ "${lines[5]}" = t ]
  [ "${lines[6]}" = open=EACCES ]      # a device node is never opened
  [ "${lines[7]}" = open=EACCES ]      # nor a FIFO (it would release a writer)
  [ "${lines[8]}" = open=ENOTDIR ]
  [ "${lines[9]}" = open=EACCES ]      # a pipe, through /proc/self/fd
  [ "${lines[10]}" = open=ENOENT ]     # O_CREAT is dropped with O_PATH ...
  [ ! -e "$(R)/tmp/new" ]
  [ "${lines[11]}" = open=EINVAL ]     # ... and refused by openat2
}

@test "nsless opath: *at(fd, \"\", AT_EMPTY_PATH) on an O_PATH fd" {
  mkdir -p "$(R)/ro"
  echo r > "$(R)/ro/f"; chown -R nobody "$(R)/ro"
  jqc '.mounts += [{"destination":"/ro","type":"bind","source":"'"$(R)/ro"'","options":["bind","ro"]}]'
  args sh -c 'echo w > /tmp/f; touch -d 2020-01-01 /tmp/f
              opath /tmp/f - chmod:600 chown utime link:/tmp/g
              stat -c "%a %Y %h" /tmp/f; cat /tmp/g
              opath /ro/f - chmod:600 utime link:/tmp/h; ls /tmp/h
              opath /tmp/f rdonly chown link:/tmp/k; cat /tmp/k'
  run --separate-stderr as_user run op3
  echo "$output"
  [[ "$output" == *$'open=OK\nchmod:600=OK\nchown=OK\nutime=OK\nlink:/tmp/g=OK\n600 0 2\nw'* ]]
  [[ "$output" == *$'open=OK\nchmod:600=EROFS\nutime=EROFS\nlink:/tmp/h=EXDEV'* ]]
  # The same calls on an fd that is not O_PATH (they were ENOENT: "" was
  # walked as a path).
  [[ "$output" == *$'open=OK\nchown=OK\nlink:/tmp/k=OK\nw'* ]]
  [ "$(stat -c %a "$(R)/ro/f")" = 644 ]
}

@test "nsless exec-only (as root): a binary uid 1000 may execute and not read runs, and stays unreadable" {
  # The exec path read the file in the caller's credentials: EACCES,
  # where a namespaced container runs it.
  root_rootfs
  dyn_echo
  mkdir -p "$(R)/opt/bb"
  cp "$(R)/bin/opath" "$(R)/opt/xo"; cp "$(R)/bin/busybox" "$(R)/opt/bb/busybox"
  chown -R 0:0 "$(R)/opt"; chmod 0711 "$(R)/opt/xo" "$(R)/opt/bb/busybox" "$(R)/opt/dynecho"
  as_1000_sh 'id -u; /opt/bb/busybox echo bb-ran; /opt/dynecho dyn-ran; /opt/xo --self
              cat /opt/xo > /dev/null; echo cat=$?
              /opt/xo --cofiles /opt/xo --self'
  run --separate-stderr as_root xo1
  echo "$output"; echo "$stderr"
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = bb-ran ]
  [ "${lines[2]}" = dyn-ran ]
  # Exec of a file it may not read makes the image non-dumpable, as the
  # kernel does for the original: no /proc/<pid>/mem (a process of the
  # same uid tries), maps, ptrace.
  [ "${lines[3]}" = dumpable=0 ]
  [ "${lines[4]}" = exe=EACCES ]
  [ "${lines[5]}" = mem=EACCES ]
  [ "${lines[6]}" = cat=1 ]
  # A process sharing the fd table keeps what the view injected for the
  # exec: a file that can be neither read nor reopened nor made readable.
  [[ "$output" == *$'dumpable=0\nexe=EACCES\nmem=EACCES\nfd=left\nread=EBADF\nreopen=EACCES\nfchmod=EPERM'* ]]
}

@test "nsless exec-only (as root): no x, an exec-only script, and a readable binary are as in the kernel" {
  # Regression guard: passes before and after.  The copy is made only for
  # a file the caller may execute: without x it is EACCES; a script's
  # interpreter could not read it (EACCES); a readable binary still runs
  # as the file itself, dumpable.
  root_rootfs
  mkdir -p "$(R)/opt"
  cp "$(R)/bin/opath" "$(R)/opt/nox"; cp "$(R)/bin/opath" "$(R)/opt/rx"
  printf '#!/bin/sh\necho script-ran\n' > "$(R)/opt/s"
  chmod 0700 "$(R)/opt/nox"; chmod 0711 "$(R)/opt/s"; chmod 0755 "$(R)/opt/rx"
  as_1000_sh '/opt/nox --self; echo nox=$?; /opt/s; echo s=$?; /opt/rx --self'
  run --separate-stderr as_root xo2
  echo "$output"; echo "$stderr"
  [[ "$output" == *"nox=126"* ]]
  [[ "$output" == *"s=126"* ]]
  [[ "$output" != *script-ran* ]]
  [[ "$output" == *$'dumpable=1\nexe=OK\nmem=OK'* ]]
}

@test "nsless exec-only: an ordinary user's container cannot run it (EACCES)" {
  # Regression guard: its supervisor has the caller's very ids and no
  # capability, so it cannot read the file either; documented.
  mkdir -p "$(R)/opt"
  cp "$(R)/bin/opath" "$(R)/opt/xo"; chown 0:0 "$(R)/opt/xo"; chmod 0711 "$(R)/opt/xo"
  args sh -c '/opt/xo --self; echo rc=$?'
  run --separate-stderr as_user run xo3
  echo "$output"; echo "$stderr"
  [ "$output" = rc=126 ]
  [[ "$stderr" == *"Permission denied"* ]]
}

# Shell text: a datagram receiver at /tmp/$1.sock piped into a group that
# reads its READY, sends with "opath --dgram-send /tmp/$1.sock $2", then
# prints what it received (no polling: the pipe orders them).
dgram_sh() { echo "opath --dgram-recv /tmp/$1.sock | { read r; opath --dgram-send /tmp/$1.sock $2; cat; }"; }

@test "nsless datagrams (as root): SCM_CREDENTIALS carry the sender's uid and gid" {
  # An on-behalf send is made by the supervisor's thread, whose real ids
  # were root's: a uid-1000 process's datagram told its receiver uid 0.
  root_rootfs
  as_1000_sh "$(dgram_sh a); $(dgram_sh b explicit); $(dgram_sh c mmsg)"
  run --separate-stderr as_root cred1
  echo "$output"; echo "$stderr"
  [ "${lines[0]}" = send=OK ]
  [[ "${lines[1]}" == "uid=1000 gid=1000 pid="* ]]
  # The caller's own pid given explicitly is accepted (it was EPERM).
  [ "${lines[2]}" = send=OK ]
  [[ "${lines[3]}" == "uid=1000 gid=1000 pid="* ]]
  # sendmmsg: sent on the thread of the caller's ids, msg_len written
  # back from the supervisor's own.
  [ "${lines[4]}" = send=OK ]
  [[ "${lines[5]}" == "uid=1000 gid=1000 pid="* ]]
}

@test "nsless stream sockets (as root): SO_PEERCRED carries the connecting uid and gid" {
  # The on-behalf connect was made by a thread whose ids were root's.
  root_rootfs
  as_1000_sh 'opath --stream-listen /tmp/s.sock | { read r; opath --stream-connect /tmp/s.sock; cat; }'
  run --separate-stderr as_root cred2
  echo "$output"; echo "$stderr"
  [ "${lines[0]}" = connect=OK ]
  [ "${lines[1]}" = "peer uid=1000 gid=1000" ]
}

@test "nsless datagrams: an ordinary user's container sees its own uid (regression guard)" {
  # Passes before and after: the supervisor has the caller's very ids.
  args sh -c "$(dgram_sh a)"
  run --separate-stderr as_user run cred3
  echo "$output"; echo "$stderr"
  [ "${lines[0]}" = send=OK ]
  [ "${lines[1]}" = "uid=65534 gid=65534 pid=other" ]
}
