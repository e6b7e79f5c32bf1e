#!/usr/bin/env bats
# Rootless: an unprivileged user runs a container in a user namespace made
# from `spec --rootless`, with no cgroup delegation.
load ../lib/common

setup() {
  require_root
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null || skip "unprivileged user namespaces are not available"
  D=$(mktemp -d /tmp/sandlock-rootless.XXXXXX)
  chmod 755 "$D"
  make_rootfs "$D/bundle/rootfs"
  chown -R nobody "$D"
}
teardown() {
  su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $D/state list -q" 2>/dev/null | while read -r id; do
    su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $D/state delete -f $id"
  done
  rm -rf "$D"
}

as_nobody() { su nobody -s /bin/sh -c "cd $D/bundle && $*"; }

@test "rootless: spec --rootless maps the caller to root and runs" {
  as_nobody "$SANDLOCK_OCI spec --rootless"
  jq '.process.terminal=false | .process.args=["sh","-c","id -u; cat /proc/self/uid_map; hostname"]' "$D/bundle/config.json" > "$D/c"
  chown nobody "$D/c"; mv "$D/c" "$D/bundle/config.json"
  run as_nobody "$SANDLOCK_OCI --root $D/state run r1"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "${lines[1]}" == *"0"*"65534"*"1"* ]]
  [ "${lines[2]}" = sandlock ]
}

@test "rootless: resource limits without a delegated cgroup are refused clearly" {
  as_nobody "$SANDLOCK_OCI spec --rootless"
  jq '.process.terminal=false | .process.args=["true"] | .linux.resources={"pids":{"limit":10}}' "$D/bundle/config.json" > "$D/c"
  chown nobody "$D/c"; mv "$D/c" "$D/bundle/config.json"
  run as_nobody "$SANDLOCK_OCI --root $D/state run r2"
  [ "$status" -eq 1 ]
  [[ "$output" == *"rootless without delegation"* ]]
  [ -z "$(ls "$D/state" 2>/dev/null)" ]
}

@test "rootless: the default --root is under XDG_RUNTIME_DIR" {
  mkdir -p "$D/xdg"; chown nobody "$D/xdg"
  as_nobody "$SANDLOCK_OCI spec --rootless"
  jq '.process.terminal=false | .process.args=["sleep","10"]' "$D/bundle/config.json" > "$D/c"
  chown nobody "$D/c"; mv "$D/c" "$D/bundle/config.json"
  as_nobody "XDG_RUNTIME_DIR=$D/xdg $SANDLOCK_OCI run -d r3"
  [ -f "$D/xdg/sandlock-oci/r3/state.json" ]
  as_nobody "XDG_RUNTIME_DIR=$D/xdg $SANDLOCK_OCI delete -f r3"
  [ ! -d "$D/xdg/sandlock-oci/r3" ]
}
