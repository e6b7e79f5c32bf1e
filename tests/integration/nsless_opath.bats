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

R() { echo "$D/bundle/rootfs"; }

@test "nsless opath: O_PATH of a directory and a file, and what programs do with them" {
  # ADDFD cannot inject an O_PATH file: every open(O_PATH) was EBADF.
  args sh -c 'cd /; opath /etc - type estat fchdir at:passwd ls reopen readlink
              opath /etc/passwd - type estat reopen
              opath /etc openat2,dir type at:group
              opath /etc/passwd rel,nofollow type
              opath /bin/sh - type
              opath /bin/busybox - exec'
  run --separate-stderr as_user run op1
  echo "$output"
  [ "$(grep -c '^open=OK$' <<<"$output")" = 6 ]
  [[ "$output" == *$'type=dir\nestat=dir\nfchdir=/etc\nat:passwd=root:x:0:0:root:/root:/bin/sh\nls=OK\nreopen=OK\nreadlink=ENOENT'* ]]
  [[ "$output" == *$'open=OK\ntype=reg\nestat=reg\nreopen=OK'* ]]
  [[ "$output" == *$'type=dir\nat:group=root:x:0:'* ]]
  [[ "$output" == *$'open=OK\ntype=reg\nopen=OK\ntype=reg\nopen=OK\nexec=exec-ran'* ]]
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
              opath /etc/passwd dir type; opath /proc/self/fd/1 - type'
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
