#!/bin/bash
# Container start: `run` of a busybox bundle executing /bin/true, with
# sandlock-oci, runc and crun side by side in ONE hyperfine run, reported as
# medians and ratios.  crun 1.8.1 refuses hybrid cgroups, so everything runs
# in a private mount namespace with /sys/fs/cgroup/unified unmounted (the
# same conditions for all three).  RUNS=30 by default.
set -e
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 0; }
command -v hyperfine >/dev/null || { echo "skip: hyperfine missing"; exit 0; }
RUNS=${RUNS:-30}
export SANDLOCK_OCI=$PWD/sandlock-oci
dir=$(mktemp -d /tmp/sandlock-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
source tests/lib/common.bash
make_rootfs "$dir/bundle/rootfs"
(cd "$dir/bundle" && "$SANDLOCK_OCI" spec)
jq '.ociVersion="1.0.2" | .process.terminal=false | .process.args=["/bin/true"]' "$dir/bundle/config.json" > "$dir/c" && mv "$dir/c" "$dir/bundle/config.json"
cmds=("$SANDLOCK_OCI --root $dir/s run -b $dir/bundle bench")
names=(sandlock-oci)
if command -v runc >/dev/null; then cmds+=("runc --root $dir/r run -b $dir/bundle bench"); names+=(runc); fi
if command -v crun >/dev/null; then cmds+=("crun --root $dir/c run -b $dir/bundle bench"); names+=(crun); fi
cmds+=("$dir/bundle/rootfs/bin/busybox true"); names+=("fork+exec")
export dir
unshare -m bash -c '
  umount /sys/fs/cgroup/unified 2>/dev/null || true
  hyperfine -N --warmup 3 --runs '"$RUNS"' --export-json "$dir/h.json" "$@" >/dev/null 2>&1
' _ "${cmds[@]}"
python3 - "$dir/h.json" "${names[@]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = sys.argv[2:]
base = r[0]["median"]
print(f"| runtime | median ms | mean ms | stddev ms | vs sandlock-oci |")
print(f"|---|---|---|---|---|")
for n, x in zip(names, r):
    print(f"| {n} | {x['median']*1e3:.2f} | {x['mean']*1e3:.2f} | {x['stddev']*1e3:.2f} | {x['median']/base:.2f}x |")
PY
