#!/bin/bash
# criu-lite checkpoint + restore of a process with 10 / 100 MiB (and, with
# CRIU_BENCH_GB=1, 1 GiB) of touched memory, against a memcpy of the same
# size in the same run.  CRIU itself does not run on this kernel (it fails
# reading the vDSO), so there is no CRIU column.  docs/checkpoint.md.
cd "$(dirname "$0")/../.." || exit 2
[ "$(id -u)" = 0 ] || { echo "skip: needs root (ptrace of any process)"; exit 0; }
make -s sandlock-oci helpers >/dev/null || exit 1
out=build/bench/criu_bench
mkdir -p build/bench
# the objects of today's sources only: a build dir may still hold the
# object of a source since removed (criu-lite/xxh64.c)
objs=$(for f in criu-lite/*.c common/*.c; do echo "build/obj/${f%.c}.o"; done)
# shellcheck disable=SC2086
${CC:-cc} -O2 -g -std=gnu11 -D_GNU_SOURCE -I. -o "$out" tests/bench/criu_bench.c \
  $objs -lcrypto -lyajl || exit 1
sizes="10 100"
[ -n "${CRIU_BENCH_GB:-}" ] && sizes="$sizes 1024"
"$out" build/helpers/cl_counter $sizes
