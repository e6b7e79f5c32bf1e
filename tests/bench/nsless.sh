#!/bin/bash
# Namespace-less mode (issue 15, docs/nsless.md): container start with
# --isolation landlock vs namespaces, and a stat + open + close loop of
# /etc/passwd inside the container in each mode vs the host, as ratios.
#   SANDLOCK_OCI=./sandlock-oci SANDLOCK_HELPERS=build/helpers tests/bench/nsless.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export SANDLOCK_OCI=${SANDLOCK_OCI:-$PWD/sandlock-oci}
export SANDLOCK_HELPERS=${SANDLOCK_HELPERS:-$PWD/build/helpers}
RUNS=${RUNS:-30}
ITERS=${ITERS:-20000}
[ "$(id -u)" = 0 ] || { echo "# skip: needs root"; exit 0; }
command -v hyperfine >/dev/null || { echo "# skip: hyperfine not installed"; exit 0; }
"$SANDLOCK_OCI" check | grep -q '^isolation landlock (no namespaces): yes' \
  || { echo "# skip: namespace-less mode unavailable here"; exit 0; }
# shellcheck source=../lib/common.bash
. tests/lib/common.bash
dir=$(mktemp -d /tmp/sandlock-bench-nsless.XXXXXX)
trap 'rm -rf "$dir"' EXIT
make_bundle "$dir/b" true
# The same bundle in both modes: no hostname (nothing to set either way).
cfg_in "$dir/b" 'del(.hostname) | .process.terminal=false'

hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$dir/start.json" \
  "$SANDLOCK_OCI --root $dir/state run --isolation landlock   --bundle $dir/b bench-ll" \
  "$SANDLOCK_OCI --root $dir/state run --isolation namespaces --bundle $dir/b bench-ns" >/dev/null
ll=$(jq '.results[0].median * 1000' "$dir/start.json")
ns=$(jq '.results[1].median * 1000' "$dir/start.json")
printf 'start median, namespace-less:  %.2f ms\n' "$ll"
printf 'start median, namespaced:      %.2f ms\n' "$ns"
printf 'start ratio nsless/namespaced: %.3f\n' "$(echo "$ll / $ns" | bc -l)"

cfg_in "$dir/b" ".process.args=[\"sysc\",\"sloop\",\"$ITERS\",\"/etc/passwd\"]"
in_ll=$("$SANDLOCK_OCI" --root "$dir/state" run --isolation landlock --bundle "$dir/b" loop-ll)
in_ns=$("$SANDLOCK_OCI" --root "$dir/state" run --isolation namespaces --bundle "$dir/b" loop-ns)
host=$("$SANDLOCK_HELPERS/sysc" sloop "$ITERS" /etc/passwd)
printf 'stat+open+close ns/iter, host:           %s\n' "$host"
printf 'stat+open+close ns/iter, namespaced:     %s\n' "$in_ns"
printf 'stat+open+close ns/iter, namespace-less: %s\n' "$in_ll"
printf 'loop ratio nsless/namespaced: %.2f\n' "$(echo "$in_ll / $in_ns" | bc -l)"
printf 'loop ratio namespaced/host:   %.2f\n' "$(echo "$in_ns / $host" | bc -l)"
