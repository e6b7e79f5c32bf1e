#!/bin/bash
# podman + conmon with sandlock-oci vs with runc: the same podman, the same
# private storage and image (tests/lib/engines.bash), one hyperfine run.
#   1. `podman run --rm IMG true`, median of RUNS (default 20) each, ratio;
#   2. 10 concurrent `podman run --rm IMG true`, CONC_RUNS (default 5) each;
#   3. the runtime's own share of a podman run: the same run with the
#      runtime called as `sandlock-oci --debug`, whose "N ms in the runtime"
#      lines (create, start, delete, ...) are summed per container.
set -e
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 0; }
command -v hyperfine >/dev/null || { echo "skip: hyperfine missing"; exit 0; }
command -v podman >/dev/null && command -v conmon >/dev/null \
  || { echo "skip: podman/conmon missing"; exit 0; }
command -v runc >/dev/null || { echo "skip: runc missing"; exit 0; }
RUNS=${RUNS:-20}
CONC_RUNS=${CONC_RUNS:-5}
export SANDLOCK_OCI=$PWD/sandlock-oci
export SANDLOCK_HELPERS=$PWD/build/helpers
source tests/lib/common.bash
source tests/lib/engines.bash
skip() { echo "skip: $*"; exit 0; }
podman_setup
trap 'podman_teardown' EXIT
export CONTAINERS_CONF=$ENG_DIR/containers.conf
export CONTAINERS_STORAGE_CONF=$ENG_DIR/storage.conf
export CONTAINERS_REGISTRIES_CONF=$ENG_DIR/registries.conf
nspid=$(cat "$ENG_DIR/ns.pid")
runc_bin=$(command -v runc)

# One podman command line (hyperfine -N: no shell in the measurement).
pmcmd() { # runtime, podman args...
  local rt=$1; shift
  echo "nsenter -t $nspid -m --wd=$ENG_DIR/cwd podman $(PODMAN_RUNTIME=$rt pm_flags) $*"
}
# 10 concurrent runs, through a small script (xargs needs a shell-free argv).
conc() { # runtime
  local f=$ENG_DIR/conc-$(basename "$1").sh
  printf '#!/bin/sh\nseq 10 | xargs -P 10 -I{} %s\n' \
    "$(pmcmd "$1" run --rm "$ENGINE_IMAGE" true)" > "$f"
  chmod +x "$f"
  echo "$f"
}

# warm up the page cache and the storage (first overlay mounts)
for rt in "$SANDLOCK_OCI" "$runc_bin"; do
  $(pmcmd "$rt" run --rm "$ENGINE_IMAGE" true)
done

hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$ENG_DIR/single.json" \
  -n sandlock-oci "$(pmcmd "$SANDLOCK_OCI" run --rm "$ENGINE_IMAGE" true)" \
  -n runc "$(pmcmd "$runc_bin" run --rm "$ENGINE_IMAGE" true)" >/dev/null 2>&1
hyperfine -N --warmup 1 --runs "$CONC_RUNS" --export-json "$ENG_DIR/conc.json" \
  -n sandlock-oci "$(conc "$SANDLOCK_OCI")" \
  -n runc "$(conc "$runc_bin")" >/dev/null 2>&1

# the runtime's own share: --debug lines on the runtime's stderr, into a log
cat > "$ENG_DIR/sandlock-debug" <<EOF
#!/bin/sh
exec $SANDLOCK_OCI --debug "\$@" 2>>$ENG_DIR/debug.log
EOF
chmod +x "$ENG_DIR/sandlock-debug"
for i in $(seq "$RUNS"); do
  $(pmcmd "$ENG_DIR/sandlock-debug" run --rm "$ENGINE_IMAGE" true)
done

python3 - "$ENG_DIR/single.json" "$ENG_DIR/conc.json" "$ENG_DIR/debug.log" "$RUNS" <<'PY'
import json, re, sys
single = json.load(open(sys.argv[1]))["results"]
conc = json.load(open(sys.argv[2]))["results"]
runs = int(sys.argv[4])
print("| podman run --rm IMG true | median ms | mean ms | stddev ms | vs sandlock-oci |")
print("|---|---|---|---|---|")
base = single[0]["median"]
for x in single:
    print(f"| {x['command']} | {x['median']*1e3:.1f} | {x['mean']*1e3:.1f} | {x['stddev']*1e3:.1f} | {x['median']/base:.2f}x |")
print()
print("| 10 concurrent podman runs | median ms | mean ms | stddev ms | vs sandlock-oci |")
print("|---|---|---|---|---|")
base = conc[0]["median"]
for x in conc:
    print(f"| {x['command']} | {x['median']*1e3:.1f} | {x['mean']*1e3:.1f} | {x['stddev']*1e3:.1f} | {x['median']/base:.2f}x |")
per = {}
for line in open(sys.argv[3]):
    m = re.search(r"debug: (\w+): ([0-9.]+) ms in the runtime", line)
    if m:
        per.setdefault(m.group(1), []).append(float(m.group(2)))
total = sum(sum(v) for v in per.values()) / runs
print()
print(f"sandlock-oci's own time per podman run (--debug, {runs} runs): {total:.1f} ms "
      f"of a {single[0]['median']*1e3:.1f} ms median ({100*total/(single[0]['median']*1e3):.0f}%); "
      + ", ".join(f"{k} {sum(v)/runs:.1f} ms x{len(v)/runs:g}" for k, v in sorted(per.items())))
ratio = single[1]["median"] / single[0]["median"]
print(f"ratio runc/sandlock-oci (single): {ratio:.2f} — target: >= 1.00 (not slower than podman+runc)")
PY
