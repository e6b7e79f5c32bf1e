#!/usr/bin/env bats
# /proc in the namespace-less view (docs/nsless.md "The view", "Threat
# model"): the mount table and the socket tables the container reads are
# drawn from the view, never the host's; as an ordinary user with user
# namespaces unavailable (tests/lib/nsless.bash) and as root with
# --isolation landlock.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0

setup() {
  nsless_setup
  mkdir -p "$D/data"
  chown nobody "$D/data"
}

teardown() { nsless_teardown; }

# As root, namespace-less, in a private mount namespace of the test.
as_root() {
  unshare -m --propagation private sh -c \
    "cd $D/bundle && $SANDLOCK_OCI --root $D/rootstate $*"
}

MOUNTS_PROBE='cat /proc/self/mountinfo; echo ==; cat /proc/mounts; echo ==
cat /proc/$$/task/$$/mountinfo /proc/self/mounts /proc/self/mountstats | wc -l; echo ==
mount | head -3; df /data >/dev/null && echo DF-OK'

check_mounts() {
  [[ "$output" != *"$D"* ]]             # no host path: rootfs, bind source
  [[ "$output" != *" /sys/fs/cgroup"* ]]  # no host mount
  local info
  info=$(sed -n '1,/^==$/p' <<<"$output" | head -n -1)
  # The root first, its parent outside the table; /proc as proc; the
  # bind at its destination, read-only and noexec as drawn, of the
  # source's own type; the tmpfs stand-in as tmpfs.
  head -1 <<<"$info" | grep -Eq '^1000 999 [0-9]+:[0-9]+ / / rw,nosuid,nodev,relatime - [a-z0-9]+ [a-z0-9]+ rw$'
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw$' <<<"$info"
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /data ro,nosuid,nodev,noexec,relatime - [a-z0-9]+ [a-z0-9]+ r[ow]$' <<<"$info"
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw$' <<<"$info"
  # /dev/null, a bound device node: no nodev, its parent /dev's id.
  devid=$(awk '$5 == "/dev" { print $1 }' <<<"$info")
  grep -Eq "^[0-9]+ $devid [0-9:]+ / /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw$" <<<"$info"
  # mounts: the same table, getmntent's format; mount and df parse it.
  grep -q '^proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0$' <<<"$output"
  grep -q ' /data .* ro,nosuid,nodev,noexec,relatime 0 0$' <<<"$output"
  [[ "$output" == *DF-OK* ]]
}

@test "nsless proc: mountinfo and mounts are the view's table, as nobody" {
  jqc ".mounts += [{destination: \"/data\", type: \"bind\", source: \"$D/data\", options: [\"rbind\", \"ro\", \"noexec\"]}]"
  args sh -c "$MOUNTS_PROBE"
  run --separate-stderr as_user run p1
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  check_mounts
}

@test "nsless proc: mountinfo and mounts are the view's table, as root" {
  jqc ".mounts += [{destination: \"/data\", type: \"bind\", source: \"$D/data\", options: [\"rbind\", \"ro\", \"noexec\"]}]
       | .process.user={uid:0,gid:0}"
  args sh -c "$MOUNTS_PROBE"
  run --separate-stderr as_root run --isolation landlock p2
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  check_mounts
}
