#!/usr/bin/env bats
# The namespace-less supervisor's fast paths (docs/nsless.md "Cost" and
# "Resolution"): what they must not change — every answer the same as the
# walk's, and as the namespaced mode's — and what they do change, counted
# in system calls, never timed.
load ../lib/common
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup_file() { common_setup_file; }

setup() {
  require_root
  "$SANDLOCK_OCI" check | grep -q '^isolation landlock (no namespaces): yes' \
    || skip "namespace-less mode unavailable here"
  common_setup
  cfg 'del(.hostname)'
}

teardown() { common_teardown; }

# The container's pid and its supervisor's, from state.json.
spid() { jq -r .supervisor_pid "$ROOT/$1/state.json"; }
ipid() { rt state "$1" | jq -r .pid; }

# True while pid $1 runs (a zombie does not).
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# Waits (bounded) until "$@" holds.
until_true() {
  local i
  for i in $(seq 500); do "$@" && return 0; sleep 0.02; done
  return 1
}

@test "nsless-perf: check says whether the listener takes SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP" {
  run rt check
  [ "$status" -eq 0 ]
  local v
  v=$(sed -n 's/^seccomp notify sync wakeup: //p' <<<"$output")
  echo "got: $v"
  IFS=. read -r maj min _ <<<"$(uname -r)"
  if [ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "${min%%[!0-9]*}" -ge 6 ]; }; then
    [ "$v" = yes ]
  else
    [ "$v" = no ]
  fi
}

@test "nsless-perf: the same answers in both modes where the fast path applies and where it must not" {
  local r=$BUNDLE/rootfs vol=$BATS_TEST_TMPDIR/vol
  mkdir -p "$vol/sub" "$r/mnt/vol" "$r/usr/lib/deep"
  echo vol-file > "$vol/file"
  echo lib-file > "$r/usr/lib/deep/f"
  # Under the mount point, hidden by the mount in both modes.
  echo hidden > "$r/mnt/vol/hidden"
  ln -s usr/lib "$r/lib2"                 # a relative directory symlink
  ln -s /etc/passwd "$r/etc/pw"           # an absolute file symlink
  ln -s /mnt/vol "$r/tovol"               # a symlink into a mount
  ln -s /nonexistent "$r/dangling"
  cfg ".mounts += [{\"destination\":\"/mnt/vol\",\"type\":\"bind\",\"source\":\"$vol\",\"options\":[\"rbind\"]}]"
  cat > "$r/probe.sh" <<'EOF'
t() { o=$("$@" 2>&1); rc=$?; printf '%s: %s rc=%s\n' "$*" "$(printf '%s' "$o" | tr '\n' ' ' | sed 's/^[a-z]*: //')" "$rc"; }
t cat /mnt/vol/file
t cat /mnt/vol/hidden
t cat /tovol/file
t stat -c %F /tovol
t stat -L -c %F /tovol
t ls /lib2
t ls /lib2/
t cat /lib2/deep/f
t cat /etc/pw
t cat /etc//passwd
t cat /etc/passwd/
t cat /etc/passwd/..
t cat /etc/./passwd
t cat /usr/lib/../lib/deep/f
t test -e /dangling
t test -L /dangling
t test -d /mnt/vol/sub
t stat -c %s /mnt/vol/sub/nothing
cd /usr/lib && t cat deep/f && t cat ../lib/deep/f && t ls
cd /mnt && t ls vol
t sh -c 'echo new > /mnt/vol/sub/made && cat /mnt/vol/sub/made'
t sh -c 'set -C; echo again > /mnt/vol/sub/made'
t sh -c 'ln -s made /mnt/vol/sub/ml && cat /mnt/vol/sub/ml'
t sh -c 'set -C; echo x > /mnt/vol/sub/ml'
EOF
  cfg '.process.args=["sh","/probe.sh"]'
  run rt run --isolation namespaces --bundle "$BUNDLE" "$(cid ns)"
  local ns=$output
  rm -f "$vol/sub/made" "$vol/sub/ml"
  run --separate-stderr rt run --isolation landlock --bundle "$BUNDLE" "$(cid ll)"
  local ll=$output
  echo "$ll"
  diff <(echo "$ns") <(echo "$ll")
  # and the answers are the right ones, not merely the same
  [[ "$ll" == *"cat /mnt/vol/hidden: "*"No such file"*"rc=1"* ]]
  [[ "$ll" == *"ls /lib2: deep rc=0"* ]]
  [[ "$ll" == *"test -e /dangling:  rc=1"* ]]
  [[ "$ll" == *"cat /tovol/file: vol-file rc=0"* ]]
  [[ "$ll" == *"cat /etc/passwd/: "*"Not a directory"* ]]
}

@test "nsless-perf: a masked path and a read-only path, whatever the spelling" {
  local r=$BUNDLE/rootfs
  mkdir -p "$r/ro/d" "$r/secret"
  echo s > "$r/secret/s"
  ln -s /secret "$r/tosecret"
  cfg '.linux.maskedPaths=["/secret"] | .linux.readonlyPaths=["/ro"]'
  cfg '.process.args=["sh","-c","for p in /secret/s /tosecret/s /secret; do cat $p >/dev/null 2>&1; echo \"$p $?\"; stat $p >/dev/null 2>&1; echo \"stat $p $?\"; done; echo x > /ro/d/f; echo \"ro $?\"; mkdir /ro/d/n; echo \"mkdir $?\"; echo ok"]'
  run --separate-stderr rt run --isolation landlock --bundle "$BUNDLE" "$(cid)"
  echo "$output"
  [[ "$output" == *"/secret/s 1"* ]]
  [[ "$output" == *"stat /secret/s 1"* ]]
  [[ "$output" == *"/tosecret/s 1"* ]]
  [[ "$output" == *"stat /tosecret/s 1"* ]]
  [[ "$output" == *"stat /secret 1"* ]]
  [[ "$output$stderr" == *"Read-only file system"* ]]   # the shell's, on stderr
  [[ "$output" == *"ro 1"* && "$output" == *"mkdir 1"* ]]
  [ ! -e "$r/ro/d/f" ]
  [ ! -e "$r/ro/d/n" ]
}

@test "nsless-perf: the supervisor's system calls per stat+open (no poll, one lookup each)" {
  command -v strace >/dev/null || skip "strace not installed"
  local id n=400
  id=$(cid)
  cfg ".process.args=[\"sysc\",\"sloop\",\"$n\",\"/etc/passwd\"]"
  rt create --isolation landlock --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1
  local sup
  sup=$(spid "$id")
  [ "$sup" -gt 0 ]
  strace -c -o "$BATS_TEST_TMPDIR/sc" -p "$sup" 2>/dev/null &
  local tr=$!
  until_true grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$sup/status"
  rt start "$id"
  wait "$tr"
  cat "$BATS_TEST_TMPDIR/sc"
  calls() { awk -v s="$1" '$NF == s { print $4 }' "$BATS_TEST_TMPDIR/sc"; }
  local poll openat2 fstatat close
  poll=$(calls poll); openat2=$(calls openat2); fstatat=$(calls newfstatat)
  close=$(calls close)
  echo "per iteration (stat + open): openat2 $((${openat2:-0} / n)) newfstatat $((${fstatat:-0} / n)) close $((${close:-0} / n)) poll $((${poll:-0} / n))"
  # Before: a poll per notification, and the walk's openat2 + newfstatat
  # per component (6 openat2, 5 newfstatat, 6 close per iteration).  Now
  # the parent /etc is pinned once (per VR_DCACHE_TTL_MS): the open's own
  # openat2 and close, the stat's newfstatat.
  if rt check | grep -q '^seccomp notify sync wakeup: yes'; then
    [ "${poll:-0}" -lt 20 ]
  fi
  [ "${openat2:-0}" -le $((n + 100)) ]
  [ "${fstatat:-0}" -le $((n + 100)) ]
  [ "${close:-0}" -le $((n + 100)) ]
  # The open is made O_NONBLOCK (a FIFO must not wait on the main loop:
  # nsless_fifo.bats) and the flag cleared after: one fcntl per open.
  local fcntl
  fcntl=$(calls fcntl)
  echo "fcntl per iteration: $((${fcntl:-0} / n))"
  [ "${fcntl:-0}" -le $((n + 100)) ]
}

@test "nsless-perf: the watcher's death kills the container; a stray SIGCHLD does not" {
  local id sup w init
  id=$(cid)
  cfg '.process.args=["sh","-c","while :; do cat /etc/passwd >/dev/null || exit 3; done"]'
  rt create --isolation landlock --bundle "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1
  rt start "$id"
  sup=$(spid "$id"); init=$(ipid "$id")
  w=$(pgrep -P "$sup")
  [ -n "$w" ] && alive "$init"
  # Signals that are not the watcher's death: the loop goes on serving.
  for _ in $(seq 20); do kill -CHLD "$sup"; done
  rt state "$id"; cat "$BATS_TEST_TMPDIR/out"
  [ "$(rt state "$id" | jq -r .status)" = running ]
  alive "$sup" && alive "$w" && alive "$init"
  kill -9 "$w"
  until_true eval "! alive $init"
  ! alive "$init"
  until_true eval "! alive $sup"
}

@test "nsless-perf: a create builds the view once (the supervisor keeps the runtime's pinned fds)" {
  command -v strace >/dev/null || skip "strace not installed"
  cfg '.process.args=["cat","/etc/passwd"]'
  run strace -f -e trace=mkdir,mkdirat -o "$BATS_TEST_TMPDIR/tr" \
    "$SANDLOCK_OCI" --root "$ROOT" run --isolation landlock --bundle "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"root:x:0:0"* ]]
  grep 'vroot/exec"' "$BATS_TEST_TMPDIR/tr"
  # Before: the supervisor made the directories and pinned every entry
  # again in its own process.
  [ "$(grep -c 'vroot/exec"' "$BATS_TEST_TMPDIR/tr")" -eq 1 ]
}

@test "nsless-perf: pinned directories follow renames, removals and symlinks made in the container" {
  # Each name is looked up hot (its parent pinned), then changed by the
  # container through the supervisor, then looked up again: the same
  # answers as the namespaced mode's.
  cat > "$BUNDLE/rootfs/probe.sh" <<'EOF2'
t() { o=$("$@" 2>&1); rc=$?; printf '%s: %s rc=%s\n' "$*" "$(printf '%s' "$o" | tr '\n' ' ' | sed 's/^[a-z]*: //')" "$rc"; }
mkdir -p /tmp/a/b && echo one > /tmp/a/b/f
t cat /tmp/a/b/f; t cat /tmp/a/b/f
mv /tmp/a /tmp/c
t cat /tmp/a/b/f; t cat /tmp/c/b/f
mkdir -p /tmp/a/b && echo two > /tmp/a/b/f
t cat /tmp/a/b/f; t cat /tmp/c/b/f
rm -r /tmp/a/b && t cat /tmp/a/b/f && t stat -c %F /tmp/a/b
mkdir /tmp/a/b && t cat /tmp/a/b/f
rmdir /tmp/a/b && ln -s /tmp/c/b /tmp/a/b && t cat /tmp/a/b/f
rm /tmp/a/b && mkdir /tmp/a/b && echo three > /tmp/a/b/f && t cat /tmp/a/b/f
mv /tmp/c/b /tmp/a/b2 && t cat /tmp/a/b2/f && t cat /tmp/c/b/f
rm -r /tmp/a /tmp/c
EOF2
  cfg '.root.readonly=false | .process.args=["sh","/probe.sh"]'
  run rt run --isolation namespaces --bundle "$BUNDLE" "$(cid ns)"
  local ns=$output
  run --separate-stderr rt run --isolation landlock --bundle "$BUNDLE" "$(cid ll)"
  echo "$output"
  diff <(echo "$ns") <(echo "$output")
  [[ "$output" == *"cat /tmp/a/b/f: two rc=0"* ]]
  [[ "$output" == *"cat /tmp/a/b/f: three rc=0"* ]]
  [[ "$output" == *"cat /tmp/a/b2/f: one rc=0"* ]]
}

@test "nsless-perf: a directory renamed on the host is seen by its new name soon, not never" {
  local vol=$BATS_TEST_TMPDIR/vol id
  mkdir -p "$vol/cur" && echo old > "$vol/cur/f"
  cfg ".mounts += [{\"destination\":\"/mnt/vol\",\"type\":\"bind\",\"source\":\"$vol\",\"options\":[\"rbind\"]}]"
  # A hot loop keeps /mnt/vol/cur pinned; it ends once the name leads to
  # the new directory (the test's timeout is the bound).
  cfg '.process.args=["sh","-c","echo go > /mnt/vol/started; while [ \"$(cat /mnt/vol/cur/f)\" != new ]; do :; done; echo seen"]'
  id=$(cid)
  rt create --isolation landlock --bundle "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1
  rt start "$id"
  until_true test -e "$vol/started"
  mv "$vol/cur" "$vol/old" && mkdir "$vol/cur" && echo new > "$vol/cur/f"
  until_true grep -q seen "$BATS_TEST_TMPDIR/out"
  cat "$BATS_TEST_TMPDIR/out"
}

@test "nsless-perf: mkdir of a name that exists is EEXIST, even / or a mount point (mkdir -p works)" {
  cfg '.root.readonly=false | .process.args=["sh","-c","mkdir -p /tmp/x/y && echo p=$?; mkdir /proc 2>&1; mkdir -p /proc/self && echo q=$?"]'
  run rt run --isolation namespaces --bundle "$BUNDLE" "$(cid ns)"
  local ns=$output
  rm -rf "$BUNDLE/rootfs/tmp/x"
  run --separate-stderr rt run --isolation landlock --bundle "$BUNDLE" "$(cid ll)"
  echo "$output"
  diff <(echo "$ns") <(echo "$output")
  # Before: "mkdir: can't create directory '/': Device or resource busy".
  [[ "$output" == *"p=0"* ]]
  [[ "$output" == *"can't create directory '/proc': File exists"* ]]
  [[ "$output" == *"q=0"* ]]
}
