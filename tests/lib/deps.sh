#!/bin/sh
# Installs the Debian packages the build (and, without "build", the tests)
# need, when run as root and something is missing.  Never edits /etc.
# Installed without recommends, so every package a test needs is named
# here: catatonit (podman run --init), criu (podman refuses to checkpoint
# before it asks the runtime when criu is missing), netavark and
# aardvark-dns (podman's bridge network); libxxhash0 is dlopened by
# checkpoint/restore (docs/checkpoint.md), so it is a run-time package.  A test whose package is still
# missing (not root, no package source) skips and names it.
set -e
build="libseccomp-dev libyajl-dev libarchive-dev libcurl4-openssl-dev libssl-dev libcap-dev libzstd-dev libisal-dev zlib1g-dev pkg-config gcc make busybox-static"
tests="bats curl zstd python3 bats-assert bats-support jq runc crun hyperfine clang libclang-rt-14-dev skopeo umoci docker-registry podman conmon catatonit criu netavark aardvark-dns containerd docker.io uidmap util-linux iproute2 openssl libxxhash0"
want=$build
[ "$1" = build ] || want="$build $tests"
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing Debian packages:$missing (run as root to install them)" >&2
  exit 0
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends $missing >/dev/null
