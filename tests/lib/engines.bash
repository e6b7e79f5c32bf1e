# Real container engines (podman + conmon, containerd + runc v2 shim,
# dockerd) driving the built sandlock-oci, each on PRIVATE roots, sockets and
# state under one temp dir, stopped by pid and removed by path — never the
# host's defaults (/run/containers, /var/lib/containers, /run/containerd,
# /var/lib/docker, /dev/shm/libpod_lock, /etc/docker).
#
# Use:   load ../lib/common
#        load ../lib/engines
#        setup_file() { podman_setup_file; }  teardown_file() { podman_teardown_file; }
#
# Some paths are hard-coded in the engines whatever their flags say (podman
# 4.3: /run/netns, /run/containers/networks; containerd's shims:
# /run/containerd/s; dockerd: /run/docker), and the runtime's own default
# state root is /run/sandlock-oci.  So every engine runs in a private mount
# namespace, held by one `sleep` process, with a tmpfs over /run: whatever
# lands there disappears with the namespace.  The CLIs and the tests reach
# the daemons through sockets and files in the temp dir, which both
# namespaces see.  Network: podman defaults to --network none (its default
# bridge would add iptables rules to the host); the bridge test makes its own
# network namespace.
#
# The engine temp dir is kept short (/tmp/sle.XXXXXX): unix socket paths are
# limited to 108 bytes.

ENGINE_IMAGE=localhost/sl-busybox:latest

# A busybox root filesystem tarball ($1) built from /bin/busybox (plus the
# static test helpers), the image every engine imports.
engine_rootfs_tar() {
  local out=$1 d
  d=$(mktemp -d "${ENG_DIR:-/tmp}/rootfs.XXXXXX")
  make_rootfs "$d"
  tar -C "$d" -cf "$out" . && rm -rf "$d"
}

engine_dir() {
  ENG_DIR=$(mktemp -d /tmp/sle.XXXXXX)
  export ENG_DIR
}

# Starts the holder of the private mount namespace (pid in $ENG_DIR/ns.pid)
# and mounts a tmpfs over its /run.
engine_mntns() {
  local pid i
  unshare -m --propagation private sleep infinity </dev/null >/dev/null 2>&1 3>&- &
  pid=$!
  echo "$pid" > "$ENG_DIR/ns.pid"
  for i in $(seq 200); do
    [ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] && break
    sleep 0.01
  done
  nsenter -t "$pid" -m mount -t tmpfs -o mode=755 tmpfs /run
}

# Runs "$@" in the engines' mount namespace, from $ENG_DIR/cwd (conmon
# writes an `oom` file into its current directory).
in_ns() {
  nsenter -t "$(cat "$ENG_DIR/ns.pid")" -m --wd="$ENG_DIR/cwd" "$@"
}

# Kills every process of the engines' mount namespace (the daemons, shims,
# conmons and containers), by pid, then the holder.
engine_mntns_stop() {
  local pid
  pid=$(cat "$ENG_DIR/ns.pid" 2>/dev/null) || return 0
  _kill_mntns "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)"
  kill -9 "$pid" 2>/dev/null
  return 0
}

# Kills (SIGKILL) every process whose mount namespace is $1, by pid.
_kill_mntns() {
  local ns=$1 p
  [ -n "$ns" ] || return 0
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  return 0
}

# Unmounts everything mounted at or below $1 (deepest first).
_umount_under() {
  local m
  for m in $(awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# Removes cgroup directories named $1 (relative) in every hierarchy, leaves
# first.  Fails (returns 1) when one is still populated.
_rm_cgroups() {
  local rel=$1 h d rc=0
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
    [ -d "$h$rel" ] || continue
    while read -r d; do rmdir "$d" 2>/dev/null || rc=1; done < <(find "$h$rel" -depth -type d)
  done
  return $rc
}

# Lists cgroup directories named $1 (relative) still present in any hierarchy.
leftover_cgroups() {
  local rel=$1 h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
    [ -d "$h$rel" ] && find "$h$rel" -mindepth 1 -type d
  done
  return 0
}

# ---------------------------------------------------------------- podman

# podman on private roots with sandlock-oci as its runtime ($PODMAN_RUNTIME
# overrides: the benchmark runs the same setup with runc).
pm() {
  CONTAINERS_CONF=$ENG_DIR/containers.conf \
    CONTAINERS_STORAGE_CONF=$ENG_DIR/storage.conf \
    CONTAINERS_REGISTRIES_CONF=$ENG_DIR/registries.conf \
    in_ns podman --root "$ENG_DIR/root" --runroot "$ENG_DIR/runroot" \
      --tmpdir "$ENG_DIR/tmp" --volumepath "$ENG_DIR/volumes" \
      --network-config-dir "$ENG_DIR/networks" \
      --cgroup-manager=cgroupfs --events-backend=file \
      --storage-driver "${ENGINE_STORAGE_DRIVER:-overlay}" \
      --runtime "${PODMAN_RUNTIME:-$SANDLOCK_OCI}" "$@"
}

podman_available() {
  command -v podman >/dev/null && command -v conmon >/dev/null
}

# Writes the private configuration and imports the busybox image.
podman_setup() {
  [ -n "${ENG_DIR:-}" ] || engine_dir
  mkdir -p "$ENG_DIR"/{cwd,root,runroot,tmp,volumes,networks}
  engine_mntns
  # nofile: this root lacks CAP_SYS_RESOURCE and the hard limit is 20000
  # (podman's default 1048576 fails with every runtime).  File locks instead
  # of the shared /dev/shm/libpod_lock.
  cat > "$ENG_DIR/containers.conf" <<EOF
[containers]
netns = "none"
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
log_driver = "k8s-file"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$ENG_DIR/events.log"
lock_type = "file"
num_locks = 256
EOF
  cat > "$ENG_DIR/storage.conf" <<EOF
[storage]
driver = "${ENGINE_STORAGE_DRIVER:-overlay}"
graphroot = "$ENG_DIR/root"
runroot = "$ENG_DIR/runroot"
EOF
  : > "$ENG_DIR/registries.conf"
  engine_rootfs_tar "$ENG_DIR/rootfs.tar"
  pm import -q "$ENG_DIR/rootfs.tar" "$ENGINE_IMAGE" >/dev/null
}

# Removes every container and image, kills what is left in the mount
# namespace (conmon, container processes) by pid, then the private dirs.
podman_teardown() {
  [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
  pm rm -af -t 0 >/dev/null 2>&1 || true
  pm rmi -af >/dev/null 2>&1 || true
  engine_mntns_stop
  _umount_under "$ENG_DIR"
  rm -rf "$ENG_DIR"
}

podman_setup_file() {
  require_root
  podman_available || skip "podman/conmon not installed"
  podman_setup
}
podman_teardown_file() { podman_teardown; }

# An executable wrapper $ENG_DIR/podman around pm(), for `script -qc`,
# xargs and hyperfine.
podman_wrapper() {
  cat > "$ENG_DIR/podman" <<EOW
#!/bin/bash
ENG_DIR=$ENG_DIR SANDLOCK_OCI=${PODMAN_RUNTIME:-$SANDLOCK_OCI}
source "$_top/tests/lib/common.bash"
source "$_top/tests/lib/engines.bash"
pm "\$@"
EOW
  chmod +x "$ENG_DIR/podman"
}

# Skips the current test when the built runtime lacks command $1 (commands
# other sessions are still writing); once it exists the test runs for real.
need_runtime_cmd() {
  "$SANDLOCK_OCI" help "$1" >/dev/null 2>&1 || skip "$1 not implemented yet"
}
