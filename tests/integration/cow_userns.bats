#!/usr/bin/env bats
# cow layers of a ROOTFUL container that has a user namespace of its own
# (podman --userns=auto, containerd with user namespaces): the runtime
# makes the overlays from the host and the init moves them in (docs/cow.md
# "User namespaces"); what a commit lets such a container plant in a host
# directory (docs/cow.md "Commit": privileges).

load ../lib/common
load ../lib/cow

setup_file() { common_setup_file; }

setup() {
  cow_common_setup
  [ -e /proc/self/ns/user ] || skip "no user namespaces"
  # the container's root is host uid 100000: its rootfs is its own, and it
  # must be able to reach the bundle (bats makes 0700 directories)
  chown -R 100000:100000 "$BUNDLE/rootfs"
  d=$BUNDLE; while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  cfg '.linux.namespaces += [{"type":"user"}]
    | .linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]
    | .linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]'
  HOST=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOST/rd"
  echo old > "$HOST/f"
  echo root > "$HOST/rootfile"
  echo x > "$HOST/rd/x"
  # f and the directory are the container root's; rootfile and rd stay
  # host root's, which the user namespace does not map
  chown 100000:100000 "$HOST" "$HOST/f"
}

teardown() {
  common_teardown
  grep -o " $BATS_TEST_TMPDIR/[^ ]*" /proc/self/mountinfo 2>/dev/null \
    | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  true
}

cow_mount() {
  cfg ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$HOST\",\"options\":[\"bind\",\"cow\"]}]"
}
storage() { echo "$ROOT"/cow-branches/"$1"/[0-9]*; }
no_mounts() { ! grep -q " $BATS_TEST_TMPDIR/" /proc/self/mountinfo; }
# tree (../lib/cow) with each path's owner and group too.
owned_tree() { (cd "$1" && find . -printf '%p %y %m %u %g %s\n' | sort; \
          find . -type f -exec sha256sum {} + | sort); }

# In the container: write a file of its own, add one, and try host root's.
USERNS_WRITE='id -u; echo new > /data/f; echo add > /data/n; stat -c "owner %u:%g" /data/rootfile; (echo w >> /data/rootfile) 2>/dev/null && echo wrote-rootfile || echo rootfile-denied; touch /data/rd/y 2>/dev/null && echo wrote-rd || echo rd-denied; cat /data/rootfile'

@test "userns: a cow mount in a rootful container with a user namespace" {
  cow_mount
  ann on_exit defer
  cmd sh -c "$USERNS_WRITE"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  # host root's files: unmapped (nobody), readable, not writable; never
  # EOVERFLOW (the overlay copies up with the host's rights)
  [[ "$output" == *"owner 65534:65534"* ]]
  [[ "$output" == *rootfile-denied*rd-denied*root* ]]
  [[ "$output" == *"deferred branch"* ]]
  # the storage stays root's and closed: no other host user reads the upper
  s=$(storage "$(cid)")
  [ "$(stat -c '%a %u' "$s")" = "700 0" ]
  [ "$(stat -c '%a %u' "$ROOT/cow-branches")" = "700 0" ]
  j=$(rt changes --format json "$(cid)")
  [ "$(jq -r '.[0].changes[] | select(.path=="f") | .op' <<<"$j")" = modified ]
  [ "$(jq -r '.[0].changes[] | select(.path=="n") | "\(.op) \(.after.uid)"' <<<"$j")" = "added 100000" ]
  [ "$(jq '[.[0].changes[] | select(.path=="rootfile" or (.path|startswith("rd")))] | length' <<<"$j")" = 0 ]
  rt commit "$(cid)"
  [ "$(cat "$HOST/f")" = new ]
  [ "$(stat -c %u "$HOST/n")" = 100000 ]
  [ "$(cat "$HOST/rootfile")" = root ]
  [ ! -e "$HOST/rd/y" ]
  no_mounts
}

@test "userns: a quota'd (max_disk) cow mount in a user namespace: ENOSPC at the write" {
  cow_mount
  ann max_disk 1m
  ann on_exit commit
  cmd sh -c 'echo new > /data/f; dd if=/dev/zero of=/data/big bs=4096 count=1000 2>/dev/null; echo "dd=$?"; rm -f /data/big'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"dd=1"* ]]
  [ "$(cat "$HOST/f")" = new ]
  [ ! -e "$HOST/big" ]
  [ ! -e "$ROOT/cow-branches/$(cid)" ]
  no_mounts
}

@test "userns: an overlay root (rootfs_lower) in a user namespace over a root-owned lower" {
  lower=$BATS_TEST_TMPDIR/closed/lower
  mkdir -p "$BATS_TEST_TMPDIR/closed"
  cp -a "$BATS_FILE_TMPDIR/rootfs.cache" "$lower"
  mkdir "$lower/work" && chown 100000:100000 "$lower/work"
  # the lower is reached by the runtime, not by the container's root
  chmod 700 "$BATS_TEST_TMPDIR/closed"
  before=$(owned_tree "$lower")
  cfg '.root.readonly=false
    | .annotations["run.oci.sandlock.cow.rootfs_lower"]="'"$lower"'"'
  cmd sh -c 'id -u; stat -c "bin %u" /bin/busybox; echo w > /work/w && cat /work/w; echo t > /tmp/t && cat /tmp/t; (echo h > /etc/hosts) 2>/dev/null && echo wrote-etc || echo etc-denied'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = "bin 65534" ]
  [ "${lines[2]}" = w ]
  [ "${lines[3]}" = t ]
  [ "${lines[4]}" = etc-denied ]
  [ "$(owned_tree "$lower")" = "$before" ]
  [ ! -e "$ROOT/$(cid)" ]
  no_mounts
}

@test "userns: bundle --cow image root in a user namespace" {
  command -v python3 >/dev/null || skip "python3 missing"
  local l=$BATS_TEST_TMPDIR/l1 a cb=$BATS_TEST_TMPDIR/cb
  # the mount points: the root-owned image root is not the container's to mkdir in
  mkdir -p "$l"/{bin,etc,tmp,proc,dev,sys}
  chmod 1777 "$l/tmp"
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh cat echo id; do ln -s busybox "$l/bin/$a"; done
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$BATS_TEST_TMPDIR/lay" \
    "$l" --tag t >/dev/null
  rt bundle --cow --cache-dir "$BATS_TEST_TMPDIR/cache" \
    "oci:$BATS_TEST_TMPDIR/lay:t" "$cb" -- sh -c 'id -u; echo t > /tmp/t && cat /tmp/t'
  d=$cb; while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  cfg_in "$cb" '.process.terminal=false
    | .linux.namespaces += [{"type":"user"}]
    | .linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]
    | .linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]'
  run rt run -b "$cb" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = t ]
  [ ! -e "$ROOT/$(cid)" ]
  no_mounts
}

# The attack: set-id bits and a file capability on files of the branch.
PRIV_WRITE='echo x > /data/su; chmod 4755 /data/su; echo y > /data/sg; chmod 2755 /data/sg; echo c > /data/cap; fcap set /data/cap; mkdir /data/dir; chmod 2775 /data/dir; mv /data/f /data/f2; chmod 4755 /data/f2'

# The capabilities the attack needs in its namespace (podman's defaults
# have them all).
all_caps() {
  cfg '.process.capabilities |= map_values(. + ["CAP_SETFCAP","CAP_FSETID","CAP_FOWNER","CAP_CHOWN"] | unique)'
}

# Runs PRIV_WRITE with uid/gid map $1 (jq), defers, checks what the branch
# holds seen from the host ($2: what `fcap get` says there), commits.
priv_attack() {
  cfg ".linux.uidMappings=$1 | .linux.gidMappings=$1"
  all_caps
  cow_mount
  ann on_exit defer
  cmd sh -c "$PRIV_WRITE"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == OK* ]]
  # the attack is in the branch: set-id files, a capability the host honours
  up=$(storage "$(cid)")/upper
  [ "$(stat -c %a "$up/su")" = 4755 ]
  [ "$(stat -c %a "$up/sg")" = 2755 ]
  [ "$("$SANDLOCK_HELPERS/fcap" get "$up/cap")" = "$2" ]
  rt commit "$(cid)"
}

@test "userns: commit strips set-id bits and file capabilities a user-namespace root set (its uid 0 is host root)" {
  # the namespace's root is host uid 0 without host capabilities: on the
  # host its setuid file is setuid-root and its capability a v2 one
  chown -R 0:0 "$BUNDLE/rootfs" "$HOST"
  chown 0:0 "$HOST/f"
  priv_attack '[{"containerID":0,"hostID":0,"size":1},{"containerID":1,"hostID":100001,"size":65535}]' v2
  [ "$(stat -c '%a %u' "$HOST/su")" = "755 0" ]
  [ "$(stat -c '%a %u' "$HOST/sg")" = "755 0" ]
  [ "$(stat -c '%a %u' "$HOST/f2")" = "755 0" ]
  [ "$("$SANDLOCK_HELPERS/fcap" get "$HOST/cap")" = none ]
  [ -z "$(getfattr -m '^security\.' -d "$HOST/cap" 2>/dev/null)" ]
  # directories keep theirs (S_ISGID passes a group on; a chown keeps it)
  [ "$(stat -c %a "$HOST/dir")" = 2775 ]
  [ "$(cat "$HOST/su")" = x ]
}

@test "userns: commit strips set-id bits and file capabilities of a mapped root (0 -> 100000)" {
  priv_attack '[{"containerID":0,"hostID":100000,"size":65536}]' "v3 rootid=100000"
  [ "$(stat -c '%a %u' "$HOST/su")" = "755 100000" ]
  [ "$(stat -c %a "$HOST/sg")" = 755 ]
  [ "$(stat -c %a "$HOST/f2")" = 755 ]
  [ "$("$SANDLOCK_HELPERS/fcap" get "$HOST/cap")" = none ]
  [ "$(stat -c %a "$HOST/dir")" = 2775 ]
}

@test "userns: a quota'd branch (copied at commit) is stripped the same way" {
  ann max_disk 1m
  priv_attack '[{"containerID":0,"hostID":100000,"size":65536}]' "v3 rootid=100000"
  [ "$(stat -c %a "$HOST/su")" = 755 ]
  [ "$(stat -c %a "$HOST/f2")" = 755 ]
  [ "$("$SANDLOCK_HELPERS/fcap" get "$HOST/cap")" = none ]
  no_mounts
}

@test "userns: without a user namespace the commit keeps set-id bits and capabilities (host root wrote them)" {
  cfg 'del(.linux.uidMappings) | del(.linux.gidMappings)
    | .linux.namespaces |= map(select(.type != "user"))'
  chown -R 0:0 "$BUNDLE/rootfs" "$HOST"
  all_caps
  cow_mount
  cmd sh -c "$PRIV_WRITE"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$HOST/su")" = 4755 ]
  [ "$(stat -c %a "$HOST/sg")" = 2755 ]
  [ "$("$SANDLOCK_HELPERS/fcap" get "$HOST/cap")" = v2 ]
}
