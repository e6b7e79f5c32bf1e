#!/usr/bin/env bats
# The compiled-seccomp cache: a hit must give exactly the filter a compile
# gives, and nothing but an exact, trustworthy entry may be used.
load ../lib/common

setup_file() { common_setup_file; }
setup() {
  require_root
  common_setup
  cfg ".linux.seccomp = $(jq -c .linux.seccomp "$SANDLOCK_TESTS_DIR/fixtures/samples/podman-config.json") | .process.noNewPrivileges=false"
  cmd sh -c 'grep Seccomp: /proc/self/status; sysc getpid; sysc bpf 0 0 0'
  CACHE=$ROOT/.seccomp-cache
}
teardown() { common_teardown; }

check_filtered() {
  run rt run -b "$BUNDLE" "$(cid $1)"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "Seccomp:	2" ]
  [ "${lines[1]}" = OK ]
  [ "${lines[2]}" = EPERM ]      # podman's profile: bpf -> errno 1
}

@test "seccomp cache: the first run stores, the second uses it, both filter" {
  check_filtered a
  f=$(ls "$CACHE"/*.bpf)
  [ "$(stat -c %a "$f")" = 600 ]
  [ "$(stat -c %a "$CACHE")" = 700 ]
  cp "$f" "$BATS_TEST_TMPDIR/orig"
  check_filtered b
  cmp "$f" "$BATS_TEST_TMPDIR/orig"
}

@test "seccomp cache: a tampered entry is not used (recompiled and rewritten)" {
  check_filtered a
  f=$(ls "$CACHE"/*.bpf)
  cp "$f" "$BATS_TEST_TMPDIR/orig"
  # flip a byte of the stored key: the key no longer matches the profile
  printf 'X' | dd of="$f" bs=1 seek=40 conv=notrunc 2>/dev/null
  run cmp -s "$f" "$BATS_TEST_TMPDIR/orig"
  [ "$status" -eq 1 ]
  check_filtered b
  cmp "$f" "$BATS_TEST_TMPDIR/orig"
  # a truncated entry too
  head -c 100 "$BATS_TEST_TMPDIR/orig" > "$f"
  check_filtered c
  cmp "$f" "$BATS_TEST_TMPDIR/orig"
}

# Rewrites a cache entry in place so that its program allows everything
# (same key, header fixed up): what an attacker would plant.
forge_allow_all() {
  python3 - "$1" <<'PY'
import struct, sys
p = sys.argv[1]
d = open(p, 'rb').read()
klen, n, flags, notify = struct.unpack('<4Q', d[:32])
key = d[32:32 + klen]
allow = struct.pack('<HBBI', 0x06, 0, 0, 0x7fff0000)   # BPF_RET|BPF_K ALLOW
open(p, 'wb').write(struct.pack('<4Q', klen, 1, flags, notify) + key + allow)
PY
}

@test "seccomp cache: an entry others can write, or a symlink, is not trusted" {
  check_filtered a
  f=$(ls "$CACHE"/*.bpf)
  # control: a forged entry that is ours and private IS used (bpf is then
  # not filtered), which shows the checks below are what protects us
  forge_allow_all "$f"
  run rt run -b "$BUNDLE" "$(cid ctl)"
  [ "${lines[2]}" != EPERM ]
  # the same forged entry, writable by others: ignored, recompiled
  forge_allow_all "$f"
  chmod 666 "$f"
  check_filtered b
  [ "$(stat -c %a "$f")" = 600 ]
  # a symlink to a forged entry: ignored
  cp "$f" "$BATS_TEST_TMPDIR/real"; forge_allow_all "$BATS_TEST_TMPDIR/real"
  rm "$f"; ln -s "$BATS_TEST_TMPDIR/real" "$f"
  check_filtered c
  [ ! -L "$f" ]
  # owned by another user: ignored
  forge_allow_all "$f"; chown 65534 "$f"
  check_filtered d
}

@test "seccomp cache: a different profile gets its own entry" {
  check_filtered a
  [ "$(ls "$CACHE" | wc -l)" -eq 1 ]
  # the same profile but bpf answers EACCES instead of EPERM
  cfg '.linux.seccomp.syscalls |= map(if (.names | index("bpf")) then .errnoRet = 13 else . end)'
  run rt run -b "$BUNDLE" "$(cid b)"
  [ "${lines[2]}" = EACCES ]
  [ "$(ls "$CACHE" | wc -l)" -eq 2 ]
}
