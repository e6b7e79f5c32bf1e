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
  disown "$pid" 2>/dev/null || true   # no "Killed" job notice at teardown
  echo "$pid" > "$ENG_DIR/ns.pid"
  for i in $(seq 1000); do
    [ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] && break
    sleep 0.01
  done
  # never mount over the host's /run: refuse unless the namespace is new
  if [ "$(readlink /proc/$pid/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ]; then
    echo "engine_mntns: no private mount namespace after 10 s" >&2
    return 1
  fi
  nsenter -t "$pid" -m mount -t tmpfs -o mode=755 tmpfs /run || return 1
}

# Runs "$@" in the engines' mount namespace, from $ENG_DIR/cwd (conmon
# writes an `oom` file into its current directory).
in_ns() {
  local pid
  pid=$(cat "$ENG_DIR/ns.pid") || return 1
  # the holder gone (or its pid reused): never run an engine in the host's
  # mount namespace.  engine_mntns made sure the holder's is not the host's.
  if [ ! -e "/proc/$pid/ns/mnt" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sleep ]; then
    echo "in_ns: the engines' mount namespace is gone" >&2
    return 1
  fi
  if [ "$(readlink "/proc/$pid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]; then
    (cd "$ENG_DIR/cwd" && "$@")     # already inside (e.g. the bridge test)
  else
    nsenter -t "$pid" -m --wd="$ENG_DIR/cwd" "$@"
  fi
}

# Kills every process of the engines' mount namespace (the daemons, shims,
# conmons and containers), by pid, then the holder.
engine_mntns_stop() {
  local pid
  pid=$(cat "$ENG_DIR/ns.pid" 2>/dev/null) || return 0
  _kill_mntns "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)"
  kill -9 "$pid" 2>/dev/null || true
  return 0
}

# Kills (SIGKILL) every process whose mount namespace is $1, by pid.
_kill_mntns() {
  local ns=$1 p
  [ -n "$ns" ] || return 0
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ]; then
      kill -9 "${p#/proc/}" 2>/dev/null || true
    fi
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
    while read -r d; do rmdir "$d" 2>/dev/null || rc=1; done < <(find "$h$rel" -depth -type d 2>/dev/null)
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
    in_ns podman $(pm_flags) "$@"
}

# podman's global flags for the private setup (paths have no blanks).
pm_flags() {
  echo "--root $ENG_DIR/root --runroot $ENG_DIR/runroot" \
    "--tmpdir $ENG_DIR/tmp --volumepath $ENG_DIR/volumes" \
    "--network-config-dir $ENG_DIR/networks" \
    "--cgroup-manager=cgroupfs --events-backend=file" \
    "--storage-driver ${ENGINE_STORAGE_DRIVER:-overlay}" \
    "--runtime ${PODMAN_RUNTIME:-$SANDLOCK_OCI}"
}

podman_available() {
  command -v podman >/dev/null && command -v conmon >/dev/null
}

# Writes the private configuration and imports the busybox image.
podman_setup() {
  [ -n "${ENG_DIR:-}" ] || engine_dir
  mkdir -p "$ENG_DIR"/{cwd,root,runroot,tmp,volumes,networks}
  engine_mntns || return 1
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

# An OCI image layout tarball ($1) of the busybox rootfs (one uncompressed
# layer), named $ENGINE_IMAGE, for `ctr image import`.
engine_oci_archive() {
  local out=$1 d L C M ls cs ms
  d=$(mktemp -d "$ENG_DIR/oci.XXXXXX")
  mkdir -p "$d/blobs/sha256"
  engine_rootfs_tar "$d/layer.tar"
  L=$(sha256sum "$d/layer.tar" | cut -d' ' -f1); ls=$(stat -c %s "$d/layer.tar")
  mv "$d/layer.tar" "$d/blobs/sha256/$L"
  jq -nc --arg l "sha256:$L" '{architecture:"amd64", os:"linux",
      config:{Env:["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], Cmd:["sh"]},
      rootfs:{type:"layers", diff_ids:[$l]}}' > "$d/c"
  C=$(sha256sum "$d/c" | cut -d' ' -f1); cs=$(stat -c %s "$d/c")
  mv "$d/c" "$d/blobs/sha256/$C"
  jq -nc --arg c "sha256:$C" --argjson cs "$cs" --arg l "sha256:$L" --argjson ls "$ls" '{
      schemaVersion:2, mediaType:"application/vnd.oci.image.manifest.v1+json",
      config:{mediaType:"application/vnd.oci.image.config.v1+json", digest:$c, size:$cs},
      layers:[{mediaType:"application/vnd.oci.image.layer.v1.tar", digest:$l, size:$ls}]}' > "$d/m"
  M=$(sha256sum "$d/m" | cut -d' ' -f1); ms=$(stat -c %s "$d/m")
  mv "$d/m" "$d/blobs/sha256/$M"
  jq -nc --arg m "sha256:$M" --argjson ms "$ms" --arg n "$ENGINE_IMAGE" '{schemaVersion:2,
      manifests:[{mediaType:"application/vnd.oci.image.manifest.v1+json", digest:$m, size:$ms,
        platform:{architecture:"amd64", os:"linux"},
        annotations:{"io.containerd.image.name":$n, "org.opencontainers.image.ref.name":"latest"}}]}' \
    > "$d/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$d/oci-layout"
  tar -C "$d" -cf "$out" oci-layout index.json blobs && rm -rf "$d"
}

# Waits (bounded, $2 tenths of a second) for command "$1" to succeed.
_wait_for() {
  local i
  for i in $(seq "${2:-300}"); do
    eval "$1" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------- containerd

# ctr against the private containerd, namespace $CTR_NS.
cr() { ctr --address "$ENG_DIR/containerd.sock" --namespace "$CTR_NS" "$@"; }
# ctr run/exec options every test passes: the runtime under test and FIFOs
# in the temp dir (ctr's default is /run/containerd/fifo of the host).
CR_RUN_OPTS=()

containerd_setup() {
  [ -n "${ENG_DIR:-}" ] || engine_dir
  mkdir -p "$ENG_DIR"/{cwd,fifo,ctrd-root,ctrd-state,opt,runc}
  engine_mntns || return 1
  export CTR_NS=sltest-$$
  cat > "$ENG_DIR/containerd.toml" <<EOF
version = 2
root = "$ENG_DIR/ctrd-root"
state = "$ENG_DIR/ctrd-state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$ENG_DIR/containerd.sock"
[ttrpc]
  address = "$ENG_DIR/containerd.sock.ttrpc"
[debug]
  address = "$ENG_DIR/debug.sock"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$ENG_DIR/opt"
EOF
  CR_RUN_OPTS=(--runc-binary "$SANDLOCK_OCI" --runc-root "$ENG_DIR/runc"
               --fifo-dir "$ENG_DIR/fifo")
  in_ns containerd --config "$ENG_DIR/containerd.toml" \
    </dev/null >"$ENG_DIR/containerd.log" 2>&1 3>&- &
  echo $! > "$ENG_DIR/containerd.pid"
  if ! _wait_for 'ctr --address "$ENG_DIR/containerd.sock" version' 300; then
    echo "containerd did not start:"; tail -20 "$ENG_DIR/containerd.log"
    return 1
  fi
  engine_oci_archive "$ENG_DIR/image.tar"
  cr image import "$ENG_DIR/image.tar" >/dev/null
}

containerd_teardown() {
  [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
  local t
  for t in $(cr task ls -q 2>/dev/null); do cr task kill -s 9 "$t" >/dev/null 2>&1 || true; done
  for t in $(cr task ls -q 2>/dev/null); do cr task rm -f "$t" >/dev/null 2>&1 || true; done
  for t in $(cr container ls -q 2>/dev/null); do cr container rm "$t" >/dev/null 2>&1 || true; done
  kill "$(cat "$ENG_DIR/containerd.pid" 2>/dev/null)" 2>/dev/null || true
  engine_mntns_stop
  _rm_cgroups "$CTR_NS" || true
  _umount_under "$ENG_DIR"
  rm -rf "$ENG_DIR"
}

containerd_setup_file() {
  require_root
  command -v containerd >/dev/null && command -v ctr >/dev/null \
    || skip "containerd not installed"
  command -v containerd-shim-runc-v2 >/dev/null \
    || skip "containerd-shim-runc-v2 not installed"
  containerd_setup
}
containerd_teardown_file() { containerd_teardown; }

# ---------------------------------------------------------------- docker

# docker CLI against the private dockerd (its client config in the temp dir).
dk() { DOCKER_CONFIG=$ENG_DIR/cli docker -H "unix://$ENG_DIR/docker.sock" "$@"; }

# Starts dockerd; returns 1 with the reason in $ENG_DIR/dockerd.why when it
# cannot start.  No iptables, no bridge, no ip forwarding: containers use
# --network none or host.  Its identity key (key.json) would go to
# /etc/docker whatever --config-file says: daemon.json points it here.
docker_setup() {
  [ -n "${ENG_DIR:-}" ] || engine_dir
  mkdir -p "$ENG_DIR"/{cwd,cli,droot,dexec}
  engine_mntns || { echo "no private mount namespace" > "$ENG_DIR/dockerd.why"; return 1; }
  export DK_CGP=sl-docker-$$
  # the runtimes live in daemon.json (dockerd refuses "runtimes" both there
  # and as --add-runtime); sandlock-privileged is contrib/docker/daemon.json's
  cat > "$ENG_DIR/daemon.json" <<EOF
{"deprecated-key-path": "$ENG_DIR/key.json",
 "runtimes": {"sandlock": {"path": "$SANDLOCK_OCI"},
              "sandlock-privileged": {"path": "$SANDLOCK_OCI",
                "runtimeArgs": ["--sandlock-disable=fs,seccomp"]}}}
EOF
  in_ns dockerd --config-file "$ENG_DIR/daemon.json" \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --bridge=none --userland-proxy=false \
    -H "unix://$ENG_DIR/docker.sock" --data-root "$ENG_DIR/droot" \
    --exec-root "$ENG_DIR/dexec" --pidfile "$ENG_DIR/dockerd.pid" \
    --cgroup-parent "/$DK_CGP" \
    </dev/null >"$ENG_DIR/dockerd.log" 2>&1 3>&- &
  echo $! > "$ENG_DIR/dockerd.ppid"
  if ! _wait_for 'dk version' 600; then
    tail -5 "$ENG_DIR/dockerd.log" > "$ENG_DIR/dockerd.why"
    return 1
  fi
  engine_rootfs_tar "$ENG_DIR/rootfs.tar"
  dk import "$ENG_DIR/rootfs.tar" "$ENGINE_IMAGE" >/dev/null
}

docker_teardown() {
  [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
  local c
  for c in $(dk ps -aq 2>/dev/null); do dk rm -f "$c" >/dev/null 2>&1 || true; done
  kill "$(cat "$ENG_DIR/dockerd.ppid" 2>/dev/null)" 2>/dev/null || true
  engine_mntns_stop
  _rm_cgroups "${DK_CGP:-none}" || true
  _umount_under "$ENG_DIR"
  rm -rf "$ENG_DIR"
}

docker_setup_file() {
  require_root
  command -v dockerd >/dev/null && command -v docker >/dev/null \
    || skip "docker.io not installed"
  if ! docker_setup; then
    DOCKER_SKIP="dockerd cannot start here: $(tr '\n' ' ' < "$ENG_DIR/dockerd.why")"
    export DOCKER_SKIP
  fi
}
docker_teardown_file() { docker_teardown; }

# Prints FROZEN or THAWED for the cgroup of host pid $1 (v1 freezer, else
# v2 cgroup.freeze; on hybrid hosts the v1 freezer is the one that counts).
freezer_state() {
  local cg
  cg=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$1/cgroup")
  if [ -n "$cg" ] && [ -f "/sys/fs/cgroup/freezer$cg/freezer.state" ]; then
    cat "/sys/fs/cgroup/freezer$cg/freezer.state"
    return
  fi
  cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")
  local d=/sys/fs/cgroup
  [ -d /sys/fs/cgroup/unified ] && d=/sys/fs/cgroup/unified
  if [ "$(cat "$d$cg/cgroup.freeze")" = 1 ]; then echo FROZEN; else echo THAWED; fi
}
