# Shared bats helpers: a busybox root filesystem built at test time from
# Debian's busybox-static, bundles made with `sandlock-oci spec`, a private
# --root per test, and cleanup of every container a test leaves behind.
#
# Use:   load ../lib/common
#        setup() { common_setup; }   teardown() { common_teardown; }

_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SANDLOCK_OCI=${SANDLOCK_OCI:-$_top/sandlock-oci}
SANDLOCK_HELPERS=${SANDLOCK_HELPERS:-$_top/build/helpers}
SANDLOCK_TESTS_DIR=${SANDLOCK_TESTS_DIR:-$_top/tests}
BUSYBOX=${BUSYBOX:-/bin/busybox}

require_root() {
  [ "$(id -u)" = 0 ] || skip "needs root"
}

# Builds a busybox rootfs in $1 (all applets as symlinks, /etc basics).
make_rootfs() {
  local r=$1
  mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,root,home,usr/bin,var,run}
  cp "$BUSYBOX" "$r/bin/busybox"
  local a
  for a in $("$BUSYBOX" --list); do
    [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"
  done
  chmod 1777 "$r/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/sh\nuser:x:1000:1000:user:/home:/bin/sh\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\nuser:x:1000:\ntty:x:5:\n' > "$r/etc/group"
  if [ -d "$SANDLOCK_HELPERS" ]; then
    cp "$SANDLOCK_HELPERS"/* "$r/bin/" 2>/dev/null || true
  fi
}

# Builds a bundle in $1: rootfs plus the default config from `spec`, made
# non-interactive, running "$2..." (default: true).
make_bundle() {
  local b=$1; shift
  mkdir -p "$b"
  if [ -n "${BATS_FILE_TMPDIR:-}" ] && [ -d "$BATS_FILE_TMPDIR/rootfs.cache" ]; then
    cp -a "$BATS_FILE_TMPDIR/rootfs.cache" "$b/rootfs"
  else
    make_rootfs "$b/rootfs"
  fi
  (cd "$b" && "$SANDLOCK_OCI" spec) || return 1
  local args='["true"]'
  [ $# -gt 0 ] && args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
  cfg_in "$b" ".process.terminal=false | .process.args=$args"
}

# Applies a jq program to the config.json of bundle $1.
cfg_in() {
  local b=$1 prog=$2 tmp
  tmp=$(mktemp "$b/.cfg.XXXXXX")
  jq "$prog" "$b/config.json" > "$tmp" && mv "$tmp" "$b/config.json"
}
cfg() { cfg_in "$BUNDLE" "$1"; }
# Sets process.args of $BUNDLE.
cmd() { cfg ".process.args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)"; }

# The runtime with this test's private state root.
rt() { "$SANDLOCK_OCI" --root "$ROOT" "$@"; }

common_setup_file() {
  make_rootfs "$BATS_FILE_TMPDIR/rootfs.cache"
}

common_setup() {
  ROOT=$BATS_TEST_TMPDIR/state
  BUNDLE=$BATS_TEST_TMPDIR/bundle
  mkdir -p "$ROOT"
  make_bundle "$BUNDLE"
}

common_teardown() {
  local id
  if [ -d "$ROOT" ]; then
    for id in $(rt list -q 2>/dev/null); do
      rt delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
}

# Unique container id for this test.
cid() { echo "t${BATS_SUITE_TEST_NUMBER:-0}-$$-${1:-c}"; }
