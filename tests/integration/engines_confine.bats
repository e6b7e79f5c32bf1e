#!/usr/bin/env bats
# How engines express confinement choices (issue 16, items 15-19): global
# flags, the runtime's config file, list separators podman cannot mangle,
# IPC scopes inside a pod, ioctls on bind-mounted devices, and the bounded
# seccomp program cache.
load ../lib/common

setup_file() { common_setup_file; }
setup() {
  require_root
  [ -x "$SANDLOCK_HELPERS/sysc" ] || skip "build/helpers/sysc not built"
  common_setup
  CONF=$BATS_TEST_TMPDIR/etc
  mkdir -p "$CONF"
  chmod 755 "$CONF"
  # never the host's /etc/sandlock-oci
  export SANDLOCK_OCI_CONFIG_DIR=$CONF
}
teardown() {
  local p
  for p in ${BG_PIDS:-}; do kill "$p" 2>/dev/null || true; done
  common_teardown
}

ann() { cfg ".annotations[\"run.oci.sandlock.$1\"]=\"$2\""; }
nid() { cid "$RANDOM$RANDOM"; }
# Runs the bundle with the runtime's global options "$@"; the container's
# Seccomp: line in $output.
seccomp_mode() {
  cmd sh -c 'grep ^Seccomp: /proc/self/status'
  run "$SANDLOCK_OCI" --root "$ROOT" "$@" run -b "$BUNDLE" "$(nid)"
}
# A root-owned 0644 config file.
conf() { printf '%s\n' "$2" > "$CONF/$1"; chmod 644 "$CONF/$1"; }
no_leftovers() { [ -z "$(rt list -q)" ] && [ -z "$(ls "$ROOT")" ]; }

# ---- item 15: global flags and the config file -------------------------

@test "engines: --sandlock-disable=seccomp drops the default blocklist (control: Seccomp 2 without)" {
  seccomp_mode
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	2" ]
  seccomp_mode --sandlock-disable=seccomp
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
  # a linux.seccomp profile is the engine's explicit choice: always applied
  cfg '.linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["bpf"],"action":"SCMP_ACT_ERRNO"}]}'
  seccomp_mode --sandlock-disable=seccomp
  [ "$output" = "Seccomp:	2" ]
}

@test "engines: the config file sets defaults (SANDLOCK_OCI_CONFIG_DIR, --sandlock-config)" {
  conf config.json '{"disable": ["seccomp"]}'
  seccomp_mode
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
  rm "$CONF/config.json"
  seccomp_mode
  [ "$output" = "Seccomp:	2" ]
  conf other.json '{"disable": ["seccomp"], "degrade": ["fs-truncate"]}'
  seccomp_mode --sandlock-config "$CONF/other.json"
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
}

@test "engines: precedence annotation > flag > config file > built-in" {
  conf config.json '{"disable": ["seccomp"]}'
  # the flag replaces the file's disable list
  seccomp_mode --sandlock-disable=scope-signal
  [ "$output" = "Seccomp:	2" ]
  seccomp_mode --sandlock-degrade=fs-truncate
  [ "$output" = "Seccomp:	0" ]
  # the container's annotation replaces both
  ann disable scope-signal
  seccomp_mode --sandlock-disable=seccomp
  [ "$output" = "Seccomp:	2" ]
  ann disable seccomp
  seccomp_mode --sandlock-disable=scope-signal
  [ "$output" = "Seccomp:	0" ]
  # a protection degraded by the file, disabled by the flag: the flag wins
  conf config.json '{"degrade": ["scope-signal"]}'
  cfg 'del(.annotations)'
  seccomp_mode --sandlock-disable=scope-signal
  [ "$status" -eq 0 ]
}

@test "engines: a malformed or untrusted config file is an error naming the file and key; nothing is created" {
  conf config.json '{"disabled": ["fs"]}'
  seccomp_mode
  [ "$status" -ne 0 ]
  [[ "$output" == *"$CONF/config.json"*'unknown key "disabled"'* ]]
  conf config.json '{"disable": "fs"}'
  seccomp_mode
  [[ "$output" == *"$CONF/config.json"*"disable: expected an array"* ]]
  conf config.json '{"disable": ["fs", 3]}'
  seccomp_mode
  [[ "$output" == *"disable[1]: expected a string"* ]]
  conf config.json '{"disable": ["bogus"]}'
  seccomp_mode
  [[ "$output" == *"$CONF/config.json"*'disable: unknown protection "bogus"'* ]]
  conf config.json '{"disable": ['
  seccomp_mode
  [[ "$output" == *"$CONF/config.json"*"not valid JSON"* ]]
  conf config.json '{"disable": ["seccomp"]}'
  chmod 666 "$CONF/config.json"
  seccomp_mode
  [ "$status" -ne 0 ]
  [[ "$output" == *"$CONF/config.json"*"writable only by its owner"* ]]
  rm "$CONF/config.json"
  seccomp_mode --sandlock-config "$CONF/missing.json"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$CONF/missing.json"* ]]
  seccomp_mode --sandlock-disable=fs,bogus
  [ "$status" -ne 0 ]
  [[ "$output" == *'--sandlock-disable: unknown protection "bogus"'* ]]
  no_leftovers
}

@test "engines: installed as sandlock-oci-NAME, the runtime reads NAME.json (the privileged entry)" {
  ln -s "$SANDLOCK_OCI" "$BATS_TEST_TMPDIR/sandlock-oci-privileged"
  cmd sh -c 'grep ^Seccomp: /proc/self/status'
  run "$BATS_TEST_TMPDIR/sandlock-oci-privileged" --root "$ROOT" run -b "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$CONF/privileged.json"* ]]
  cp "$SANDLOCK_TESTS_DIR/../contrib/sandlock-oci/privileged.json" "$CONF/"
  chmod 644 "$CONF/privileged.json"
  run "$BATS_TEST_TMPDIR/sandlock-oci-privileged" --root "$ROOT" run -b "$BUNDLE" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
}

@test "engines: a privileged container mounts with --sandlock-disable=fs; without it the warning names the option" {
  cfg '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
  cmd sh -c 'mount -t tmpfs none /tmp && echo MOUNTED'
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"warning:"*"run.oci.sandlock.disable=fs"*"--sandlock-disable=fs"* ]]
  [[ "$output" != *MOUNTED* ]]
  run "$SANDLOCK_OCI" --root "$ROOT" --sandlock-disable=fs run -b "$BUNDLE" "$(nid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *MOUNTED* ]]
  [[ "$output" != *warning* ]]
}

# ---- item 18: a list separator podman's --annotation keeps ---------------

@test "engines: list annotations accept ':' as separator (podman splits --annotation at commas)" {
  ann disable "scope-signal:seccomp"
  seccomp_mode
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
  ann net_allow_bind "8080:9000-9001"
  cmd sh -c 'sysc bind 8080; sysc bind 9001; sysc bind 8081'
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'OK\nOK\nEACCES')" ]
}

# ---- item 16: IPC scopes inside a pod -------------------------------------

# Starts container A (sleep + an abstract listener) and sets up $BUNDLE2 to
# join A's pid and network namespaces by path, as a pod's second container.
pod_pair() {
  # one connection per listen: listen again for the next client
  cmd sh -c 'while :; do sysc ulisten @sl-pod-'"$$"' >/dev/null; done & exec sleep 300'
  A=$(nid)
  rt run -d -b "$BUNDLE" "$A" >/dev/null 2>&1
  local pid
  pid=$(rt state "$A" | jq -r .pid)
  BUNDLE2=$BATS_TEST_TMPDIR/bundle2
  make_bundle "$BUNDLE2"
  cfg_in "$BUNDLE2" ".linux.namespaces |= map(if .type == \"pid\" then .path = \"/proc/$pid/ns/pid\" elif .type == \"network\" then .path = \"/proc/$pid/ns/net\" else . end)"
  cfg_in "$BUNDLE2" '.process.args=["sh","-c","for i in $(seq 100); do grep -q @sl-pod-'"$$"' /proc/net/unix && break; sleep 0.05; done; sysc kill 1 0; sysc uconnect @sl-pod-'"$$"'"]'
}

@test "engines: two containers of a pod (shared pid+net namespaces) signal each other and reach abstract sockets" {
  pod_pair
  run rt run -b "$BUNDLE2" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'OK\nOK')" ]
  # the annotation keeps the per-container scopes (the old behaviour)
  cfg_in "$BUNDLE2" '.annotations["run.oci.sandlock.scope"]="container"'
  run rt run -b "$BUNDLE2" "$(nid)"
  [ "$output" = "$(printf 'EPERM\nEPERM')" ]
  cfg_in "$BUNDLE2" '.annotations["run.oci.sandlock.scope"]="bogus"'
  run rt run -b "$BUNDLE2" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.oci.sandlock.scope: "bogus"'* ]]
}

# "The host" here is the test's own namespaces: the runtime compares a
# joined namespace with init's (/proc/1/ns, unreadable in some sandboxes)
# and with its own.
@test "engines: joining the host's namespaces by path keeps the scopes (create and exec)" {
  local name="@sl-host-$$-$RANDOM"
  ( "$SANDLOCK_HELPERS/sysc" ulisten "$name" > "$BATS_TEST_TMPDIR/l1" ) & BG_PIDS="$!"
  sleep 600 & local victim=$!
  BG_PIDS="$BG_PIDS $victim"
  until grep -q READY "$BATS_TEST_TMPDIR/l1" 2>/dev/null; do sleep 0.05; done
  cfg '.linux.namespaces |= map(if .type == "pid" then .path = "/proc/'"$$"'/ns/pid" elif .type == "network" then .path = "/proc/'"$$"'/ns/net" else . end)'
  cmd sh -c "sysc kill $victim 0; sysc uconnect $name"
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'EPERM\nEPERM')" ]
  # an exec session in such a container is scoped too
  cmd sleep 300
  local id; id=$(nid)
  rt run -d -b "$BUNDLE" "$id" >/dev/null 2>&1
  run rt exec "$id" sh -c "sysc kill $victim 0; sysc uconnect $name"
  [ "$output" = "$(printf 'EPERM\nEPERM')" ]
  kill -0 "$victim"
}

# ---- item 17: ioctls on a device bind-mounted with -v ----------------------

# Not usable: the device cgroup refuses the open (EPERM) or Landlock the
# ioctl (EACCES).
denied() { [ "$output" = EACCES ] || [ "$output" = EPERM ]; }

@test "engines: a bind-mounted /dev/kvm the device rules allow gets its ioctls (control: not allowed -> denied)" {
  [ -c /dev/kvm ] || skip "no /dev/kvm on this host"
  local maj min
  maj=$((16#$(stat -c %t /dev/kvm))); min=$((16#$(stat -c %T /dev/kvm)))
  cfg '.mounts += [{"destination":"/dev/kvm","type":"bind","source":"/dev/kvm","options":["bind","rw"]}]'
  # KVM_CHECK_EXTENSION (of an unknown extension: 0)
  cmd sysc ioctl /dev/kvm 0xAE03
  cfg '.linux.resources.devices = [{"allow":false,"access":"rwm"},{"allow":true,"type":"c","major":1,"minor":3,"access":"rwm"}]'
  run rt run -b "$BUNDLE" "$(nid)"
  denied
  # only mknod allowed ("c *:* m", podman's default): still no ioctls
  cfg ".linux.resources.devices += [{\"allow\":true,\"type\":\"c\",\"access\":\"m\"}]"
  run rt run -b "$BUNDLE" "$(nid)"
  denied
  cfg ".linux.resources.devices += [{\"allow\":true,\"type\":\"c\",\"major\":$maj,\"minor\":$min,\"access\":\"rw\"}]"
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = OK ]
  # a later deny rule takes it back
  cfg ".linux.resources.devices += [{\"allow\":false,\"type\":\"c\",\"major\":$maj,\"access\":\"rwm\"}]"
  run rt run -b "$BUNDLE" "$(nid)"
  denied
}

# ---- item 19: the seccomp program cache is bounded --------------------------

@test "engines: the seccomp cache keeps at most 64 entries, evicting the least recently used" {
  local cache=$ROOT/.seccomp-cache i
  mkdir -m 700 "$cache"
  for i in $(seq 100 189); do
    printf 'x' > "$cache/$(printf '%016x' "$i").bpf"
    touch -d "@$((1700000000 + i))" "$cache/$(printf '%016x' "$i").bpf"
  done
  printf 'x' > "$cache/.stale.bpf.1.tmp"; touch -d '1 hour ago' "$cache/.stale.bpf.1.tmp"
  printf 'x' > "$cache/.fresh.bpf.2.tmp"
  chmod 600 "$cache"/*.bpf "$cache"/.*.tmp
  cfg '.linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["bpf"],"action":"SCMP_ACT_ERRNO"}]}'
  cmd sysc bpf 0 0 0
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$output" = EPERM ]
  [ "$(ls "$cache"/*.bpf | wc -l)" -eq 64 ]
  local mine
  mine=$(ls -t "$cache"/*.bpf | head -1)
  # the oldest fakes went first; the newest ones stay
  [ ! -e "$cache/$(printf '%016x' 100).bpf" ]
  [ -e "$cache/$(printf '%016x' 189).bpf" ]
  [ ! -e "$cache/.stale.bpf.1.tmp" ]
  [ -e "$cache/.fresh.bpf.2.tmp" ]
  # a hit marks the entry used: made the oldest, it survives the next prune
  touch -d '@1600000000' "$mine"
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$output" = EPERM ]
  [ "$(stat -c %Y "$mine")" -gt 1700000000 ]
  cfg '.linux.seccomp.syscalls[0].names=["bpf","kexec_load"]'
  run rt run -b "$BUNDLE" "$(nid)"
  [ "$output" = EPERM ]
  [ -e "$mine" ]
  [ "$(ls "$cache"/*.bpf | wc -l)" -eq 64 ]
}

# ---- item 15: a container cannot choose its own confinement ---------------

@test "engines: an image label run.oci.sandlock.disable does not reach the bundle (the image cannot unconfine itself)" {
  local l=$BATS_TEST_TMPDIR/layer lay=$BATS_TEST_TMPDIR/lay a
  mkdir -p "$l/bin" "$l/etc"
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh grep; do ln -s busybox "$l/bin/$a"; done
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$lay" "$l" --tag evil \
    --cmd '["sh","-c","grep ^Seccomp: /proc/self/status"]' \
    --label run.oci.sandlock.disable=seccomp,fs --label org.example=kept >/dev/null
  run rt bundle --cache-dir "$BATS_TEST_TMPDIR/cache" "oci:$lay:evil" "$BATS_TEST_TMPDIR/b2"
  [ "$status" -eq 0 ]
  run jq -c '.annotations | with_entries(select(.key | startswith("run.oci.sandlock") or . == "org.example"))' "$BATS_TEST_TMPDIR/b2/config.json"
  [ "$output" = '{"org.example":"kept"}' ]
  run rt run -b "$BATS_TEST_TMPDIR/b2" "$(nid)"
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	2" ]
}

@test "engines: \"lockAnnotations\": true refuses annotations that widen confinement, keeps narrowing ones" {
  conf config.json '{"lockAnnotations": true}'
  ann disable seccomp
  seccomp_mode
  [ "$status" -ne 0 ]
  [[ "$output" == *"annotation run.oci.sandlock.disable: refused, config file \`$CONF/config.json\` only lets annotations narrow"* ]]
  no_leftovers
  cfg 'del(.annotations)'
  ann fs_writable /etc
  seccomp_mode
  [ "$status" -ne 0 ]
  [[ "$output" == *"annotation run.oci.sandlock.fs_writable: refused"* ]]
  # narrowing annotations still work, and the host's own choice applies
  cfg 'del(.annotations)'
  ann fs_readable /tmp
  seccomp_mode --sandlock-disable=seccomp
  [ "$status" -eq 0 ]
  [ "$output" = "Seccomp:	0" ]
  conf config.json '{"lockAnnotations": "yes"}'
  seccomp_mode
  [[ "$output" == *"lockAnnotations: expected true or false"* ]]
}
