#!/bin/bash
# `make bench`: runs every tests/bench/*.sh (except this file) in turn.
cd "$(dirname "$0")" || exit 2
rc=0
for b in ./*.sh; do
  [ "$(basename "$b")" = run.sh ] && continue
  echo "## $(basename "$b" .sh)"
  bash "$b" || rc=1
done
exit $rc
