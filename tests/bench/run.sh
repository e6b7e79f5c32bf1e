#!/bin/bash
# `make bench`: every tests/bench/*.sh, each printing its own table.
cd "$(dirname "$0")/../.." || exit 2
rc=0
for b in tests/bench/*.sh; do
  [ "$(basename "$b")" = run.sh ] && continue
  echo "## $(basename "$b" .sh)"
  bash "$b" || { echo "bench $b failed"; rc=1; }
  echo
done
exit $rc
