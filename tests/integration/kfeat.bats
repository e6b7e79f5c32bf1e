#!/usr/bin/env bats
# The kernel feature probe (runtime/kfeat.c) as `check` and `features`
# print it: facts it learns by trying, not by reading a setting.
load ../lib/common

setup() { common_setup; }
teardown() { common_teardown; }

# check's value for the line starting with "$1: ".
fact() { rt check | sed -n "s/^$1: //p"; }

@test "check: the lines tools already read come first, in their order, each once" {
  run rt check
  [ "$status" -eq 0 ]
  local want="seccomp user notification|user namespaces|time namespace|cgroup layout|device access|overlay|pidfd|openat2|cgroup controllers|overlay userxattr|seccomp filter flags|clone3|mount API|close_range|isolation namespaces|isolation auto"
  local got
  got=$(echo "$output" | sed -n 's/^\([a-zA-Z0-9_ ]*[a-zA-Z0-9]\): .*/\1/p' | grep -v -e '^landlock' -e '^seccomp$' | paste -sd'|')
  echo "got:  $got"; echo "want: $want"
  [ "$got" = "$want" ]
}

@test "check: user namespaces is no where making one fails, though this namespace's sysctl allows it" {
  require_root
  unshare -Ur true 2>/dev/null || skip "user namespaces are not available here"
  # The outer namespace may hold one user namespace, the inner one is it:
  # the inner sysctl says 2147483647, but a third level counts against the
  # outer limit and fails with ENOSPC.
  run unshare -Ur sh -c 'echo 1 > /proc/sys/user/max_user_namespaces && unshare -Ur sh -c "! unshare -Ur true 2>/dev/null && \"\$0\" --root \"\$1\" check" "$0" "$1"' "$SANDLOCK_OCI" "$ROOT"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"user namespaces: no"* ]]
  [ "$(fact 'user namespaces')" = yes ]
}

@test "check as an unprivileged user: what only a mounter can learn is unknown, not no" {
  require_root
  local d
  d=$(mktemp -d /tmp/sandlock-kfeat.XXXXXX)
  chmod 755 "$d"
  # overlay userxattr is asked in a user namespace of the caller's own
  # (runtime/overlay-try.c): the answer a real mount there gives
  local ux=no
  mkdir -p "$d"/o/{l,u,w,m}; chown -R nobody "$d/o"
  su nobody -s /bin/sh -c "unshare -Urm mount -t overlay -o userxattr,lowerdir=$d/o/l,upperdir=$d/o/u,workdir=$d/o/w none $d/o/m" 2>/dev/null && ux=yes
  run su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $d/state check"
  rm -rf "$d"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"overlay userxattr: $ux"* ]]
  [[ "$output" == *"idmapped mounts unknown (needs CAP_SYS_ADMIN)"* ]]
  # root, which can ask, gets an answer
  [[ "$(fact 'overlay userxattr')" == yes || "$(fact 'overlay userxattr')" == no ]]
  [[ "$(fact 'mount API')" != *unknown* ]]
}

@test "check: overlay userxattr agrees with a real overlay mount using it" {
  require_root
  [ "$(fact overlay)" = yes ] || skip "no overlayfs"
  local d ok=no
  d=$(mktemp -d /tmp/sandlock-kfeat.XXXXXX)
  mkdir -p "$d"/{l,u,w,m}
  unshare -m sh -c "mount -t overlay -o userxattr,lowerdir=$d/l,upperdir=$d/u,workdir=$d/w none $d/m" 2>/dev/null && ok=yes
  rm -rf "$d"
  [ "$(fact 'overlay userxattr')" = "$ok" ]
}

@test "features: supportedFlags are the seccomp filter flags check prints" {
  local a b
  a=$(rt features | jq -r '.linux.seccomp.supportedFlags | join(" ")')
  b=$(fact 'seccomp filter flags' | sed 's/^ *//')
  [ -n "$a" ]
  [ "$a" = "$b" ]
}

@test "check in a pure cgroup v2 mount namespace: layout v2, no v1 controllers" {
  require_root
  unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup' 2>/dev/null \
    || skip "cannot mount cgroup2 in a private mount namespace"
  run unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec "$0" --root "$1" check' "$SANDLOCK_OCI" "$ROOT"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"cgroup layout: v2"* ]]
  [[ "$output" == *"cgroup controllers: v1: none; v2: "* ]]
}
