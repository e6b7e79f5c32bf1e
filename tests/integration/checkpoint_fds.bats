#!/usr/bin/env bats
# checkpoint/restore of file state beyond regular files and pipes
# (docs/checkpoint.md): eventfd, timerfd, signalfd, epoll, listening
# sockets, named FIFOs, pipe status flags, the container's tmpfs mounts.
# tests/helpers/cl_fds.c holds the objects and reports their state on
# SIGUSR1; each test fails on a criu-lite that refuses or drops the kind.

load ../lib/common
load ../lib/checkpoint

setup_file() { common_setup_file; }
setup() { checkpoint_setup; }
teardown() { common_teardown; }

pid_of() { rt state "$1" | jq -r .pid; }

# Runs the bundle as $1, waits for "ready", checkpoints it (extra flags
# after the id) and restores it as $1-r, its stdout in $OUT2.
cycle() { # id [checkpoint flags...]
  local id=$1; shift
  start "$id"
  wait_for "$OUT" "^ready"
  rt checkpoint "$@" --image-path "$IMG" "$id"
  restore_as "$id-r" "$OUT2"
}

# SIGUSR1 to the restored container's init, then its report ($N: which).
report() { # id n
  kill -USR1 "$(pid_of "$1-r")"
  local i
  for i in $(seq 50); do
    [ "$(grep -c '^report done' "$OUT2")" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

@test "restore: an eventfd keeps its count, a signalfd still receives, an epoll set still reports" {
  cmd /bin/cl_fds -e -s -E
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  kill -USR2 "$(pid_of "$id-r")"
  report "$id" 1
  cat "$OUT2"
  grep -q '^epoll n=1 data=e1e1$' "$OUT2"
  grep -q '^eventfd count=41 nonblock=1$' "$OUT2"
  grep -q '^signalfd sig=12$' "$OUT2"
}

@test "restore: a timerfd keeps firing at its interval" {
  cmd /bin/cl_fds -t
  id=$(cid)
  run cycle "$id"
  [ "$status" -eq 0 ]
  report "$id" 1
  sleep 0.2
  report "$id" 2
  cat "$OUT2"
  # the second read: expirations that came after the restore
  [ "$(grep '^timerfd' "$OUT2" | sed -n 2p | sed 's/.*ticks=\([0-9]*\).*/\1/')" -ge 3 ]
  grep -q 'interval_ms=20$' "$OUT2"
}

@test "restore: a nonblocking pipe is still nonblocking, its bytes still there" {
  cmd /bin/cl_fds -p
  id=$(cid)
  run cycle "$id"
  [ "$status" -eq 0 ]
  report "$id" 1
  cat "$OUT2"
  # the second description of the read end stays blocking
  grep -q '^pipe nonblock=1/1/0 data=pipe-bytes$' "$OUT2"
}

@test "restore: a named FIFO comes back with its bytes and flags" {
  # on the bundle's own rootfs (the tmpfs case is below)
  cfg '.root.readonly=false'
  cmd /bin/cl_fds -f /tmp/fifo
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  report "$id" 1
  cat "$OUT2"
  grep -q '^fifo nonblock=1/0 data=fifo-bytes rdwr=1$' "$OUT2"
}

@test "restore: listening TCP, TCP6 and unix sockets accept connections made after restore" {
  cfg '.root.readonly=false'
  cmd /bin/cl_fds -l tcp:7001 -l tcp6:7002 -l unix:/tmp/l.sock -l unix:@cl-fds-abs
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(pid_of "$id-r")
  for spec in tcp:7001 tcp6:7002 unix:@cl-fds-abs; do
    run nsenter -t "$pid" -n "$SANDLOCK_HELPERS/cl_fds" -C "$spec"
    echo "$output"
    [ "$output" = "hello $spec" ]
  done
  run "$SANDLOCK_HELPERS/cl_fds" -C "unix:/proc/$pid/root/tmp/l.sock"
  [ "$output" = "hello unix:/tmp/l.sock" ]
  [ "$(stat -c %a "/proc/$pid/root/tmp/l.sock")" = 666 ]
  # listen(fd, 8): the backlog came back (ss: Send-Q of a listener)
  nsenter -t "$pid" -n ss -ltn | awk '$4 ~ /:700[12]$/ { print $3 }' > "$BATS_TEST_TMPDIR/q"
  nsenter -t "$pid" -n ss -lx | awk '/cl-fds-abs|l.sock/ { print $4 }' >> "$BATS_TEST_TMPDIR/q"
  cat "$BATS_TEST_TMPDIR/q"
  [ "$(sort -u "$BATS_TEST_TMPDIR/q")" = 8 ]
  [ "$(wc -l < "$BATS_TEST_TMPDIR/q")" -eq 4 ]
  report "$id" 1
  cat "$OUT2"
  for spec in tcp:7001 tcp6:7002 unix:/tmp/l.sock unix:@cl-fds-abs; do
    grep -q "^accepted $spec\$" "$OUT2"
    grep -q "^listen $spec nonblock=1 reuseaddr=1\$" "$OUT2"
  done
}

@test "restore: an eventfd, epoll and listener shared by two processes come back shared, made once" {
  cmd /bin/cl_fds -e -E -l tcp:7004 -F
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(pid_of "$id-r")
  kid=$(cut -d' ' -f1 "/proc/$pid/task/$pid/children")
  [ -n "$kid" ]
  # one eventfd (the kernel numbers each one), one socket, one epoll
  [ -n "$(grep eventfd-id /proc/$pid/fdinfo/10)" ]
  [ "$(grep eventfd-id /proc/$pid/fdinfo/10)" = "$(grep eventfd-id /proc/$kid/fdinfo/10)" ]
  [ "$(stat -L -c %i /proc/$pid/fd/18)" = "$(stat -L -c %i /proc/$kid/fd/18)" ]
  [ "$(grep '^ino' /proc/$pid/fdinfo/13)" = "$(grep '^ino' /proc/$kid/fdinfo/13)" ]
  grep -q '^tfd: *10 ' /proc/$kid/fdinfo/13
  run nsenter -t "$pid" -n "$SANDLOCK_HELPERS/cl_fds" -C tcp:7004
  [ "$output" = "hello tcp:7004" ]
  report "$id" 1
  grep -q '^epoll n=1 data=e1e1$' "$OUT2"
  grep -q '^eventfd count=41 nonblock=1$' "$OUT2"
}

@test "checkpoint: a connected socket still fails by name; --skip-unsupported lists it" {
  # the epoll watches the connected socket too: restored without it
  cmd /bin/cl_fds -P -e -E -l tcp:7003
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^ready"
  run rt checkpoint --leave-running --image-path "$IMG" "$id"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"fd 30 is a socket that is not listening (connected or unbound)"* ]]
  [ ! -e "$IMG/tree.img" ]
  run rt checkpoint --skip-unsupported --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  restore_as "$id-r" "$OUT2"
  grep -q "not restored: fd 30 (socket that is not listening" "$OUT2"
  grep -q "not restored: fd 31 (socket that is not listening" "$OUT2"
  # the listener beside them is back
  run nsenter -t "$(pid_of "$id-r")" -n "$SANDLOCK_HELPERS/cl_fds" -C tcp:7003
  [ "$output" = "hello tcp:7003" ]
  report "$id" 1
  grep -q '^epoll n=1 data=e1e1$' "$OUT2"
}

# A tmpfs on /tmp, as engines mount one.
tmpfs_tmp() {
  cfg '.mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","mode=1777"]}]'
}

@test "restore: the contents of the container's tmpfs mounts (/tmp, /dev/shm) come back" {
  tmpfs_tmp
  cmd /bin/sh -c 'echo tmp-data > /tmp/a; mkdir -p /tmp/d/e; echo nested > /tmp/d/e/f; chmod 640 /tmp/d/e/f; ln -s /etc/passwd /tmp/link; mkfifo /tmp/p; echo shm-data > /dev/shm/s; exec /bin/cl_fds'
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(pid_of "$id-r")
  [ "$(cat /proc/$pid/root/tmp/a)" = tmp-data ]
  [ "$(cat /proc/$pid/root/tmp/d/e/f)" = nested ]
  [ "$(stat -c %a /proc/$pid/root/tmp/d/e/f)" = 640 ]
  [ "$(readlink /proc/$pid/root/tmp/link)" = /etc/passwd ]
  [ -p /proc/$pid/root/tmp/p ]
  [ "$(cat /proc/$pid/root/dev/shm/s)" = shm-data ]
  # the tmpfs of the new container, not the bundle's rootfs
  [ ! -e "$BUNDLE/rootfs/tmp/a" ]
  # the image file is 0600 like the others
  [ "$(stat -c %a "$IMG/tmpfs.img")" = 600 ]
}

@test "restore: a FIFO held open in a tmpfs /tmp comes back there with its bytes" {
  tmpfs_tmp
  cmd /bin/cl_fds -f /tmp/fifo
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -p "/proc/$(pid_of "$id-r")/root/tmp/fifo" ]
  report "$id" 1
  cat "$OUT2"
  grep -q '^fifo nonblock=1/0 data=fifo-bytes rdwr=1$' "$OUT2"
}

# Rewrites $IMG/tmpfs.img with one mount, /tmp, holding the entries given
# as TYPE:NAME[:DATA] (d dir, f file, l symlink), its checksum made to
# match: what a hostile image can do.
forge_tmpfs() {
  python3 - "$IMG/tmpfs.img" "$@" <<'PY'
import hashlib, struct, sys
path, specs = sys.argv[1], sys.argv[2:]
version = struct.unpack_from('<I', open(path, 'rb').read(12), 8)[0]  # the good image's
types = {'d': 1, 'f': 2, 'l': 3}
ents = b''
for s in specs:
    t, name, *data = s.split(':', 2)
    data = (data[0] if data else '').encode()
    name = name.encode()
    e = struct.pack('<IIIIqIIQ', types[t], 0o755, 0, 0, 0, 0, len(name), len(data)) + name + data
    ents += e + b'\0' * (-len(e) % 8)
hdr_len, table_len = 56, 64 * 272
table = struct.pack('<256sQQ', b'/tmp', hdr_len + table_len, len(ents)).ljust(table_len, b'\0')
body = table + ents
total = hdr_len + len(body)
hdr = struct.pack('<8sIIQ32s', b'CLTMPFS\0', version, 1, total, hashlib.sha256(body).digest())
open(path, 'wb').write(hdr + body)
PY
}

@test "restore: a hostile tmpfs.img cannot write outside the tmpfs, and nothing is left" {
  tmpfs_tmp
  cfg '.root.readonly=false'
  cmd /bin/cl_fds
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^ready"
  rt checkpoint --image-path "$IMG" "$id"
  cp -a "$IMG" "$BATS_TEST_TMPDIR/good"
  try() { # expected message, entries...
    local want=$1; shift
    rm -rf "$IMG"; cp -a "$BATS_TEST_TMPDIR/good" "$IMG"
    forge_tmpfs "$@"
    run restore_as "$id-r" "$BATS_TEST_TMPDIR/o"
    cat "$BATS_TEST_TMPDIR/o"
    [ "$status" -ne 0 ]
    grep -qF "$want" "$BATS_TEST_TMPDIR/o"
    run rt state "$id-r"
    [ "$status" -ne 0 ]
  }
  try "not a plain relative path" "f:../escape:x"
  try "not a plain relative path" "f:/escape:x"
  try "not a plain relative path" "f:d/../../escape:x"
  try "its parent is not a directory of this tmpfs" "l:up:/" "f:up/escape:x"
  try "its parent is not a directory of this tmpfs" "l:up:.." "d:up/escape"
  [ ! -e "$BUNDLE/rootfs/escape" ]
  [ ! -e /escape ]
  # a file where a directory's entries go: refused, not followed
  try "its parent is not a directory of this tmpfs" "f:plain:x" "f:plain/inner:y"
  # the checksum still guards the file: a flipped byte
  rm -rf "$IMG"; cp -a "$BATS_TEST_TMPDIR/good" "$IMG"
  printf 'X' | dd of="$IMG/tmpfs.img" bs=1 seek=100 conv=notrunc 2>/dev/null
  run restore_as "$id-r" "$BATS_TEST_TMPDIR/o"
  [ "$status" -ne 0 ]
  grep -q "tmpfs.img: checksum mismatch (corrupted)" "$BATS_TEST_TMPDIR/o"
  # and the good image still restores
  rm -rf "$IMG"; cp -a "$BATS_TEST_TMPDIR/good" "$IMG"
  restore_as "$id-r" "$OUT2"
}

@test "restore: an image that saved a tmpfs where the new container has none is refused by name" {
  tmpfs_tmp
  cmd /bin/sh -c 'echo x > /tmp/a; exec /bin/cl_fds'
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^ready"
  rt checkpoint --image-path "$IMG" "$id"
  cfg 'del(.mounts[] | select(.destination == "/tmp"))'
  run restore_as "$id-r" "$BATS_TEST_TMPDIR/o"
  cat "$BATS_TEST_TMPDIR/o"
  [ "$status" -ne 0 ]
  grep -qF 'tmpfs at `/tmp`: not a tmpfs in the restored container' "$BATS_TEST_TMPDIR/o"
  run rt state "$id-r"
  [ "$status" -ne 0 ]
}

# Rewrites the first record of section fdx of $IMG/1/core.img: field at
# byte $1 of the record (0 fd, 4 kind, 8 len, 16 the payload's first
# word) set to the signed 32-bit $2, every checksum made to match.
forge_fdx() { # offset value
  python3 - "$IMG/1/core.img" "$1" "$2" <<'PY'
import hashlib, struct, sys
path, at, val = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b = bytearray(open(path, 'rb').read())
sect0, desc, nsect = 144, 56, struct.unpack_from('<I', b, 12)[0]
for i in range(nsect):
    d = sect0 + i * desc
    typ, _, off, ln = struct.unpack_from('<IIQQ', b, d)
    if typ == 8:  # fdx
        struct.pack_into('<i', b, off + at, val)
        b[d + 24:d + 56] = hashlib.sha256(b[off:off + ln]).digest()
hs = sect0 + nsect * desc
b[hs:hs + 32] = hashlib.sha256(b[:hs]).digest()
open(path, 'wb').write(b)
PY
}

@test "restore: a forged fdx record (bad clock id, fd number, size) is refused by name, nothing left" {
  cmd /bin/cl_fds -t
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^ready"
  rt checkpoint --image-path "$IMG" "$id"
  cp -a "$IMG" "$BATS_TEST_TMPDIR/good"
  for c in "16 99 fd 11 has a bad clock id" \
           "0 -5 has a bad fd number -5" \
           "8 100000 overruns the section" \
           "4 3 fd 11 has an unknown kind"; do
    set -- $c
    rm -rf "$IMG"; cp -a "$BATS_TEST_TMPDIR/good" "$IMG"
    forge_fdx "$1" "$2"
    shift 2
    run restore_as "$id-r" "$BATS_TEST_TMPDIR/o"
    cat "$BATS_TEST_TMPDIR/o"
    [ "$status" -ne 0 ]
    grep -qF "section fdx: " "$BATS_TEST_TMPDIR/o"
    grep -qF "$*" "$BATS_TEST_TMPDIR/o"
    run rt state "$id-r"
    [ "$status" -ne 0 ]
  done
}

@test "restore: a listener whose address is taken fails by name, and nothing is left" {
  # the host's network: the original, left running, still holds the port
  cfg 'del(.linux.namespaces[] | select(.type == "network"))'
  cmd /bin/cl_fds -l tcp:7021
  id=$(cid)
  start "$id"
  wait_for "$OUT" "^ready"
  rt checkpoint --leave-running --image-path "$IMG" "$id"
  run restore_as "$id-r" "$BATS_TEST_TMPDIR/o"
  cat "$BATS_TEST_TMPDIR/o"
  [ "$status" -ne 0 ]
  grep -q "fd 18: socket: bind it to its address: Address already in use" "$BATS_TEST_TMPDIR/o"
  run rt state "$id-r"
  [ "$status" -ne 0 ]
  [ "$(rt state "$id" | jq -r .status)" = running ]
}

@test "restore: a container running as a user gets its tmpfs files back, owned as they were" {
  tmpfs_tmp
  cfg '.process.user = {"uid": 1000, "gid": 1000}'
  cmd /bin/sh -c 'mkdir /tmp/u; echo mine > /tmp/u/f; exec /bin/cl_fds'
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(pid_of "$id-r")
  [ "$(cat /proc/$pid/root/tmp/u/f)" = mine ]
  [ "$(stat -c %u:%g /proc/$pid/root/tmp/u/f)" = 1000:1000 ]
  [ "$(stat -c %u /proc/$pid/root/tmp/u)" = 1000 ]
}
