#!/bin/bash
# Namespace-less mode (issue 15, docs/nsless.md): container start with
# --isolation landlock vs namespaces, and a stat + open + close loop of
# /etc/passwd inside the container in each mode vs the host, as ratios.
#   SANDLOCK_OCI=./sandlock-oci SANDLOCK_HELPERS=build/helpers tests/bench/nsless.sh
# BEFORE=<another sandlock-oci> adds that build's namespace-less numbers,
# measured in the same alternation (an A/B of two builds).
set -euo pipefail
cd "$(dirname "$0")/../.."
export SANDLOCK_OCI=${SANDLOCK_OCI:-$PWD/sandlock-oci}
export SANDLOCK_HELPERS=${SANDLOCK_HELPERS:-$PWD/build/helpers}
RUNS=${RUNS:-30}
ITERS=${ITERS:-20000}
LOOPS=${LOOPS:-5}
[ "$(id -u)" = 0 ] || { echo "# skip: needs root"; exit 0; }
command -v bc >/dev/null || { echo "# skip: bc not installed"; exit 0; }
"$SANDLOCK_OCI" check | grep -q '^isolation landlock (no namespaces): yes' \
  || { echo "# skip: namespace-less mode unavailable here"; exit 0; }
# shellcheck source=../lib/common.bash
. tests/lib/common.bash
dir=$(mktemp -d /tmp/sandlock-bench-nsless.XXXXXX)
# STATE: the state root (default under the temp dir).  The runtime's own
# default, /run/sandlock-oci, is a tmpfs on most hosts; the view's private
# directories live there.
state=${STATE:-$dir/state}
trap 'rm -rf "$dir"' EXIT
make_bundle "$dir/b" true
# The same bundle in both modes: no hostname (nothing to set either way).
cfg_in "$dir/b" 'del(.hostname) | .process.terminal=false'

# The two modes alternate run by run (on a shared 2-core machine the load
# drifts: timing all of one mode, then all of the other, as hyperfine does,
# measured the drift as much as the modes), each run timed with bash's
# clock (no extra process); medians.
ms() { # one run of "$@", in ms
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  echo "($EPOCHREALTIME - $t0) * 1000" | bc -l
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
run_ll() { "$SANDLOCK_OCI" --root "$state" run --isolation landlock --bundle "$dir/b" "bench-ll$1"; }
run_ns() { "$SANDLOCK_OCI" --root "$state" run --isolation namespaces --bundle "$dir/b" "bench-ns$1"; }
run_before() { "$BEFORE" --root "$state" run --isolation landlock --bundle "$dir/b" "bench-bf$1"; }
for i in 1 2 3; do run_ll w >/dev/null; run_ns w >/dev/null; done
: > "$dir/ll" && : > "$dir/ns" && : > "$dir/bf"
for i in $(seq "$RUNS"); do
  ms run_ll "$i" >> "$dir/ll"
  ms run_ns "$i" >> "$dir/ns"
  [ -z "${BEFORE:-}" ] || ms run_before "$i" >> "$dir/bf"
done
ll=$(median < "$dir/ll")
ns=$(median < "$dir/ns")
printf 'start median, namespace-less:  %.2f ms\n' "$ll"
printf 'start median, namespaced:      %.2f ms\n' "$ns"
printf 'start ratio nsless/namespaced: %.3f\n' "$(echo "$ll / $ns" | bc -l)"
printf 'start minimum, namespace-less / namespaced: %.2f / %.2f ms\n' \
  "$(sort -n "$dir/ll" | head -1)" "$(sort -n "$dir/ns" | head -1)"
if [ -n "${BEFORE:-}" ]; then
  bf=$(median < "$dir/bf")
  printf 'start median, namespace-less, BEFORE: %.2f ms (ratio %.3f)\n' "$bf" "$(echo "$bf / $ns" | bc -l)"
fi

# The loop: LOOPS alternating runs per mode (and on the host), medians.
cfg_in "$dir/b" ".process.args=[\"sysc\",\"sloop\",\"$ITERS\",\"/etc/passwd\"]"
: > "$dir/lll" && : > "$dir/lns" && : > "$dir/lh" && : > "$dir/lbf"
for i in $(seq "$LOOPS"); do
  [ -z "${BEFORE:-}" ] || "$BEFORE" --root "$state" run --isolation landlock --bundle "$dir/b" "loop-bf$i" >> "$dir/lbf"
  "$SANDLOCK_OCI" --root "$state" run --isolation landlock --bundle "$dir/b" "loop-ll$i" >> "$dir/lll"
  "$SANDLOCK_OCI" --root "$state" run --isolation namespaces --bundle "$dir/b" "loop-ns$i" >> "$dir/lns"
  "$SANDLOCK_HELPERS/sysc" sloop "$ITERS" /etc/passwd >> "$dir/lh"
done
in_ll=$(median < "$dir/lll")
in_ns=$(median < "$dir/lns")
host=$(median < "$dir/lh")
printf 'stat+open+close ns/iter, host:           %s\n' "$host"
printf 'stat+open+close ns/iter, namespaced:     %s\n' "$in_ns"
printf 'stat+open+close ns/iter, namespace-less: %s\n' "$in_ll"
printf 'loop ratio nsless/namespaced: %.2f\n' "$(echo "$in_ll / $in_ns" | bc -l)"
printf 'loop ratio namespaced/host:   %.2f\n' "$(echo "$in_ns / $host" | bc -l)"
if [ -n "${BEFORE:-}" ]; then
  in_bf=$(median < "$dir/lbf")
  printf 'stat+open+close ns/iter, namespace-less, BEFORE: %s (ratio %.2f)\n' "$in_bf" "$(echo "$in_bf / $in_ns" | bc -l)"
fi
