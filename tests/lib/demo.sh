#!/bin/sh
# The README's first command: runs a busybox container (rootfs built from
# Debian's busybox-static) with the freshly built runtime and shows its output.
set -e
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/sandlock-demo.XXXXXX)
trap 'rm -rf "$dir"' EXIT
r=$dir/bundle/rootfs
mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/etc" "$r/tmp"
cp /bin/busybox "$r/bin/busybox"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' > "$r/etc/passwd"
cd "$dir/bundle"
"$OLDPWD/sandlock-oci" spec
sed -i 's/"terminal": true/"terminal": false/' config.json
sed -i "s@\"sh\"\$@\"sh\", \"-c\", \"echo hello from sandlock-oci; hostname; id; grep -E \x27^(Seccomp|NoNewPrivs|CapEff):\x27 /proc/self/status\"@" config.json
exec "$OLDPWD/sandlock-oci" --root "$dir/state" run "demo-$$"
